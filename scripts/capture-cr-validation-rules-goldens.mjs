#!/usr/bin/env node
// Records what kube-apiserver 1.36 answers to the cases of test/fixtures/cr-validation-rules/:
// cases.json (custom resources checked by the x-kubernetes-validations CEL rules of their CRD,
// created and updated) into test/golden/cr-validation-rules/reference.json, and crd-cases.json
// (CRDs whose rules kube rejects or accepts at creation) into .../crd-reference.json.
// test/e2e/cr-validation-rules.test.ts compares Capstan with both. Every CRD is created in a group
// of its own and deleted afterwards.
// Usage: npx tsc -p tsconfig.json && read URL TOKEN < /tmp/ref-url.txt && \
//   NODE_TLS_REJECT_UNAUTHORIZED=0 node scripts/capture-cr-validation-rules-goldens.mjs "$URL" "$TOKEN"
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crdObject, replay, splitWarnings } from '../dist/test/e2e/cr-schema-replay.js';
import { replayCrdCases } from '../dist/test/e2e/cr-validation-rules-replay.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error('usage: capture-cr-validation-rules-goldens.mjs URL TOKEN');
  process.exit(2);
}
const send = async (method, path, headers, body) => {
  const res = await fetch(url + path, { method, headers: { ...headers, authorization: `Bearer ${token}` }, body });
  return { status: res.status, warnings: splitWarnings(res.headers.get('warning')), text: await res.text() };
};
const fixtures = join(root, 'test', 'fixtures', 'cr-validation-rules');
const goldens = join(root, 'test', 'golden', 'cr-validation-rules');
mkdirSync(goldens, { recursive: true });

const crdCases = JSON.parse(readFileSync(join(fixtures, 'crd-cases.json'), 'utf8'));
const crdResults = await replayCrdCases(send, crdCases, `celrules-${Math.random().toString(36).slice(2, 8)}`);
for (const r of crdResults) console.log(`${r.status} CRD ${r.name}`);
writeFileSync(join(goldens, 'crd-reference.json'), `${JSON.stringify(crdResults, null, 2)}\n`);

const { crd, cases } = JSON.parse(readFileSync(join(fixtures, 'cases.json'), 'utf8'));
const group = `celrules-${Math.random().toString(36).slice(2, 8)}.example.com`;
const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const created = await send('POST', crdPath, { 'content-type': 'application/json' }, JSON.stringify(crdObject(crd, group)));
if (created.status !== 201) throw new Error(`CRD not created: ${created.status} ${created.text}`);
const name = `${crd.plural}.${group}`;
try {
  for (let i = 0; ; i++) {
    const got = JSON.parse((await send('GET', `${crdPath}/${name}`, {})).text);
    if ((got.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True')) break;
    if (i > 100) throw new Error('CRD not established');
    await new Promise((r) => setTimeout(r, 100));
  }
  for (let i = 0; (await send('GET', `/apis/${group}/v1/${crd.plural}`, {})).status !== 200; i++) {
    if (i > 100) throw new Error('custom resource not served');
    await new Promise((r) => setTimeout(r, 100));
  }
  const results = await replay(send, crd, group, cases);
  for (const r of results) console.log(`${r.status} ${r.name}`);
  writeFileSync(join(goldens, 'reference.json'), `${JSON.stringify(results, null, 2)}\n`);
} finally {
  await send('DELETE', `${crdPath}/${name}`, {});
}
