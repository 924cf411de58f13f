/**
 * metadata.managedFields on writes that are not applies: each operation sequence of
 * test/fixtures/managedfields/ is replayed against Capstan over HTTP and the managedFields read back
 * after every step are compared with what kube-apiserver 1.36 answered (test/golden/managedfields/,
 * recorded by scripts/capture-managedfields-goldens.mjs): the entries' managers, operations,
 * versions, subresources and fieldsV1 byte for byte, which entries got a new time at which step,
 * and kube's entry order.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { restFor } from './rest.js';
import { entryId, replay, type GoldenStep, type Send, type Sequence } from './managed-fields-replay.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const fixtures = join(root, 'test', 'fixtures', 'managedfields');
const goldens = join(root, 'test', 'golden', 'managedfields');

let srv: TestServer;

before(async () => {
  srv = await startTestServer();
});

after(async () => {
  await srv.stop();
});

const send: Send = async (method, path, headers, body) => {
  const res = await fetch(srv.url + path, { method, headers, body });
  return { status: res.status, text: await res.text() };
};

const seconds = (t: unknown): number => (typeof t === 'string' ? Math.floor(Date.parse(t) / 1000) : 0);

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** kube's sortEncodedManagedFields order. */
function inKubeOrder(entries: Record<string, unknown>[]): boolean {
  const key = (e: Record<string, unknown>): (string | number)[] => [
    String(e.operation),
    seconds(e.time),
    str(e.manager),
    str(e.apiVersion),
    str(e.subresource),
  ];
  for (let i = 1; i < entries.length; i++) {
    const a = key(entries[i - 1]);
    const b = key(entries[i]);
    for (let j = 0; j < a.length; j++) {
      if (a[j] === b[j]) continue;
      if (a[j] > b[j]) return false;
      break;
    }
  }
  return true;
}

const strip = (e: Record<string, unknown>): string => JSON.stringify({ ...e, time: undefined });

for (const file of readdirSync(fixtures)
  .filter((f) => f.endsWith('.json'))
  .sort()) {
  const { sequences } = JSON.parse(readFileSync(join(fixtures, file), 'utf8')) as { sequences: Sequence[] };
  const golden = JSON.parse(readFileSync(join(goldens, file), 'utf8')) as { sequences: { name: string; steps: GoldenStep[] }[] };
  describe(`managedFields as kube-apiserver records them: ${file}`, () => {
    for (const seq of sequences) {
      test(seq.name, { todo: seq.todo }, async () => {
        const expected = golden.sequences.find((s) => s.name === seq.name);
        assert.ok(expected, `no golden for ${seq.name}`);
        const ns = await restFor(srv.url).namespace('mf');
        const started: number[] = [];
        const ended: number[] = [];
        const results = await replay(send, ns, seq, (i) => {
          if (i > 0) ended.push(Math.floor(Date.now() / 1000));
          started.push(Math.floor(Date.now() / 1000));
          return Promise.resolve();
        });
        ended.push(Math.floor(Date.now() / 1000));
        results.forEach((got, i) => {
          const want = expected.steps[i];
          const where = `${seq.name} step ${i}`;
          assert.equal(got.status, want.status, `${where}: status`);
          const byId = (list: Record<string, unknown>[]): Record<string, unknown>[] => [...list].sort((a, b) => (entryId(a) < entryId(b) ? -1 : 1));
          assert.deepEqual(byId(got.managedFields).map(strip), byId(want.managedFields).map(strip), `${where}: entries`);
          assert.ok(inKubeOrder(got.managedFields), `${where}: entries not in kube's order: ${JSON.stringify(got.managedFields)}`);
          for (const w of want.managedFields) {
            const g = got.managedFields.find((e) => entryId(e) === entryId(w));
            const label = typeof w.time === 'string' ? /^step-(\d+)$/.exec(w.time) : null;
            if (g === undefined || label === null) continue;
            const setAt = Number(label[1]);
            // The entry's time is that of the step kube stamped it at; an entry kube left alone keeps its time.
            const sec = seconds(g.time);
            assert.ok(sec >= started[setAt] && sec <= ended[setAt], `${where}: ${entryId(w)} should carry the time of step ${setAt}`);
            const before = i > 0 ? expected.steps[i - 1]?.managedFields.find((e) => entryId(e) === entryId(w)) : undefined;
            if (before !== undefined && before.time === w.time) {
              const then = results[i - 1]?.managedFields.find((e) => entryId(e) === entryId(w));
              assert.equal(g.time, then?.time, `${where}: ${entryId(w)} should keep its time`);
            }
          }
        });
      });
    }
  });
}
