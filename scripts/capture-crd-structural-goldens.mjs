#!/usr/bin/env node
// Records what kube-apiserver 1.36 answers to each dry-run CRD create of
// test/fixtures/crd-structural/cases.json (structural schemas, forbidden schema fields,
// x-kubernetes-* extensions, defaults, patterns) into test/golden/crd-structural/reference.json,
// which test/e2e/crd-structural.test.ts compares Capstan with. Nothing is stored (dryRun=All).
// Usage: npx tsc -p tsconfig.json && read URL TOKEN < /tmp/ref-url.txt && \
//   NODE_TLS_REJECT_UNAUTHORIZED=0 node scripts/capture-crd-structural-goldens.mjs "$URL" "$TOKEN"
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { splitWarnings } from '../dist/test/e2e/cr-schema-replay.js';
import { replayStructural } from '../dist/test/e2e/crd-structural-replay.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error('usage: capture-crd-structural-goldens.mjs URL TOKEN');
  process.exit(2);
}
const send = async (method, path, headers, body) => {
  const res = await fetch(url + path, { method, headers: { ...headers, authorization: `Bearer ${token}` }, body });
  return { status: res.status, warnings: splitWarnings(res.headers.get('warning')), text: await res.text() };
};
const fixture = JSON.parse(readFileSync(join(root, 'test', 'fixtures', 'crd-structural', 'cases.json'), 'utf8'));
const group = `crd-structural-${Math.random().toString(36).slice(2, 8)}.example.com`;
const results = await replayStructural(send, fixture, group);
for (const r of results) console.log(`${r.status} ${r.name}`);
mkdirSync(join(root, 'test', 'golden', 'crd-structural'), { recursive: true });
writeFileSync(join(root, 'test', 'golden', 'crd-structural', 'reference.json'), `${JSON.stringify(results, null, 2)}\n`);
