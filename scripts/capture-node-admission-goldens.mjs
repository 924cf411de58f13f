#!/usr/bin/env node
// Records what kube-apiserver 1.36 (with its kube-controller-manager) answers to the node admission
// corpora: test/e2e/node-taints-replay.ts (TaintNodesByCondition and the node lifecycle
// controller's NoSchedule taints) into test/golden/node-admission/taints.json, compared by
// test/e2e/node-taints.test.ts, and test/e2e/pod-resize-replay.ts (pods/resize, PodResizeValidator,
// NodeDeclaredFeatureValidator) into resize.json, compared by test/e2e/pod-resize.test.ts. Everything is named nodeplugins-* and deleted afterwards; the
// nodes live a few seconds (the reference's node lifecycle controller watches their heartbeats).
// Usage: npx tsc -p tsconfig.json && read URL TOKEN < /tmp/ref-url.txt && \
//   NODE_TLS_REJECT_UNAUTHORIZED=0 node scripts/capture-node-admission-goldens.mjs "$URL" "$TOKEN"
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as resize from '../dist/test/e2e/pod-resize-replay.js';
import * as taints from '../dist/test/e2e/node-taints-replay.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error('usage: capture-node-admission-goldens.mjs URL TOKEN');
  process.exit(2);
}
const send = async (method, path, headers, body) => {
  const res = await fetch(url + path, { method, headers: { ...headers, authorization: `Bearer ${token}` }, body });
  return { status: res.status, text: await res.text() };
};
const dir = join(root, 'test', 'golden', 'node-admission');
mkdirSync(dir, { recursive: true });
const write = (file, results) => {
  for (const r of results) console.log(`${r.status} ${r.name} ${r.message ?? JSON.stringify(r.taints ?? r.fields)}`);
  writeFileSync(join(dir, file), `${JSON.stringify(results, null, 2)}\n`);
};
try {
  write('taints.json', await taints.replay(send, 'nodeplugins-'));
} finally {
  await taints.cleanUp(send, 'nodeplugins-');
}
try {
  write('resize.json', await resize.replay(send, 'nodeplugins-'));
} finally {
  await resize.cleanUp(send, 'nodeplugins-');
}
