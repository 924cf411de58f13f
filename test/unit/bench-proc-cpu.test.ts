import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clockTicksPerSecond, cpuDeltaMs, cpuMeter, cpuSnapshot, parseProcStat, processGroupMembers, readProcStat } from '../../bench/proc-cpu.js';

/** A /proc/<pid>/stat line with the given fields (the rest zero). */
function statLine(pid: number, comm: string, pgid: number, utime: number, stime: number): string {
  // fields 3.. : state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime ...
  const rest = ['S', '1', String(pgid), String(pgid), '0', '-1', '4194560', '0', '0', '0', '0', String(utime), String(stime), '7', '9', '20', '0', '12'];
  return `${pid} (${comm}) ${rest.join(' ')}\n`;
}

function fakeProc(entries: Array<[number, string, number, number, number]>): string {
  const root = mkdtempSync(join(tmpdir(), 'fake-proc-'));
  for (const [pid, comm, pgid, utime, stime] of entries) {
    mkdirSync(join(root, String(pid)));
    writeFileSync(join(root, String(pid), 'stat'), statLine(pid, comm, pgid, utime, stime));
  }
  mkdirSync(join(root, 'self'));
  return root;
}

describe('bench /proc CPU reader', () => {
  test('parses utime, stime and pgid after a command name with spaces and parentheses', () => {
    const stat = parseProcStat(statLine(42, 'kube) (apiserver', 40, 1234, 56));
    assert.deepEqual(stat, { pid: 42, comm: 'kube) (apiserver', pgid: 40, utime: 1234, stime: 56 });
    assert.equal(parseProcStat('garbage'), undefined);
  });

  test('sums the CPU delta over processes, counting new ones in full and skipping gone ones', () => {
    const before = {
      ticks: new Map([
        [1, 100],
        [2, 50],
        [3, 10],
      ]),
      comms: new Map([
        [1, 'etcd'],
        [2, 'kube-apiserver'],
        [3, 'gone'],
      ]),
    };
    const after = {
      ticks: new Map([
        [1, 130],
        [2, 250],
        [4, 5],
      ]),
      comms: new Map([
        [1, 'etcd'],
        [2, 'kube-apiserver'],
        [4, 'new'],
      ]),
    };
    const delta = cpuDeltaMs(before, after, 100);
    assert.equal(delta.totalMs, (30 + 200 + 5) * 10);
    assert.deepEqual(
      [...delta.byComm],
      [
        ['etcd', 300],
        ['kube-apiserver', 2000],
        ['new', 50],
      ],
    );
  });

  test('finds the members of a process group and meters them', () => {
    const root = fakeProc([
      [10, 'kube-apiserver', 9, 300, 100],
      [11, 'etcd', 9, 40, 20],
      [12, 'bash', 5, 1, 1],
    ]);
    try {
      assert.deepEqual(
        processGroupMembers(9, root)
          .map((s) => s.pid)
          .sort(),
        [10, 11],
      );
      assert.equal(readProcStat(99, root), undefined);
      const snap = cpuSnapshot([10, 11, 99], root);
      assert.deepEqual(
        [...snap.ticks],
        [
          [10, 400],
          [11, 60],
        ],
      );
      const meter = cpuMeter(() => processGroupMembers(9, root).map((s) => s.pid), root);
      assert.equal(meter.available(), true);
      const stop = meter.start();
      writeFileSync(join(root, '10', 'stat'), statLine(10, 'kube-apiserver', 9, 350, 110));
      const { totalMs } = stop();
      assert.equal(totalMs, (60 * 1000) / clockTicksPerSecond());
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('reads this process from the real /proc: its ticks grow as it spins, in step with getrusage', () => {
    const ticks = (): number => {
      const stat = readProcStat(process.pid);
      assert.ok(stat !== undefined);
      assert.equal(stat.pid, process.pid);
      return stat.utime + stat.stime;
    };
    const before = ticks();
    const usageBefore = process.cpuUsage();
    const deadline = Date.now() + 20_000;
    let after = before;
    // Spin until 20 ticks (200 ms at 100 Hz) of CPU are counted; on a busy machine that takes longer, not fewer ticks.
    while (after - before < 20 && Date.now() < deadline) {
      const until = Date.now() + 5;
      while (Date.now() < until);
      after = ticks();
    }
    const usage = process.cpuUsage(usageBefore);
    const procMs = ((after - before) * 1000) / clockTicksPerSecond();
    const rusageMs = (usage.user + usage.system) / 1000;
    assert.ok(after - before >= 20, `ticks grew by ${after - before}`);
    assert.ok(Math.abs(procMs - rusageMs) <= 30 + 0.2 * rusageMs, `/proc says ${procMs} ms, getrusage ${rusageMs} ms`);
  });
});
