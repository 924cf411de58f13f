/**
 * The linearizability checker the failover tests rely on (test/tools/linearizability-checker, Porcupine
 * with a model of one resource type): histories that must pass and histories that must fail, and a
 * large generated history that is linearizable by construction, checked in seconds, then corrupted.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkHistory, type History, type HistoryEvent, type HistoryOperation, type HistoryStatus } from '../helpers/linearizability.js';

type Op = HistoryOperation['op'];

/** One operation: [client, call, return], what it asked, what it got. */
function op(
  client: number,
  call: number,
  ret: number,
  kind: Op,
  name: string,
  result: { status: HistoryStatus; rv?: number; value?: string; items?: [string, number, string][] },
  ask: { value?: string; expectRv?: number } = {},
): HistoryOperation {
  return {
    client,
    call,
    return: ret,
    op: kind,
    name,
    value: ask.value ?? '',
    expectRv: ask.expectRv === undefined ? '' : String(ask.expectRv),
    result: {
      status: result.status,
      rv: result.rv === undefined ? '' : String(result.rv),
      value: result.value ?? '',
      items: (result.items ?? []).map(([n, rv, value]) => ({ name: n, rv: String(rv), value })),
    },
  };
}

function ev(type: HistoryEvent['type'], name: string, rv: number, value: string): HistoryEvent {
  return { type, name, rv: String(rv), value };
}

async function verdictOf(operations: HistoryOperation[], events: HistoryEvent[] = []): Promise<{ linearizable: boolean; exitCode: number; text: string }> {
  const history: History = { operations, events };
  const v = await checkHistory(history, { timeoutSeconds: 30 });
  return { linearizable: v.linearizable, exitCode: v.exitCode, text: JSON.stringify(v) };
}

async function assertLinearizable(operations: HistoryOperation[], events: HistoryEvent[] = []): Promise<void> {
  const v = await verdictOf(operations, events);
  assert.equal(v.exitCode, 0, v.text);
  assert.equal(v.linearizable, true, v.text);
}

async function assertNotLinearizable(operations: HistoryOperation[], events: HistoryEvent[] = []): Promise<void> {
  const v = await verdictOf(operations, events);
  assert.equal(v.exitCode, 1, v.text);
  assert.equal(v.linearizable, false, v.text);
}

