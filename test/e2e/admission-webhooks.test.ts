/**
 * Mutating and validating admission webhooks against an HTTPS webhook server in the test process
 * (generated CA): what the AdmissionReview carries, allow / deny / JSONPatch answers, failure
 * policies on refused connections and timeouts, namespace and object selectors, match conditions,
 * Equivalent matching across versions, subresource rules, reinvocation, dry-run side effects, Service
 * references, warnings, and webhook configurations being exempt from webhooks. Messages and codes
 * are kube-apiserver 1.36's (checked on the reference).
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { createServer } from 'node:net';
import { MemoryStorage } from '../../src/storage/memory-storage.js';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { startWebhookServer, type TestWebhookServer, type WebhookCall } from '../helpers/webhook-server.js';
import { assertStatus, restFor, type Rest } from './rest.js';

type Obj = Record<string, any>;

let srv: TestServer;
let storage: MemoryStorage;
let hooks: TestWebhookServer;
let rest: Rest;
let ns: string;
let refusedPort: number;

before(async () => {
  storage = new MemoryStorage({ historyMs: 300_000 });
  // RBAC decides the matchConditions' authorizer checks for other users (the plain-HTTP client is an administrator).
  srv = await startTestServer({ authorizationMode: 'RBAC' }, storage);
  rest = restFor(srv.url);
  hooks = await startWebhookServer(['localhost', 'hooks.wh-svc.svc']);
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  refusedPort = (probe.address() as { port: number }).port;
  await new Promise<void>((r) => probe.close(() => r()));
});

after(async () => {
  await srv?.stop();
  await hooks?.stop();
});

let configs: string[] = [];
beforeEach(async () => {
  for (const c of configs) {
    await rest.del(`/apis/admissionregistration.k8s.io/v1/${c}`);
  }
  configs = [];
  hooks.calls.length = 0;
  ns = await rest.namespace('wh');
  await rest.patch(`/api/v1/namespaces/${ns}`, { metadata: { labels: { 'webhook-test': ns } } });
});

/** A webhook that answers with `answer(request)` as the AdmissionReview response. */
function respond(path: string, answer: (request: Obj, call: WebhookCall) => Obj): void {
  hooks.handle(path, (call) => {
    const review = call.body as Obj;
    return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, ...answer(review.request, call) } };
  });
}

function patchOf(ops: unknown[]): string {
  return Buffer.from(JSON.stringify(ops)).toString('base64');
}

/** One webhook entry, scoped to this test's namespace, calling `path` on the test server. */
function webhook(name: string, path: string, extra: Obj = {}): Obj {
  return {
    name,
    clientConfig: { url: `https://localhost:${hooks.port}${path}`, caBundle: hooks.certs.caBundle },
    rules: [{ operations: ['CREATE', 'UPDATE', 'DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    namespaceSelector: { matchLabels: { 'webhook-test': ns } },
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    timeoutSeconds: 5,
    ...extra,
  };
}

async function configure(kind: 'validating' | 'mutating', name: string, webhooks: Obj[]): Promise<void> {
  const resource = `${kind}webhookconfigurations`;
  const Kind = kind === 'validating' ? 'ValidatingWebhookConfiguration' : 'MutatingWebhookConfiguration';
  await rest.create(`/apis/admissionregistration.k8s.io/v1/${resource}`, {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: Kind,
    metadata: { name },
    webhooks,
  });
  configs.push(`${resource}/${name}`);
}

/** A denial without a reason: Go omits the empty reason. */
function assertDenied(r: Awaited<ReturnType<Rest['post']>>, message: string): void {
  assert.equal(r.status, 400, r.text);
  assert.deepEqual(r.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 400 });
}

const cm = (name: string, labels: Obj = {}, data: Obj = { a: 'b' }): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data });
const cms = (): string => `/api/v1/namespaces/${ns}/configmaps`;

