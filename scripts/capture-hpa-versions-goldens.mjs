#!/usr/bin/env node
// Records kube-apiserver 1.36's answers to the HorizontalPodAutoscaler managedFields sequence of
// test/e2e/hpa-versions-sequence.ts into test/golden/managedfields/hpa-versions.json, which
// test/e2e/managed-fields-versions.test.ts compares Capstan with. Its namespace is deleted afterwards.
// Usage: npx tsc -p tsconfig.json && read URL TOKEN < /tmp/ref-url.txt && \
//   NODE_TLS_REJECT_UNAUTHORIZED=0 node scripts/capture-hpa-versions-goldens.mjs "$URL" "$TOKEN"
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanUpHpaVersions, hpaVersionsSequence } from '../dist/test/e2e/hpa-versions-sequence.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error('usage: capture-hpa-versions-goldens.mjs URL TOKEN');
  process.exit(2);
}
const send = async (method, path, contentType, body) => {
  const res = await fetch(url + path, { method, headers: { 'content-type': contentType, authorization: `Bearer ${token}` }, body });
  return { status: res.status, body: await res.json() };
};
try {
  const results = await hpaVersionsSequence(send);
  for (const r of results) console.log(`${r.status} ${r.step}`);
  writeFileSync(join(root, 'test', 'golden', 'managedfields', 'hpa-versions.json'), `${JSON.stringify(results, null, 2)}\n`);
} finally {
  await cleanUpHpaVersions(send);
}
