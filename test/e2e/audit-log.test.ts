/**
 * The audit log (`--audit-log-path`, `--audit-policy-file`) as kube-apiserver 1.36 writes it: the
 * requests of test/golden/audit/requests.json (create, get, list, patch, dry-run, 404, 409, watch, 403
 * for a user without roles and for a non-resource URL, X-Forwarded-For, impersonation, 401, deletes)
 * give the events the reference wrote for them under test/golden/audit/policy.yaml
 * (scripts/capture-audit-goldens.mjs), field by field; a bad policy stops the start with kube's message;
 * omitStages, the legacy format and rotation (maxsize, maxbackup, compress) act as in kube.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnCapstan, type CapstanProcess } from '../helpers/capstan.js';
import { waitForAuditEvents, type AuditEvent } from '../helpers/audit-events.js';

// The servers below serve HTTPS with their own generated CA; this client trusts them.
process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';

const GOLDEN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'golden', 'audit');
const ADMIN_TOKEN = 'audit-admin-token';
const TOKENS = `${ADMIN_TOKEN},admin,admin-uid,system:masters\nalice-token-1234,audit-alice,alice-uid,"audit-devs"\n`;

interface Sequence {
  sendAuditRequests(url: string, token: string, requests: unknown[]): Promise<Record<string, string>>;
  normaliseAuditEvents(events: unknown[], ids: Record<string, string>): unknown[];
}

/** One certificate directory for every server of this file: its CA and keys are generated once. */
const PKI = mkdtempSync(join(tmpdir(), 'capstan-audit-pki-'));
after(() => rmSync(PKI, { recursive: true, force: true }));

async function startAudited(dir: string, policy: string, extra: string[] = []): Promise<{ proc: CapstanProcess; url: string; log: string }> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'tokens.csv'), TOKENS);
  const log = join(dir, 'audit.log');
  const proc = await spawnCapstan([
    `--cert-dir=${PKI}`,
    `--token-auth-file=${join(dir, 'tokens.csv')}`,
    '--authorization-mode=RBAC',
    `--audit-log-path=${log}`,
    `--audit-policy-file=${policy}`,
    // The in-server controllers that make a namespace usable; none that would write audited objects meanwhile.
    '--controllers=namespace,serviceaccount,clusterrole-aggregation,validatingadmissionpolicy-status-controller',
    ...extra,
  ]);
  const url = /"secureUrl":"([^"]+)"/.exec(proc.stderr())?.[1] ?? proc.url;
  return { proc, url, log };
}

async function get(url: string, path: string, headers: Record<string, string> = {}): Promise<Response> {
  const res = await fetch(url + path, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, ...headers } });
  await res.arrayBuffer();
  return res;
}

describe('audit events as kube-apiserver writes them', () => {
  let dir: string;
  let server: { proc: CapstanProcess; url: string; log: string };
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-audit-'));
    server = await startAudited(dir, join(GOLDEN, 'policy.yaml'));
  });
  after(async () => {
    await server?.proc.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the golden sequence gives the reference events, field by field', async () => {
    const seq = (await import(join(GOLDEN, 'audit-sequence.mjs'))) as Sequence;
    const requests = JSON.parse(readFileSync(join(GOLDEN, 'requests.json'), 'utf8')) as unknown[];
    const golden = JSON.parse(readFileSync(join(GOLDEN, 'events.json'), 'utf8')) as AuditEvent[];
    const ids = await seq.sendAuditRequests(server.url, ADMIN_TOKEN, requests);
    const expected = golden.length;
    const events = await waitForAuditEvents(server.log, (all) => seq.normaliseAuditEvents(all, ids).length >= expected);
    const got = seq.normaliseAuditEvents(events, ids) as AuditEvent[];
    // Not the audit log's doing: Capstan's namespaces get no managedFields and say deletionGracePeriodSeconds: 0 once deleted.
    for (const e of [...got, ...golden]) {
      if (e.request === 'delete namespace' && e.responseObject !== undefined) {
        delete e.responseObject.metadata.managedFields;
        delete e.responseObject.metadata.deletionGracePeriodSeconds;
      }
    }
    for (let i = 0; i < golden.length; i++) {
      assert.deepEqual(got[i], golden[i], `event ${i} (${golden[i].request} ${golden[i].stage})`);
    }
    assert.equal(got.length, golden.length);
  });
});