test('the AdmissionReview carries what kube fills for create, update and delete', async () => {
  const requests: Obj[] = [];
  respond('/record', (req) => {
    requests.push(req);
    return { allowed: true };
  });
  await configure('validating', `${ns}-record`, [webhook('record.example.com', '/record')]);
  const created = await rest.create(`${cms()}?fieldManager=tester`, cm('c1'));
  const r = await rest.put(`${cms()}/c1`, { ...created, data: { a: 'c' } });
  assert.equal(r.status, 200, r.text);
  assert.equal((await rest.del(`${cms()}/c1`, { propagationPolicy: 'Background' })).status, 200);
  assert.equal(requests.length, 3);
  const [create, update, del] = requests;
  assert.match(create.uid, /^[0-9a-f-]{36}$/);
  assert.deepEqual(
    { ...create, uid: '', object: undefined },
    {
      uid: '',
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      requestKind: { group: '', version: 'v1', kind: 'ConfigMap' },
      requestResource: { group: '', version: 'v1', resource: 'configmaps' },
      name: 'c1',
      namespace: ns,
      operation: 'CREATE',
      userInfo: { username: 'system:admin', groups: ['system:masters', 'system:authenticated'] },
      object: undefined,
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'tester' },
    },
  );
  assert.deepEqual(Object.keys(create), [
    'uid',
    'kind',
    'resource',
    'requestKind',
    'requestResource',
    'name',
    'namespace',
    'operation',
    'userInfo',
    'object',
    'oldObject',
    'dryRun',
    'options',
  ]);
  assert.equal(create.object.metadata.name, 'c1');
  assert.equal(update.operation, 'UPDATE');
  assert.equal(update.object.data.a, 'c');
  assert.equal(update.oldObject.data.a, 'b');
  assert.deepEqual(update.options, { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' });
  assert.equal(del.operation, 'DELETE');
  assert.equal(del.object, null);
  assert.equal(del.oldObject.data.a, 'c');
  assert.deepEqual(del.options, { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', propagationPolicy: 'Background' });
});

test('a denial is the request error, worded and coded as kube words it; warnings become Warning headers', async () => {
  respond('/deny', (req) =>
    req.object?.metadata?.name === 'bad'
      ? { allowed: false, status: { message: 'name "bad" is not allowed', code: 403, reason: 'Forbidden' }, warnings: ['you asked for bad'] }
      : req.object?.metadata?.name === 'bare'
        ? { allowed: false }
        : { allowed: true, warnings: ['looked at it'] },
  );
  await configure('validating', `${ns}-deny`, [webhook('deny.example.com', '/deny')]);
  const denied = await rest.post(cms(), cm('bad'));
  assertStatus(denied, 403, 'Forbidden', 'admission webhook "deny.example.com" denied the request: name "bad" is not allowed');
  assert.equal(denied.headers.get('warning'), '299 - "you asked for bad"');
  const bare = await rest.post(cms(), cm('bare'));
  assertDenied(bare, 'admission webhook "deny.example.com" denied the request without explanation');
  const ok = await rest.post(cms(), cm('good'));
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.headers.get('warning'), '299 - "looked at it"');
});

test('failurePolicy: Fail turns a refused connection or a timeout into 500; Ignore lets the write through', async () => {
  hooks.handle('/hang', () => undefined);
  await configure('validating', `${ns}-fail`, [
    webhook('refused.example.com', '/x', { clientConfig: { url: `https://127.0.0.1:${refusedPort}/x` }, objectSelector: { matchLabels: { case: 'refused' } } }),
    webhook('slow.example.com', '/hang', { timeoutSeconds: 1, objectSelector: { matchLabels: { case: 'slow' } } }),
    webhook('ignored.example.com', '/x', {
      clientConfig: { url: `https://127.0.0.1:${refusedPort}/x` },
      failurePolicy: 'Ignore',
      objectSelector: { matchLabels: { case: 'ignored' } },
    }),
  ]);
  const refused = await rest.post(cms(), cm('r', { case: 'refused' }));
  const reason = `failed calling webhook "refused.example.com": failed to call webhook: Post "https://127.0.0.1:${refusedPort}/x?timeout=5s": dial tcp 127.0.0.1:${refusedPort}: connect: connection refused`;
  assertStatus(refused, 500, 'InternalError', `Internal error occurred: ${reason}`);
  assert.deepEqual(refused.body.details, { causes: [{ message: reason }] });
  const started = Date.now();
  const slow = await rest.post(cms(), cm('s', { case: 'slow' }));
  assertStatus(
    slow,
    500,
    'InternalError',
    `Internal error occurred: failed calling webhook "slow.example.com": failed to call webhook: Post "https://localhost:${hooks.port}/hang?timeout=1s": context deadline exceeded`,
  );
  assert.ok(Date.now() - started < 4000);
  assert.equal((await rest.post(cms(), cm('i', { case: 'ignored' }))).status, 201);
});

test('JSONPatch answers mutate the stored object; validating webhooks see the mutated object', async () => {
  respond('/mutate', (req) => ({
    allowed: true,
    patchType: 'JSONPatch',
    patch: patchOf([
      { op: 'add', path: '/data/mutated', value: 'yes' },
      { op: 'add', path: '/metadata/labels/by', value: req.operation.toLowerCase() },
    ]),
  }));
  let seen: Obj | undefined;
  respond('/see', (req) => {
    seen = req.object;
    return { allowed: true };
  });
  await configure('mutating', `${ns}-mutate`, [webhook('mutate.example.com', '/mutate')]);
  await configure('validating', `${ns}-see`, [webhook('see.example.com', '/see')]);
  const created = await rest.create(cms(), cm('m', { keep: 'x' }));
  assert.equal(created.data.mutated, 'yes');
  assert.equal(created.metadata.labels.by, 'create');
  assert.equal(seen?.data.mutated, 'yes');
  const got = await rest.get(`${cms()}/m`);
  assert.equal(got.body.data.mutated, 'yes');
});

test('invalid mutating answers fail as kube fails them', async () => {
  respond('/nopatchtype', () => ({ allowed: true, patch: patchOf([{ op: 'add', path: '/data/x', value: 'y' }]) }));
  respond('/badpatch', () => ({ allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'remove', path: '/data/nothere' }]) }));
  await configure('mutating', `${ns}-invalid`, [
    webhook('nopatchtype.example.com', '/nopatchtype', { objectSelector: { matchLabels: { case: 'a' } } }),
    webhook('badpatch.example.com', '/badpatch', { objectSelector: { matchLabels: { case: 'b' } } }),
  ]);
  assertStatus(
    await rest.post(cms(), cm('a', { case: 'a' })),
    500,
    'InternalError',
    'Internal error occurred: failed calling webhook "nopatchtype.example.com": received invalid webhook response: webhook returned response.patch but not response.patchType',
  );
  const bad = await rest.post(cms(), cm('b', { case: 'b' }));
  assert.equal(bad.status, 500, bad.text);
  assert.equal(bad.body.reason, 'InternalError');
});

