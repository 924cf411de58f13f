#!/usr/bin/env node
// Records what kube-apiserver 1.36 answers to the default admission plugins corpus
// (test/e2e/admission-defaults-replay.ts: RuntimeClass, PersistentVolumeClaimResize,
// DefaultIngressClass) into test/golden/admission-defaults/reference.json, which
// test/e2e/admission-defaults.test.ts compares Capstan with. The corpus's namespaces (plugins-*)
// and cluster objects are deleted afterwards; its default IngressClasses live only for three requests.
// Usage: npx tsc -p tsconfig.json && read URL TOKEN < /tmp/ref-url.txt && \
//   NODE_TLS_REJECT_UNAUTHORIZED=0 node scripts/capture-admission-defaults-goldens.mjs "$URL" "$TOKEN"
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanUp, replay } from '../dist/test/e2e/admission-defaults-replay.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error('usage: capture-admission-defaults-goldens.mjs URL TOKEN');
  process.exit(2);
}
const send = async (method, path, headers, body) => {
  const res = await fetch(url + path, { method, headers: { ...headers, authorization: `Bearer ${token}` }, body });
  return { status: res.status, text: await res.text() };
};
try {
  const results = await replay(send, 'plugins-');
  for (const r of results) console.log(`${r.status} ${r.name} ${r.message ?? JSON.stringify(r.fields)}`);
  mkdirSync(join(root, 'test', 'golden', 'admission-defaults'), { recursive: true });
  writeFileSync(join(root, 'test', 'golden', 'admission-defaults', 'reference.json'), `${JSON.stringify(results, null, 2)}\n`);
} finally {
  await cleanUp(send, 'plugins-');
}
