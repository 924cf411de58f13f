#!/usr/bin/env node
// Records what kube-apiserver 1.36 makes of metadata.managedFields for each operation sequence of
// test/fixtures/managedfields/*.json into test/golden/managedfields/ (same file names), which
// test/e2e/managed-fields.test.ts compares Capstan with. Each step runs in its own second, so that
// every entry's time names the step that set it (`step-N`) and entries sort as kube sorts them.
// Usage: npx tsc -p tsconfig.json && NODE_TLS_REJECT_UNAUTHORIZED=0 \
//   node scripts/capture-managedfields-goldens.mjs URL TOKEN   (e.g. `read URL TOKEN < /tmp/ref-url.txt`)
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { labelTimes, replay } from '../dist/test/e2e/managed-fields-replay.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error('usage: capture-managedfields-goldens.mjs URL TOKEN');
  process.exit(2);
}
const send = async (method, path, headers, body) => {
  const res = await fetch(url + path, { method, headers: { ...headers, authorization: `Bearer ${token}` }, body });
  return { status: res.status, text: await res.text() };
};
const nextSecond = () => new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
const only = process.argv[4];
const fixtures = join(root, 'test', 'fixtures', 'managedfields');
const out = join(root, 'test', 'golden', 'managedfields');
mkdirSync(out, { recursive: true });
for (const file of readdirSync(fixtures)
  .filter((f) => f.endsWith('.json'))
  .sort()) {
  if (only && !file.startsWith(only)) continue;
  const { sequences } = JSON.parse(readFileSync(join(fixtures, file), 'utf8'));
  const golden = [];
  for (const seq of sequences) {
    const ns = `mf-${Math.random().toString(36).slice(2, 8)}`;
    await send(
      'POST',
      '/api/v1/namespaces',
      { 'content-type': 'application/json' },
      JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
    );
    // Without kube-controller-manager nobody creates the namespace's default ServiceAccount.
    await send(
      'POST',
      `/api/v1/namespaces/${ns}/serviceaccounts`,
      { 'content-type': 'application/json' },
      JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } }),
    );
    const seconds = [];
    const results = await replay(send, ns, seq, async () => {
      await nextSecond();
      seconds.push(Math.floor(Date.now() / 1000));
    });
    golden.push({ name: seq.name, steps: labelTimes(results, seconds) });
    console.log(`${file} ${seq.name}: ${results.map((r) => r.status).join(' ')}`);
    await send('DELETE', `/api/v1/namespaces/${ns}`, {});
  }
  writeFileSync(join(out, file), `${JSON.stringify({ sequences: golden }, null, 2)}\n`);
}