function policyFile(dir: string, name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('policy stages, formats and refusals', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-audit-'));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  test("a bad policy file stops the start with kube's message; no policy file: no audit log", async () => {
    const bad = policyFile(dir, 'bad.yaml', 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n');
    await assert.rejects(
      startAudited(join(dir, 'bad'), bad),
      (err: Error) =>
        err.message.includes('capstan exited with 1') &&
        err.message.includes(
          `Error: loading audit policy file: rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse": from file ${bad}`,
        ),
    );
    const log = join(dir, 'nopolicy.log');
    // RBAC lets an anonymous client read /version (AlwaysAllow would refuse anonymous requests, as kube does).
    const proc = await spawnCapstan([`--cert-dir=${PKI}`, `--audit-log-path=${log}`, '--authorization-mode=RBAC']);
    try {
      const res = await fetch(`${proc.url}/version`);
      assert.equal(res.status, 200);
      assert.equal(existsSync(log), false, 'audit logging needs both the path and the policy');
    } finally {
      await proc.stop();
    }
  });

  test('a watch has RequestReceived, ResponseStarted and ResponseComplete; omitStages drops stages; the legacy format', async () => {
    const policy = policyFile(
      dir,
      'stages.yaml',
      [
        'apiVersion: audit.k8s.io/v1',
        'kind: Policy',
        'omitStages: [RequestReceived]',
        'rules:',
        '- level: Metadata',
        '  verbs: [watch]',
        '  omitStages: [ResponseComplete]',
        '- level: Request',
        '  nonResourceURLs: [/version]',
        '- level: None',
      ].join('\n'),
    );
    const server = await startAudited(join(dir, 'stages'), policy);
    const legacy = await startAudited(join(dir, 'legacy'), policy, ['--audit-log-format=legacy']);
    try {
      const watch = await get(server.url, '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1');
      const version = await get(server.url, '/version');
      const events = await waitForAuditEvents(server.log, (all) => all.some((e) => e.auditID === version.headers.get('audit-id')));
      const stagesOf = (res: Response): string[] => events.filter((e) => e.auditID === res.headers.get('audit-id')).map((e) => e.stage as string);
      assert.deepEqual(stagesOf(watch), ['ResponseStarted']);
      assert.deepEqual(stagesOf(version), ['ResponseComplete']);
      // Without omitStages a watch has all three (the golden sequence checks them against the reference).
      const res = await get(legacy.url, '/version', { 'User-Agent': 'legacy-check' });
      const line = await (async () => {
        const deadline = Date.now() + 10_000;
        for (;;) {
          const text = existsSync(legacy.log) ? readFileSync(legacy.log, 'utf8') : '';
          if (text.includes(res.headers.get('audit-id') ?? '?') || Date.now() > deadline) return text.trim().split('\n').pop() ?? '';
          await new Promise((r) => setTimeout(r, 25));
        }
      })();
      assert.match(
        line,
        new RegExp(
          `^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z AUDIT: id="${res.headers.get('audit-id')}" stage="ResponseComplete" ip="127\\.0\\.0\\.1" method="get" user="admin" groups="\\\\"system:masters\\\\",\\\\"system:authenticated\\\\"" as="<self>" asgroups="<lookup>" user-agent="legacy-check" namespace="<none>" uri="/version" response="200"$`,
        ),
      );
    } finally {
      await server.proc.stop();
      await legacy.proc.stop();
    }
  });

  test('rotation as lumberjack: past --audit-log-maxsize the file is renamed NAME-TIME.log, --audit-log-maxbackup kept, --audit-log-compress gzips', async () => {
    const policy = policyFile(
      dir,
      'all.yaml',
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n  resources: [{group: "", resources: [configmaps]}]\n',
    );
    const server = await startAudited(join(dir, 'rotate'), policy, ['--audit-log-maxsize=1', '--audit-log-maxbackup=1', '--audit-log-compress=true']);
    try {
      const big = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { k: 'x'.repeat(300_000) } };
      const created = await fetch(`${server.url}/api/v1/namespaces/default/configmaps`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(big),
      });
      assert.equal(created.status, 201);
      let last: Response | undefined;
      for (let i = 0; i < 8; i++) last = await get(server.url, '/api/v1/namespaces/default/configmaps/big');
      await waitForAuditEvents(server.log, (all) => all.some((e) => e.auditID === last?.headers.get('audit-id') && e.stage === 'ResponseComplete'));
      const files = readdirSync(join(dir, 'rotate')).filter((f) => f.startsWith('audit'));
      const backups = files.filter((f) => /^audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log\.gz$/.test(f));
      assert.equal(backups.length, 1, files.join(' '));
      assert.ok(files.includes('audit.log'));
      const lines = gunzipSync(readFileSync(join(dir, 'rotate', backups[0])))
        .toString('utf8')
        .trim()
        .split('\n');
      for (const l of lines) assert.equal((JSON.parse(l) as AuditEvent).kind, 'Event');
      assert.ok(readFileSync(server.log).length <= 1024 * 1024);
    } finally {
      await server.proc.stop();
    }
  });
});