test('namespaceSelector and objectSelector (old or new object) decide which writes a webhook sees', async () => {
  respond('/count', () => ({ allowed: true }));
  await configure('validating', `${ns}-sel`, [
    webhook('sel.example.com', '/count', { objectSelector: { matchExpressions: [{ key: 'watched', operator: 'Exists' }] } }),
  ]);
  const other = await rest.namespace('wh-other');
  await rest.create(`/api/v1/namespaces/${other}/configmaps`, cm('x', { watched: 'y' }));
  assert.equal(hooks.calls.length, 0, 'another namespace is not selected');
  const plain = await rest.create(cms(), cm('plain'));
  assert.equal(hooks.calls.length, 0, 'an unlabelled object is not selected');
  await rest.create(cms(), cm('w', { watched: 'y' }));
  assert.equal(hooks.calls.length, 1);
  // Removing the label: the old object still matches.
  const r = await rest.patch(`${cms()}/w`, { metadata: { labels: { watched: null } } });
  assert.equal(r.status, 200, r.text);
  assert.equal(hooks.calls.length, 2);
  assert.equal((await rest.patch(`${cms()}/plain`, { data: { c: 'd' } })).status, 200);
  assert.equal(hooks.calls.length, 2);
  assert.ok(plain);
});

test('a Namespace is matched by its own labels on create and update', async () => {
  respond('/ns', (req) => ({ allowed: false, status: { message: `no namespace ${String(req.name)}` } }));
  await configure('validating', `${ns}-ns`, [
    webhook('ns.example.com', '/ns', {
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'] }],
      namespaceSelector: { matchLabels: { 'deny-me': ns } },
    }),
  ]);
  const name = `${ns}-child`;
  const denied = await rest.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'deny-me': ns } } });
  assertDenied(denied, `admission webhook "ns.example.com" denied the request: no namespace ${name}`);
  assert.equal((await rest.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } })).status, 201);
  await rest.del(`/api/v1/namespaces/${name}`);
});

test('matchConditions (CEL) skip the webhook when a condition is false', async () => {
  respond('/mc', () => ({ allowed: false, status: { message: 'matched' } }));
  await configure('validating', `${ns}-mc`, [
    webhook('mc.example.com', '/mc', { matchConditions: [{ name: 'not-skip-me', expression: "object.metadata.name != 'skip-me'" }] }),
  ]);
  assert.equal((await rest.post(cms(), cm('skip-me'))).status, 201);
  assertDenied(await rest.post(cms(), cm('other')), 'admission webhook "mc.example.com" denied the request: matched');
});

