import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { pinPlan, pinProcesses } from '../../bench/affinity.js';
import { parseCompareArgs } from '../../bench/compare/options.js';

/** The cores thread `tid` of process `pid` (its main thread by default) may run on, as /proc lists them. */
function allowedCores(pid: number, tid: number | string = pid): string {
  const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
  const m = /^Cpus_allowed_list:\s*(\S+)$/m.exec(status);
  assert.ok(m, 'Cpus_allowed_list in /proc status');
  return m[1];
}

describe('bench --compare --pin', () => {
  test('puts the server on core 0 and the client on the others', () => {
    assert.deepEqual(pinPlan(2), { server: '0', client: '1', all: '0-1' });
    assert.deepEqual(pinPlan(8), { server: '0', client: '1-7', all: '0-7' });
    assert.throws(() => pinPlan(1), /at least two cores/);
  });

  test('is off unless asked for', () => {
    assert.equal(parseCompareArgs(['--compare', '--quick'])?.pin, false);
    assert.equal(parseCompareArgs(['--compare', '--pin', '--targets', 'memory'])?.pin, true);
  });
});

describe('bench --compare options', () => {
  test('paired rounds run only when asked for, with 8 rounds (6 quick) unless --rounds says', () => {
    assert.deepEqual(parseCompareArgs(['--compare'])?.phases, ['startup', 'fresh', 'verbs', 'list', 'watch']);
    assert.deepEqual(parseCompareArgs(['--compare', '--only', 'paired'])?.phases, ['paired']);
    assert.deepEqual(parseCompareArgs(['--compare', '--only', 'verbs,paired'])?.phases, ['verbs', 'paired']);
    assert.equal(parseCompareArgs(['--compare'])?.pairedRounds, 8);
    assert.equal(parseCompareArgs(['--compare', '--quick'])?.pairedRounds, 6);
    assert.equal(parseCompareArgs(['--compare', '--rounds', '3'])?.pairedRounds, 3);
    assert.throws(() => parseCompareArgs(['--compare', '--rounds', '0']), /--rounds/);
  });

  test('--server-args are passed to every Capstan target', () => {
    assert.deepEqual(parseCompareArgs(['--compare'])?.serverArgs, []);
    assert.deepEqual(parseCompareArgs(['--compare', '--server-args', '--log-level=error  --max-requests-inflight=0'])?.serverArgs, [
      '--log-level=error',
      '--max-requests-inflight=0',
    ]);
  });

  test('moves a running process and the threads it starts later', { skip: cpus().length < 2 ? 'one core' : false }, async () => {
    // A process that starts a worker thread only after it has been pinned.
    const child = spawn(
      process.execPath,
      [
        '-e',
        `process.stdin.once('data', () => {
           const { Worker } = require('node:worker_threads');
           const w = new Worker('setInterval(() => {}, 1000)', { eval: true });
           w.on('online', () => process.stdout.write(String(w.threadId) + '\\n'));
         });
         process.stdout.write('ready\\n');`,
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    try {
      await once(child.stdout, 'data');
      const pid = child.pid ?? 0;
      pinProcesses([pid], '0');
      assert.equal(allowedCores(pid), '0');
      child.stdin.write('go\n');
      await once(child.stdout, 'data');
      // Every thread of the process, the worker's included, is on core 0.
      const threads = readdirSync(`/proc/${pid}/task`);
      assert.ok(threads.length > 1, 'the child has threads');
      for (const tid of threads) assert.equal(allowedCores(pid, tid), '0', `thread ${tid}`);
    } finally {
      child.kill();
      await once(child, 'exit');
    }
  });

  test('says which process it could not move', () => {
    assert.throws(() => pinProcesses([2 ** 22 + 12345], '0'), /taskset of process \d+ to cores 0 failed/);
  });
});
