/**
 * The server's lifecycle list: components start in the order they are added (each after the previous
 * one's start resolved), stop in the reverse order (each after the later one's stop resolved), a
 * component failing to stop does not keep the others running, and stopping twice stops once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Lifecycle } from '../../src/server/lifecycle.js';

function recorder(log: string[], name: string, failStop = false): { start(): Promise<void>; stop(): Promise<void> } {
  return {
    async start() {
      await Promise.resolve();
      log.push(`start ${name}`);
    },
    async stop() {
      await Promise.resolve();
      log.push(`stop ${name}`);
      if (failStop) throw new Error(`${name} cannot stop`);
    },
  };
}

test('components start in order and stop in reverse, past one that fails to stop', async () => {
  const log: string[] = [];
  const lifecycle = new Lifecycle();
  await lifecycle.start('storage', recorder(log, 'storage'));
  await lifecycle.start('cache', recorder(log, 'cache', true));
  await lifecycle.start('stop-only', { stop: () => log.push('stop stop-only') });
  await lifecycle.start('controller', recorder(log, 'controller'));
  assert.deepEqual(lifecycle.names(), ['storage', 'cache', 'stop-only', 'controller']);
  await Promise.all([lifecycle.stopAll(), lifecycle.stopAll()]);
  assert.deepEqual(log, ['start storage', 'start cache', 'start controller', 'stop controller', 'stop stop-only', 'stop cache', 'stop storage']);
});

test('a component whose start fails is not recorded, so shutdown does not stop it', async () => {
  const log: string[] = [];
  const lifecycle = new Lifecycle();
  await lifecycle.start('storage', recorder(log, 'storage'));
  await assert.rejects(
    lifecycle.start('broken', {
      start: () => Promise.reject(new Error('port taken')),
      stop: () => log.push('stop broken'),
    }),
    /port taken/,
  );
  await lifecycle.stopAll();
  assert.deepEqual(log, ['start storage', 'stop storage']);
});