describe('linearizability checker: histories that must pass', () => {
  test('a sequential life cycle: create, read, compare-and-swap update, list, delete, create again', async () => {
    await assertLinearizable([
      op(0, 0, 1, 'create', 'a', { status: 'ok', rv: 5 }, { value: 't1' }),
      op(0, 2, 3, 'get', 'a', { status: 'ok', rv: 5, value: 't1' }),
      op(0, 4, 5, 'update', 'a', { status: 'ok', rv: 7 }, { value: 't2', expectRv: 5 }),
      op(0, 6, 7, 'list', '', { status: 'ok', rv: 7, items: [['a', 7, 't2']] }),
      op(0, 8, 9, 'update', 'a', { status: 'conflict' }, { value: 't3', expectRv: 5 }),
      op(0, 10, 11, 'delete', 'a', { status: 'ok', rv: 8 }, { expectRv: 7 }),
      op(0, 12, 13, 'get', 'a', { status: 'notfound' }),
      op(0, 14, 15, 'update', 'a', { status: 'notfound' }, { value: 't4', expectRv: 7 }),
      op(0, 16, 17, 'create', 'a', { status: 'ok', rv: 9 }, { value: 't5' }),
      op(0, 18, 19, 'create', 'a', { status: 'exists' }, { value: 't6' }),
    ]);
  });

  test('overlapping operations may take effect in either order', async () => {
    await assertLinearizable([
      op(0, 0, 10, 'create', 'a', { status: 'ok', rv: 3 }, { value: 't1' }),
      // Before the create took effect, and after.
      op(1, 1, 2, 'get', 'a', { status: 'notfound' }),
      op(2, 5, 12, 'get', 'a', { status: 'ok', rv: 3, value: 't1' }),
      // Two compare-and-swap updates from the same version: one wins, the other conflicts.
      op(1, 13, 20, 'update', 'a', { status: 'conflict' }, { value: 'x', expectRv: 3 }),
      op(2, 14, 18, 'update', 'a', { status: 'ok', rv: 4 }, { value: 'y', expectRv: 3 }),
      op(0, 21, 22, 'list', '', { status: 'ok', rv: 4, items: [['a', 4, 'y']] }),
    ]);
  });

  test('a list may report a resourceVersion past the last write (other types or objects moved it)', async () => {
    await assertLinearizable([
      op(0, 0, 1, 'create', 'a', { status: 'ok', rv: 3 }, { value: 't1' }),
      op(0, 2, 3, 'list', '', { status: 'ok', rv: 9, items: [['a', 3, 't1']] }),
      op(0, 4, 5, 'create', 'b', { status: 'ok', rv: 10 }, { value: 't2' }),
    ]);
  });

  test('a write whose answer was lost counts as applied when the watch shows it, at any time after its call', async () => {
    await assertLinearizable(
      [
        op(0, 10, 11, 'create', 'c', { status: 'unknown' }, { value: 't1' }),
        op(1, 20, 21, 'get', 'c', { status: 'notfound' }),
        op(1, 30, 31, 'get', 'c', { status: 'ok', rv: 6, value: 't1' }),
        op(1, 32, 33, 'update', 'c', { status: 'unknown' }, { value: 't2', expectRv: 6 }),
        op(1, 34, 35, 'delete', 'c', { status: 'unknown' }, { expectRv: 7 }),
        op(1, 36, 37, 'get', 'c', { status: 'notfound' }),
      ],
      [ev('ADDED', 'c', 6, 't1'), ev('MODIFIED', 'c', 7, 't2'), ev('DELETED', 'c', 8, 't2')],
    );
  });

  test('a delete answered with a Status (no resourceVersion) takes its version from the watch', async () => {
    await assertLinearizable(
      [
        op(0, 0, 1, 'create', 'a', { status: 'ok', rv: 3 }, { value: 't1' }),
        op(0, 2, 3, 'delete', 'a', { status: 'ok' }, { expectRv: 3 }),
        op(0, 4, 5, 'list', '', { status: 'ok', rv: 4, items: [] }),
      ],
      [ev('ADDED', 'a', 3, 't1'), ev('DELETED', 'a', 4, 't1')],
    );
  });

  test('two deletes of one state, one answer lost: the acknowledged one removed it, the lost one did nothing', async () => {
    // Seen in a Sentinel partition: the lost delete's one DELETED event is the later acknowledged one's.
    await assertLinearizable(
      [
        op(0, 0, 1, 'create', 'a', { status: 'ok', rv: 3 }, { value: 't1' }),
        op(1, 2, 3, 'delete', 'a', { status: 'unknown' }, { expectRv: 3 }),
        op(2, 10, 11, 'get', 'a', { status: 'ok', rv: 3, value: 't1' }),
        op(2, 12, 13, 'delete', 'a', { status: 'ok', rv: 9 }, { expectRv: 3 }),
        op(2, 14, 15, 'get', 'a', { status: 'notfound' }),
      ],
      [ev('ADDED', 'a', 3, 't1'), ev('DELETED', 'a', 9, 't1')],
    );
    // Two lost deletes of one state: one of them removed it.
    await assertLinearizable(
      [
        op(0, 0, 1, 'create', 'a', { status: 'ok', rv: 3 }, { value: 't1' }),
        op(1, 2, 3, 'delete', 'a', { status: 'unknown' }, { expectRv: 3 }),
        op(2, 4, 5, 'delete', 'a', { status: 'unknown' }, { expectRv: 3 }),
        op(2, 14, 15, 'get', 'a', { status: 'notfound' }),
      ],
      [ev('ADDED', 'a', 3, 't1'), ev('DELETED', 'a', 9, 't1')],
    );
  });

  test('a write whose answer was lost and that the watch never shows did not happen; a failed write (503) neither', async () => {
    await assertLinearizable([
      op(0, 0, 5, 'create', 'a', { status: 'unknown' }, { value: 't1' }),
      op(1, 1, 2, 'create', 'b', { status: 'failed' }, { value: 't2' }),
      op(2, 6, 7, 'list', '', { status: 'ok', rv: 1, items: [] }),
    ]);
  });
});

