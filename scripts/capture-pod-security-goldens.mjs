#!/usr/bin/env node
// Records what kube-apiserver 1.36 answers to the Pod Security corpus (test/e2e/pod-security-replay.ts:
// labelled namespaces, pods and workloads breaking each check, raising a namespace's enforce level over
// existing pods) into test/golden/pod-security/reference.json, which test/e2e/pod-security.test.ts
// compares Capstan with. The corpus's namespaces (psa-*) are deleted afterwards.
// Usage: npx tsc -p tsconfig.json && read URL TOKEN < /tmp/ref-url.txt && \
//   NODE_TLS_REJECT_UNAUTHORIZED=0 node scripts/capture-pod-security-goldens.mjs "$URL" "$TOKEN"
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanUp, replay, splitWarnings } from '../dist/test/e2e/pod-security-replay.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error('usage: capture-pod-security-goldens.mjs URL TOKEN');
  process.exit(2);
}
const send = async (method, path, headers, body) => {
  const res = await fetch(url + path, { method, headers: { ...headers, authorization: `Bearer ${token}` }, body });
  return { status: res.status, warnings: splitWarnings(res.headers.get('warning')), text: await res.text() };
};
try {
  const results = await replay(send, 'psa-');
  for (const r of results) console.log(`${r.status} ${r.warnings.length}w ${r.name}`);
  mkdirSync(join(root, 'test', 'golden', 'pod-security'), { recursive: true });
  writeFileSync(join(root, 'test', 'golden', 'pod-security', 'reference.json'), `${JSON.stringify(results, null, 2)}\n`);
} finally {
  await cleanUp(send, 'psa-');
}
