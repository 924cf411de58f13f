/**
 * Capstan's validation against kube's own (issue 9). test/golden/validation/ holds what kube-apiserver
 * 1.36's registry strategies (rest.BeforeCreate / BeforeUpdate, run by tools/goldens) answer for each
 * write of test/fixtures/validation/: null for a valid write, else the 422 Status. Each case is sent
 * through the API (creates with dryRun=All; updates create the old object, then PUT the new one) and
 * the answer must be kube's: the same code, reason and causes. kube lists the causes of a map's keys
 * in Go's random map order, so several causes are compared as a set (and the message by its parts).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CORPUS = join(ROOT, 'test', 'fixtures', 'validation');
const GOLDEN = join(ROOT, 'test', 'golden', 'validation');

type Obj = Record<string, unknown>;
interface Cause { reason?: string; message?: string; field?: string }
interface KubeStatus { code: number; reason: string; message: string; details?: { causes?: Cause[] } }
interface CorpusFile { cases: Array<{ name: string; object: Obj; old?: Obj }> }
interface GoldenFile { cases: Array<{ name: string; status: KubeStatus | null }> }

/** Resource names of corpus kinds that do not add "s" or "es" to the kind. */
const IRREGULAR_PLURALS: Record<string, string> = { NetworkPolicy: 'networkpolicies', Endpoints: 'endpoints' };

/** Kinds of the corpus without a namespace. */
const CLUSTER_SCOPED = new Set(['PriorityClass', 'ClusterRole', 'ClusterRoleBinding', 'StorageClass', 'IngressClass', 'PersistentVolume', 'Node']);

const files = readdirSync(CORPUS).filter((f) => f.endsWith('.json')).sort();
const read = <T>(dir: string, file: string): T => JSON.parse(readFileSync(join(dir, file), 'utf8')) as T;

let srv: TestServer;
before(async () => {
  srv = await startTestServer();
});
after(async () => {
  await srv?.stop();
});

/**
 * kube appends a diff of its internal Go structs to a refused pod spec update (`pod updates may not
 * change fields other than ...\n<diff>`); Capstan writes its own list of changed fields there, so
 * such messages are compared up to the end of their first line.
 */
function firstLine(message: string | undefined): string | undefined {
  return message?.split('\n')[0];
}

function sortedCauses(causes: Cause[] | undefined): string[] {
  return (causes ?? []).map((c) => JSON.stringify([c.reason, c.field, firstLine(c.message)])).sort();
}

test('every validation corpus file has goldens for the same cases', () => {
  assert.deepEqual(readdirSync(GOLDEN).filter((f) => f.endsWith('.json')).sort(), files);
  for (const file of files) {
    assert.deepEqual(read<GoldenFile>(GOLDEN, file).cases.map((c) => c.name), read<CorpusFile>(CORPUS, file).cases.map((c) => c.name), file);
  }
});

test('writes are accepted or refused as kube-apiserver 1.36 does, with its causes', async () => {
  let n = 0;
  for (const file of files) {
    const corpus = read<CorpusFile>(CORPUS, file);
    const golden = read<GoldenFile>(GOLDEN, file);
    for (const [i, c] of corpus.cases.entries()) {
      const expected = golden.cases[i]?.status ?? null;
      const apiVersion = c.object.apiVersion as string;
      const kind = c.object.kind as string;
      const plural = IRREGULAR_PLURALS[kind] ?? `${kind.toLowerCase()}${kind.endsWith('s') ? 'es' : 's'}`;
      const clusterScoped = CLUSTER_SCOPED.has(c.object.kind as string);
      const ns = `validation-${++n}`;
      if (!clusterScoped) {
        const created = await api(srv.url, '/api/v1/namespaces', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }) });
        assert.equal(created.status, 201, created.text);
      }
      const base = `${apiVersion === 'v1' ? '/api/v1' : `/apis/${apiVersion}`}${clusterScoped ? '' : `/namespaces/${ns}`}/${plural}`;
      const name = (c.object.metadata as Obj).name as string;
      let answer;
      if (c.old === undefined) {
        answer = await api(srv.url, `${base}?dryRun=All`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(c.object) });
      } else {
        const { resourceVersion: _rv, ...oldMeta } = c.old.metadata as Obj;
        const stored = await api(srv.url, base, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...c.old, metadata: oldMeta }) });
        assert.equal(stored.status, 201, `${file} "${c.name}" old object: ${stored.text}`);
        const rv = (stored.body.metadata as Obj).resourceVersion;
        answer = await api(srv.url, `${base}/${name}`, {
          method: 'PUT', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ...c.object, metadata: { ...(c.object.metadata as Obj), resourceVersion: rv } }),
        });
      }
      const what = `${file} "${c.name}"`;
      // Cluster-scoped objects share one space: the old object of an update goes once the case is done.
      if (clusterScoped && c.old !== undefined) await api(srv.url, `${base}/${name}`, { method: 'DELETE' });
      if (expected === null) {
        assert.equal(answer.status, c.old === undefined ? 201 : 200, `${what}: ${answer.text.slice(0, 500)}`);
        continue;
      }
      assert.equal(answer.status, expected.code, `${what}: ${answer.text.slice(0, 500)}`);
      assert.equal(answer.body.reason, expected.reason, what);
      assert.deepEqual(sortedCauses(answer.body.details?.causes), sortedCauses(expected.details?.causes), what);
      if (expected.message.includes('\n')) assert.equal(firstLine(answer.body.message as string), firstLine(expected.message), what);
      else if ((expected.details?.causes ?? []).length <= 1) assert.equal(answer.body.message, expected.message, what);
      else assert.equal((answer.body.message as string).length, expected.message.length, `${what}: ${answer.body.message}`);
    }
  }
  assert.ok(n >= 30, `${n} cases`);
});