describe('linearizability checker: histories that must fail', () => {
  test('two acknowledged deletes of one state', async () => {
    await assertNotLinearizable(
      [
        op(0, 0, 1, 'create', 'a', { status: 'ok', rv: 3 }, { value: 't1' }),
        op(1, 2, 3, 'delete', 'a', { status: 'ok', rv: 4 }, { expectRv: 3 }),
        op(2, 5, 6, 'delete', 'a', { status: 'ok', rv: 5 }, { expectRv: 3 }),
      ],
      [ev('ADDED', 'a', 3, 't1'), ev('DELETED', 'a', 4, 't1')],
    );
  });

  test('a lost write: an acknowledged create is gone for a later read', async () => {
    await assertNotLinearizable([op(0, 0, 1, 'create', 'a', { status: 'ok', rv: 4 }, { value: 't1' }), op(1, 2, 3, 'get', 'a', { status: 'notfound' })]);
  });

  test('a stale read: after an acknowledged update a later read returns the older state', async () => {
    await assertNotLinearizable([
      op(0, 0, 1, 'create', 'a', { status: 'ok', rv: 4 }, { value: 't1' }),
      op(0, 2, 3, 'update', 'a', { status: 'ok', rv: 5 }, { value: 't2', expectRv: 4 }),
      op(1, 4, 5, 'get', 'a', { status: 'ok', rv: 4, value: 't1' }),
    ]);
  });

  test('resourceVersions going backwards: a later write gets a smaller one', async () => {
    await assertNotLinearizable([
      op(0, 0, 1, 'create', 'a', { status: 'ok', rv: 10 }, { value: 't1' }),
      op(1, 2, 3, 'create', 'b', { status: 'ok', rv: 9 }, { value: 't2' }),
    ]);
  });

  test('a resourceVersion given twice', async () => {
    await assertNotLinearizable([
      op(0, 0, 1, 'create', 'a', { status: 'ok', rv: 4 }, { value: 't1' }),
      op(1, 2, 3, 'create', 'b', { status: 'ok', rv: 4 }, { value: 't2' }),
    ]);
  });

  test('a write after a list gets a resourceVersion not after the list', async () => {
    await assertNotLinearizable([
      op(0, 0, 1, 'list', '', { status: 'ok', rv: 8, items: [] }),
      op(0, 2, 3, 'create', 'a', { status: 'ok', rv: 8 }, { value: 't1' }),
    ]);
  });

  test('a list that is not a snapshot: it misses an acknowledged object', async () => {
    await assertNotLinearizable([
      op(0, 0, 1, 'create', 'a', { status: 'ok', rv: 4 }, { value: 't1' }),
      op(1, 2, 3, 'list', '', { status: 'ok', rv: 4, items: [] }),
    ]);
  });

  test('a conflict nobody caused: the compare-and-swap update names the current version', async () => {
    await assertNotLinearizable([
      op(0, 0, 1, 'create', 'a', { status: 'ok', rv: 4 }, { value: 't1' }),
      op(0, 2, 3, 'update', 'a', { status: 'conflict' }, { value: 't2', expectRv: 4 }),
    ]);
  });

  test('a read shows a write whose answer was lost and that the watch never showed', async () => {
    await assertNotLinearizable([
      op(0, 0, 5, 'create', 'a', { status: 'unknown' }, { value: 't1' }),
      op(1, 6, 7, 'get', 'a', { status: 'ok', rv: 3, value: 't1' }),
    ]);
  });

  test('a failed write (503) that nonetheless took effect', async () => {
    await assertNotLinearizable([
      op(0, 0, 5, 'create', 'a', { status: 'failed' }, { value: 't1' }),
      op(1, 6, 7, 'get', 'a', { status: 'ok', rv: 3, value: 't1' }),
    ]);
  });

  test('bad input is refused with exit status 3', async () => {
    const v = await checkHistory({ operations: [op(0, 5, 1, 'get', 'a', { status: 'notfound' })], events: [] });
    assert.equal(v.exitCode, 3, JSON.stringify(v));
    assert.match(v.error ?? '', /returns before its call/);
  });
});

/** A deterministic pseudo-random sequence (tests must be reproducible). */
function random(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x1_0000_0000;
  };
}