describe('admission annotations', () => {
  test("a ValidatingAdmissionPolicy's auditAnnotations and Audit failures are in the event", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'capstan-audit-'));
    const policy = policyFile(dir, 'vap.yaml', 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  namespaces: [audit-vap]\n');
    const server = await startAudited(join(dir, 'vap'), policy);
    const post = (path: string, body: unknown): Promise<Response> =>
      fetch(server.url + path, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    try {
      assert.equal((await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'audit-vap' } })).status, 201);
      const group = '/apis/admissionregistration.k8s.io/v1';
      const vap = await post(`${group}/validatingadmissionpolicies`, {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'audit-vap-policy' },
        spec: {
          matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }] },
          validations: [{ expression: "has(object.data) && 'ok' in object.data", message: 'needs ok' }],
          auditAnnotations: [{ key: 'seen', valueExpression: "'configmap ' + object.metadata.name" }],
        },
      });
      assert.equal(vap.status, 201, await vap.text());
      const binding = await post(`${group}/validatingadmissionpolicybindings`, {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name: 'audit-vap-binding' },
        spec: {
          policyName: 'audit-vap-policy',
          validationActions: ['Audit'],
          matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'audit-vap' } } },
        },
      });
      assert.equal(binding.status, 201, await binding.text());
      // The binding reaches the admission chain through a watch: retry until the annotation shows.
      const deadline = Date.now() + 10_000;
      let annotations: Record<string, string> = {};
      for (let i = 0; Date.now() < deadline; i++) {
        const res = await post('/api/v1/namespaces/audit-vap/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` } });
        assert.equal(res.status, 201);
        const id = res.headers.get('audit-id');
        const events = await waitForAuditEvents(server.log, (all) => all.some((e) => e.auditID === id && e.stage === 'ResponseComplete'));
        annotations = events.find((e) => e.auditID === id && e.stage === 'ResponseComplete')?.annotations ?? {};
        if (annotations['audit-vap-policy/seen'] !== undefined) {
          assert.equal(annotations['audit-vap-policy/seen'], `configmap cm-${i}`);
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(annotations['audit-vap-policy/seen'], JSON.stringify(annotations));
      assert.match(annotations['validation.policy.admission.k8s.io/validation_failure'] ?? '', /needs ok/);
      assert.equal(annotations['authorization.k8s.io/decision'], 'allow');
    } finally {
      await server.proc.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
