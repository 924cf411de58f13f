/**
 * The default admission plugins RuntimeClass, PersistentVolumeClaimResize and DefaultIngressClass
 * answer as kube-apiserver 1.36 answered the same corpus (test/e2e/admission-defaults-replay.ts,
 * recorded by scripts/capture-admission-defaults-goldens.mjs into test/golden/admission-defaults/).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { replay, type ReplayResult } from './admission-defaults-replay.js';

let srv: TestServer;
before(async () => {
  srv = await startTestServer();
});
after(async () => {
  await srv?.stop();
});

const golden = JSON.parse(readFileSync(join(process.cwd(), 'test', 'golden', 'admission-defaults', 'reference.json'), 'utf8')) as ReplayResult[];

test('every default admission plugin case answers as kube-apiserver 1.36 answered it', async () => {
  const results = await replay(async (method, path, headers, body) => {
    const res = await fetch(srv.url + path, { method, headers, body });
    return { status: res.status, text: await res.text() };
  }, 'plugins-');
  assert.equal(results.length, golden.length);
  const mismatches = results.filter((r, i) => JSON.stringify(r) !== JSON.stringify(golden[i]));
  assert.deepEqual(
    mismatches.map((m) => ({ got: m, want: golden.find((g) => g.name === m.name) })),
    [],
  );
});