test("matchConditions ask the authorizer: a service account's permission and the requester's on the request resource", async () => {
  respond('/authz', () => ({ allowed: false, status: { message: 'called' } }));
  const bot = `authorizer.serviceAccount(object.metadata.namespace, 'bot').group('').resource('configmaps').namespace(object.metadata.namespace).check('create')`;
  await configure('validating', `${ns}-authz`, [
    webhook('authz.example.com', '/authz', {
      matchConditions: [
        { name: 'bot-may-create', expression: `${bot}.allowed()` },
        { name: 'requester-may-delete', expression: "authorizer.requestResource.check('delete').allowed()" },
      ],
    }),
  ]);
  assert.equal((await rest.post(cms(), cm('before'))).status, 201);
  assert.equal(hooks.calls.length, 0);
  await rest.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'bot' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
    subjects: [{ kind: 'ServiceAccount', name: 'bot', namespace: ns }],
  });
  // The binding reaches the server's RBAC cache through its watch: retry until the webhook is called.
  let r = await rest.post(cms(), cm('after-0'));
  for (let i = 1; r.status === 201 && i < 100; i++) r = await rest.post(cms(), cm(`after-${i}`));
  assertDenied(r, 'admission webhook "authz.example.com" denied the request: called');
});

test('rules: subresources, scope, and Equivalent matching across versions with the object converted', async () => {
  const seen: Obj[] = [];
  respond('/seen', (req) => {
    seen.push(req);
    return { allowed: true };
  });
  await configure('validating', `${ns}-rules`, [
    webhook('status.example.com', '/seen', {
      rules: [{ operations: ['UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['*/status'], scope: 'Namespaced' }],
    }),
    webhook('hpa.example.com', '/seen', {
      rules: [{ operations: ['CREATE'], apiGroups: ['autoscaling'], apiVersions: ['v2'], resources: ['horizontalpodautoscalers'] }],
    }),
    webhook('exact.example.com', '/seen', {
      matchPolicy: 'Exact',
      rules: [{ operations: ['CREATE'], apiGroups: ['autoscaling'], apiVersions: ['v2'], resources: ['horizontalpodautoscalers'] }],
    }),
  ]);
  const dep = await rest.create(`/apis/apps/v1/namespaces/${ns}/deployments`, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd' },
    spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
  });
  assert.equal(seen.length, 0, 'the main resource is not matched by */status');
  const st = await rest.put(`/apis/apps/v1/namespaces/${ns}/deployments/d/status`, { ...dep, status: { observedGeneration: 1 } });
  assert.equal(st.status, 200, st.text);
  assert.equal(seen.length, 1);
  assert.equal(seen[0].subResource, 'status');
  assert.equal(seen[0].requestSubResource, 'status');
  seen.length = 0;
  const hpa = await rest.post(`/apis/autoscaling/v1/namespaces/${ns}/horizontalpodautoscalers`, {
    apiVersion: 'autoscaling/v1',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'h' },
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' }, maxReplicas: 3, targetCPUUtilizationPercentage: 50 },
  });
  assert.equal(hpa.status, 201, hpa.text);
  assert.equal(seen.length, 1, 'only the Equivalent webhook is called');
  assert.deepEqual(seen[0].kind, { group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' });
  assert.deepEqual(seen[0].requestKind, { group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler' });
  assert.deepEqual(seen[0].resource, { group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers' });
  assert.equal(seen[0].object.apiVersion, 'autoscaling/v2');
  assert.deepEqual(seen[0].object.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }]);
});

test('reinvocationPolicy IfNeeded calls a webhook again after a later webhook changed the object', async () => {
  const calls: string[] = [];
  respond('/first', (req) => {
    calls.push('first');
    return req.object.metadata.labels?.first === undefined
      ? { allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'add', path: '/metadata/labels/first', value: 'x' }]) }
      : { allowed: true };
  });
  respond('/second', (req) => {
    calls.push('second');
    return req.object.metadata.labels?.second === undefined
      ? { allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'add', path: '/metadata/labels/second', value: 'y' }]) }
      : { allowed: true };
  });
  await configure('mutating', `${ns}-a`, [webhook('first.example.com', '/first', { reinvocationPolicy: 'IfNeeded' })]);
  await configure('mutating', `${ns}-b`, [webhook('second.example.com', '/second')]);
  const created = await rest.create(cms(), cm('r', { any: 'x' }));
  assert.deepEqual(created.metadata.labels, { any: 'x', first: 'x', second: 'y' });
  assert.deepEqual(calls, ['first', 'second', 'first']);
});

