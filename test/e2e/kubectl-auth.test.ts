/**
 * kubectl auth can-i (one verb, --list, --as, --as-group, subresources, resource names, non-resource
 * URLs) and kubectl auth whoami against Capstan with RBAC on print what they print against
 * kube-apiserver 1.36 (test/golden/kubectl-auth/reference.json, recorded by
 * scripts/capture-kubectl-auth-goldens.mjs), exit codes included.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { kubectlFor } from './kubectl.js';
import { NAMESPACE, SETUP, runTranscript, type TranscriptLine } from './kubectl-auth-transcript.js';

const golden = JSON.parse(readFileSync(join(process.cwd(), 'test', 'golden', 'kubectl-auth', 'reference.json'), 'utf8')) as TranscriptLine[];

let srv: TestServer;
before(async () => {
  srv = await startTestServer({ authorizationMode: 'RBAC' });
});
after(async () => {
  await srv?.stop();
});

test(`kubectl auth can-i and whoami print the reference's transcript: ${golden.length} commands`, async () => {
  const k = kubectlFor(srv.kubeconfig);
  await k.ok(['apply', '-f', '-'], { input: SETUP });
  // The binding reaches the authorizer through the change stream: ask until it allows.
  const deadline = Date.now() + 10_000;
  while ((await k.run(['auth', 'can-i', 'get', 'pods', '-n', NAMESPACE, '--as=alice'])).code !== 0) {
    assert.ok(Date.now() < deadline, 'the RoleBinding never allowed alice');
  }
  const lines = await runTranscript((args) => k.run(args));
  assert.equal(lines.length, golden.length);
  for (const [i, line] of lines.entries()) {
    const want = golden[i];
    const what = `kubectl ${want.args.join(' ')}`;
    assert.deepEqual(line.args, want.args);
    assert.equal(line.stdout, want.stdout, `${what}: stdout`);
    assert.equal(line.stderr, want.stderr, `${what}: stderr`);
    assert.equal(line.code, want.code, `${what}: exit code`);
  }
});