/**
 * A history linearizable by construction: operations are applied to a simulated store one at a
 * time, each at its own instant; each client's operations do not overlap, and each spans its instant
 * with random slack, so many overlap across clients.
 */
function generatedHistory(count: number, clients: number, seed: number): HistoryOperation[] {
  const rnd = random(seed);
  const objects = new Map<string, { rv: number; value: string }>();
  let rv = 1;
  const free = Array.from({ length: clients }, () => 0);
  const ops: HistoryOperation[] = [];
  for (let i = 0; i < count; i++) {
    const at = i * 10 + 5;
    const candidates = free.flatMap((f, c) => (f < at ? [c] : []));
    if (candidates.length === 0) continue;
    const client = candidates[Math.floor(rnd() * candidates.length)] ?? 0;
    const call = Math.max((free[client] ?? 0) + 1, at - Math.floor(rnd() * 30));
    const ret = at + Math.floor(rnd() * 30);
    free[client] = ret;
    const name = `o${Math.floor(rnd() * 6)}`;
    const current = objects.get(name);
    const pick = rnd();
    const value = `v${i}`;
    if (pick < 0.2) {
      if (current) ops.push(op(client, call, ret, 'create', name, { status: 'exists' }, { value }));
      else {
        objects.set(name, { rv: ++rv, value });
        ops.push(op(client, call, ret, 'create', name, { status: 'ok', rv }, { value }));
      }
    } else if (pick < 0.45) {
      const expect = current && rnd() < 0.7 ? current.rv : rv;
      if (!current) ops.push(op(client, call, ret, 'update', name, { status: 'notfound' }, { value, expectRv: expect }));
      else if (current.rv !== expect) ops.push(op(client, call, ret, 'update', name, { status: 'conflict' }, { value, expectRv: expect }));
      else {
        objects.set(name, { rv: ++rv, value });
        ops.push(op(client, call, ret, 'update', name, { status: 'ok', rv }, { value, expectRv: expect }));
      }
    } else if (pick < 0.55) {
      if (!current) ops.push(op(client, call, ret, 'delete', name, { status: 'notfound' }, { expectRv: rv }));
      else {
        objects.delete(name);
        ops.push(op(client, call, ret, 'delete', name, { status: 'ok', rv: ++rv }, { expectRv: current.rv }));
      }
    } else if (pick < 0.9) {
      ops.push(op(client, call, ret, 'get', name, current ? { status: 'ok', rv: current.rv, value: current.value } : { status: 'notfound' }));
    } else {
      const items = [...objects.entries()].map(([n, o]): [string, number, string] => [n, o.rv, o.value]);
      ops.push(op(client, call, ret, 'list', '', { status: 'ok', rv, items }));
    }
  }
  return ops;
}

describe('linearizability checker: size', () => {
  test('5,000 operations of 8 clients are checked in seconds; one stale read in them is found', async () => {
    const ops = generatedHistory(5000, 8, 42);
    const ok = await checkHistory({ operations: ops, events: [] }, { timeoutSeconds: 60 });
    assert.equal(ok.exitCode, 0, JSON.stringify(ok));
    assert.ok(ok.checked > 4000, JSON.stringify(ok));
    // Corrupt one read in the middle: it now shows the value before the last write of its object.
    const writes = new Map<string, HistoryOperation[]>();
    let corrupted = false;
    for (const o of ops.slice(0, 2500)) {
      if ((o.op === 'update' || o.op === 'create') && o.result.status === 'ok') writes.set(o.name, [...(writes.get(o.name) ?? []), o]);
    }
    for (const o of ops.slice(2500)) {
      const seen = writes.get(o.name) ?? [];
      const before = seen[seen.length - 2];
      const last = seen[seen.length - 1];
      // A read that began after that write returned cannot be placed before it.
      if (o.op === 'get' && o.result.status === 'ok' && before && last && o.result.rv === last.result.rv && o.call > last.return) {
        o.result.rv = before.result.rv;
        o.result.value = before.value;
        corrupted = true;
        break;
      }
    }
    assert.ok(corrupted, 'found a read to corrupt');
    const bad = await checkHistory({ operations: ops, events: [] }, { timeoutSeconds: 60 });
    assert.equal(bad.exitCode, 1, JSON.stringify(bad));
  });
});
