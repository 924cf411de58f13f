/**
 * kubectl's generator commands (`create deployment`, `run`, `expose`, `create job`, `autoscale`, ...)
 * against Capstan produce the objects kube-apiserver 1.36 stores for the same commands. The reference's
 * objects are recorded in test/golden/kubectl-generators/ (scripts/capture-kubectl-goldens.mjs; see
 * docs/development.md); each is compared field by field with Capstan's, except what is generated
 * (uids and the labels and selectors that carry them, times, resource versions, token-volume name
 * suffixes) and what is allocated (cluster IPs and node ports).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';
import { kubectlFor, type Kubectl } from './kubectl.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const GOLDEN = join(ROOT, 'test', 'golden', 'kubectl-generators');
interface Command {
  name: string;
  args: string[];
  get: string;
}
const { commands } = JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'kubectl-generators.json'), 'utf8')) as { commands: Command[] };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TOKEN_VOLUME = /^kube-api-access-[a-z0-9]{5}$/;
const ALLOCATED = new Set(['clusterIP', 'nodePort']);

/** The object with generated and allocated values replaced by placeholders (their presence still counts). */
function comparable(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return key === 'clusterIPs' ? value.map(() => '<allocated>') : value.map((v) => comparable(v));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === 'creationTimestamp' || k === 'resourceVersion' || k === 'managedFields') continue;
      out[k] = comparable(v, k);
    }
    return out;
  }
  if (typeof value === 'string') {
    if (UUID.test(value)) return '<uid>';
    if (TOKEN_VOLUME.test(value)) return 'kube-api-access-<generated>';
    if (ALLOCATED.has(key) && value !== 'None') return '<allocated>';
  }
  if (typeof value === 'number' && ALLOCATED.has(key)) return '<allocated>';
  return value;
}

let srv: TestServer;
let k: Kubectl;
before(async () => {
  // The goldens come from a kube-apiserver without kube-controller-manager: no disruption controller writes PDB status.
  srv = await startTestServer({ controllers: ['*', '-garbage-collector', '-disruption', '-resourcequota'] });
  k = kubectlFor(srv.kubeconfig);
  const created = await api(srv.url, '/api/v1/namespaces', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'gen' } }),
  });
  assert.equal(created.status, 201, created.text);
  for (const c of commands) await k.ok(['-n', 'gen', ...c.args]);
});
after(async () => {
  await srv?.stop();
});

for (const c of commands) {
  test(`kubectl ${c.args.slice(0, 3).join(' ')}: stored as kube-apiserver stores it`, async () => {
    const expected = JSON.parse(readFileSync(join(GOLDEN, `${c.name}.json`), 'utf8')) as unknown;
    const actual = await k.json(['-n', 'gen', 'get', c.get]);
    assert.deepEqual(comparable(actual), comparable(expected));
  });
}
