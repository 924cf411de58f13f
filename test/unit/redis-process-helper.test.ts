/**
 * The tests' redis-server launcher must never take another process's server for the one it started:
 * a port found free can be taken before redis-server binds it (other test files run alongside).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rawCommand, startRedis } from '../helpers/redis-process.js';

test('a redis-server started on a port another one holds is not taken for that one: the start fails, naming the bind', async () => {
  const first = await startRedis();
  try {
    await assert.rejects(startRedis({ port: first.port }), /did not start.*Address already in use/s);
    // The first server is untouched and still the one answering there.
    assert.match(await rawCommand(first.port, 'INFO server'), new RegExp(`process_id:${String(first.pid)}\r\n`));
  } finally {
    await first.stop();
  }
});
