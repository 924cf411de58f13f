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
import { kubectlFor } from './kubectl.js';
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

describe('managedFields with kubectl and the metadata-only representations', () => {
  test("kubectl's own managers (create, label, annotate, client-side apply) own what kube-apiserver records for them", async () => {
    const k = kubectlFor(srv.kubeconfig);
    const ns = await restFor(srv.url).namespace('mfk');
    await k.ok(['-n', ns, 'create', 'configmap', 'k1', '--from-literal=a=1']);
    await k.ok(['-n', ns, 'label', 'configmap', 'k1', 'x=y']);
    await k.ok(['-n', ns, 'annotate', 'configmap', 'k1', 'n=m']);
    await k.ok(['-n', ns, 'apply', '-f', '-'], { input: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: k1\ndata:\n  a: "2"\n  b: "3"\n' });
    const got = await send('GET', `/api/v1/namespaces/${ns}/configmaps/k1`, {});
    const mf = (JSON.parse(got.text) as { metadata: { managedFields: Record<string, unknown>[] } }).metadata.managedFields;
    // As kube-apiserver 1.36 answered the same commands (kubectl sends each command's fieldManager).
    assert.deepEqual(
      mf.map((e): Record<string, unknown> => ({ ...e, time: undefined })).sort((a, b) => (String(a.manager) < String(b.manager) ? -1 : 1)),
      [
        { manager: 'kubectl-annotate', fieldsV1: { 'f:metadata': { 'f:annotations': { '.': {}, 'f:n': {} } } } },
        {
          manager: 'kubectl-client-side-apply',
          fieldsV1: { 'f:data': { 'f:a': {}, 'f:b': {} }, 'f:metadata': { 'f:annotations': { 'f:kubectl.kubernetes.io/last-applied-configuration': {} } } },
        },
        { manager: 'kubectl-create', fieldsV1: { 'f:data': {} } },
        { manager: 'kubectl-label', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:x': {} } } } },
      ].map((e) => ({ manager: e.manager, operation: 'Update', apiVersion: 'v1', time: undefined, fieldsType: 'FieldsV1', fieldsV1: e.fieldsV1 })),
    );
    assert.ok(!(await k.ok(['-n', ns, 'get', 'configmap', 'k1', '-o', 'yaml'])).includes('managedFields'));
    assert.ok((await k.ok(['-n', ns, 'get', 'configmap', 'k1', '-o', 'yaml', '--show-managed-fields'])).includes('manager: kubectl-label'));
    for (const accept of ['application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1', 'application/json;as=Table;g=meta.k8s.io;v=v1']) {
      const r = await send('GET', `/api/v1/namespaces/${ns}/configmaps/k1`, { accept });
      const body = JSON.parse(r.text) as { metadata?: { managedFields?: unknown }; rows?: { object: { metadata: { managedFields?: unknown } } }[] };
      const meta = body.rows ? body.rows[0]?.object.metadata : body.metadata;
      assert.deepEqual(meta?.managedFields, mf, accept);
    }
  });
});
