#!/usr/bin/env node
// Records kube-apiserver 1.36's answers (status, message, Warning headers in order) to the pod
// warnings corpus (test/e2e/pod-warnings-replay.ts) into test/golden/pod-warnings/reference.json,
// which test/e2e/pod-warnings.test.ts compares Capstan with. The corpus's namespace is deleted afterwards.
// Usage: npx tsc -p tsconfig.json && read URL TOKEN < /tmp/ref-url.txt && \
//   NODE_TLS_REJECT_UNAUTHORIZED=0 node scripts/capture-pod-warnings-goldens.mjs "$URL" "$TOKEN"
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanUp, replay, splitWarnings, NAMESPACE } from '../dist/test/e2e/pod-warnings-replay.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error('usage: capture-pod-warnings-goldens.mjs URL TOKEN');
  process.exit(2);
}
const send = async (method, path, headers, body) => {
  const res = await fetch(url + path, { method, headers: { ...headers, authorization: `Bearer ${token}` }, body });
  return { status: res.status, warnings: splitWarnings(res.headers.get('warning')), text: await res.text() };
};
try {
  const results = await replay(send, NAMESPACE);
  for (const r of results) console.log(`${r.status} ${r.warnings.length}w ${r.name}${r.message ? `: ${r.message}` : ''}`);
  mkdirSync(join(root, 'test', 'golden', 'pod-warnings'), { recursive: true });
  writeFileSync(join(root, 'test', 'golden', 'pod-warnings', 'reference.json'), `${JSON.stringify(results, null, 2)}\n`);
} finally {
  await cleanUp(send, NAMESPACE);
}