test('dry run: webhooks without side effects see dryRun; one with side effects fails the request (spec 4.8 rule 3)', async () => {
  const seen: Obj[] = [];
  respond('/dry', (req) => {
    seen.push(req);
    return { allowed: true };
  });
  await configure('validating', `${ns}-dry`, [webhook('dry.example.com', '/dry')]);
  const r = await rest.post(`${cms()}?dryRun=All`, cm('d'));
  assert.equal(r.status, 201, r.text);
  assert.equal(seen[0].dryRun, true);
  assert.deepEqual(seen[0].options, { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', dryRun: ['All'] });
  // v1 validation refuses sideEffects Some/Unknown on create: such configurations come from older
  // versions, as this one, written to storage directly.
  const name = `${ns}-legacy`;
  await storage.create('validatingwebhookconfigurations.admissionregistration.k8s.io', name, {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name, uid: 'u1', creationTimestamp: '2020-01-01T00:00:00Z' },
    webhooks: [{ ...webhook('effects.example.com', '/dry', { failurePolicy: 'Fail', matchPolicy: 'Equivalent', objectSelector: {} }), sideEffects: 'Unknown' }],
  });
  configs.push(`validatingwebhookconfigurations/${name}`);
  const wet = await rest.post(cms(), cm('wet'));
  assert.equal(wet.status, 201, 'a write that is not a dry run calls the webhook');
  let refused = wet;
  for (let i = 0; i < 100; i++) {
    refused = await rest.post(`${cms()}?dryRun=All`, cm('d2'));
    if (refused.status !== 201) break;
  }
  assertStatus(refused, 400, 'BadRequest', 'admission webhook "effects.example.com" does not support dry run');
});

test('a Service reference reaches the webhook through the EndpointSlice, with NAME.NAMESPACE.svc as server name', async () => {
  respond('/svc', () => ({ allowed: false, status: { message: 'via service' } }));
  const svcNs = 'wh-svc';
  await rest.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: svcNs } });
  await rest.create(`/api/v1/namespaces/${svcNs}/services`, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'hooks' },
    spec: { ports: [{ name: 'https', port: 443, targetPort: 8443 }] },
  });
  // Validation refuses loopback endpoint addresses: the slice a controller would write is stored directly.
  await storage.create('endpointslices.discovery.k8s.io', `${svcNs}/hooks-1`, {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'hooks-1', namespace: svcNs, labels: { 'kubernetes.io/service-name': 'hooks' } },
    addressType: 'IPv4',
    ports: [{ name: 'https', port: hooks.port }],
    endpoints: [{ addresses: ['127.0.0.1'] }],
  });
  await configure('validating', `${ns}-svc`, [
    webhook('svc.example.com', '/svc', { clientConfig: { service: { namespace: svcNs, name: 'hooks', path: '/svc' }, caBundle: hooks.certs.caBundle } }),
  ]);
  assertDenied(await rest.post(cms(), cm('s')), 'admission webhook "svc.example.com" denied the request: via service');
});

test('webhook configurations are never subject to webhooks', async () => {
  await configure('validating', `${ns}-all`, [
    webhook('all.example.com', '/x', {
      clientConfig: { url: `https://127.0.0.1:${refusedPort}/x` },
      rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'] }],
      namespaceSelector: {},
    }),
  ]);
  const name = `${ns}-other`;
  await configure('mutating', name, [webhook('other.example.com', '/x')]);
  const del = await rest.del(`/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${name}`);
  assert.equal(del.status, 200, del.text);
  configs = configs.filter((c) => !c.endsWith(`/${name}`));
  assert.equal((await rest.post(cms(), cm('blocked'))).status, 500);
});

test('scale writes show webhooks an autoscaling/v1 Scale, and a patch of the Scale sets the replicas', async () => {
  const seen: Obj[] = [];
  respond('/scale', (req) => {
    seen.push(req);
    return { allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'replace', path: '/spec/replicas', value: 5 }]) };
  });
  await configure('mutating', `${ns}-scale`, [
    webhook('scale.example.com', '/scale', { rules: [{ operations: ['UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments/scale'] }] }),
  ]);
  await rest.create(`/apis/apps/v1/namespaces/${ns}/deployments`, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    },
  });
  const r = await rest.patch(`/apis/apps/v1/namespaces/${ns}/deployments/d/scale`, { spec: { replicas: 2 } });
  assert.equal(r.status, 200, r.text);
  assert.equal(seen.length, 1);
  assert.deepEqual(seen[0].kind, { group: 'autoscaling', version: 'v1', kind: 'Scale' });
  assert.deepEqual(seen[0].requestKind, { group: 'autoscaling', version: 'v1', kind: 'Scale' });
  assert.deepEqual(seen[0].resource, { group: 'apps', version: 'v1', resource: 'deployments' });
  assert.equal(seen[0].subResource, 'scale');
  assert.equal(seen[0].object.kind, 'Scale');
  assert.equal(seen[0].object.spec.replicas, 2);
  assert.equal(seen[0].oldObject.spec.replicas, 1);
  assert.equal(r.body.spec.replicas, 5);
  assert.equal((await rest.get(`/apis/apps/v1/namespaces/${ns}/deployments/d`)).body.spec.replicas, 5);
});

test('--disable-admission-plugins=ValidatingAdmissionWebhook turns validating webhooks off', async () => {
  const other = await startTestServer({ disableAdmissionPlugins: ['ValidatingAdmissionWebhook'] });
  try {
    const r = restFor(other.url);
    await r.create('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'all' },
      webhooks: [{ ...webhook('all.example.com', '/x', { clientConfig: { url: `https://127.0.0.1:${refusedPort}/x` } }), namespaceSelector: {} }],
    });
    assert.equal((await r.post('/api/v1/namespaces/default/configmaps', cm('passes'))).status, 201);
  } finally {
    await other.stop();
  }
});

test('a matchCondition that fails to evaluate: Fail refuses the request (403), Ignore skips the webhook', async () => {
  respond('/mc-err', () => ({ allowed: false, status: { message: 'called' } }));
  const conditions = [{ name: 'replicas', expression: 'object.data.missing == "x"' }];
  await configure('validating', `${ns}-mcerr`, [
    webhook('fail.example.com', '/mc-err', { matchConditions: conditions, objectSelector: { matchLabels: { case: 'fail' } } }),
    webhook('ignore.example.com', '/mc-err', { matchConditions: conditions, failurePolicy: 'Ignore', objectSelector: { matchLabels: { case: 'ignore' } } }),
  ]);
  assertStatus(
    await rest.post(cms(), cm('f', { case: 'fail' })),
    403,
    'Forbidden',
    `configmaps "f" is forbidden: expression 'object.data.missing == "x"' resulted in error: no such key: missing`,
  );
  assert.equal((await rest.post(cms(), cm('i', { case: 'ignore' }))).status, 201);
  assert.equal(hooks.calls.length, 0);
});

test('custom resources: Equivalent matching across CRD versions, the object relabelled to the webhook version', async () => {
  const group = `${ns}.example.com`;
  const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
  await rest.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        { name: 'v1', served: true, storage: true, schema },
        { name: 'v2', served: true, storage: false, schema },
      ],
    },
  });
  try {
    const seen: Obj[] = [];
    respond('/cr', (req) => {
      seen.push(req);
      return { allowed: true };
    });
    await configure('validating', `${ns}-cr`, [
      webhook('cr.example.com', '/cr', { rules: [{ operations: ['CREATE'], apiGroups: [group], apiVersions: ['v1'], resources: ['widgets'] }] }),
    ]);
    const path = `/apis/${group}/v2/namespaces/${ns}/widgets`;
    let r = await rest.post(path, { apiVersion: `${group}/v2`, kind: 'Widget', metadata: { name: 'w0' }, spec: { a: 1 } });
    for (let i = 1; r.status === 404 && i < 200; i++) {
      await new Promise((res) => setTimeout(res, 50));
      r = await rest.post(path, { apiVersion: `${group}/v2`, kind: 'Widget', metadata: { name: `w${i}` }, spec: { a: 1 } });
    }
    assert.equal(r.status, 201, r.text);
    assert.equal(seen.length, 1);
    assert.deepEqual(seen[0].kind, { group, version: 'v1', kind: 'Widget' });
    assert.deepEqual(seen[0].requestKind, { group, version: 'v2', kind: 'Widget' });
    assert.equal(seen[0].object.apiVersion, `${group}/v1`);
    assert.deepEqual(seen[0].object.spec, { a: 1 });
  } finally {
    await rest.del(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}`);
  }
});
