/**
 * Two admission paths the e2e AdmissionWebhook tests take, against a webhook server in the test
 * process (the review's fields and the answers checked on kube-apiserver 1.36): a CONNECT on pods/attach is admitted before the pod's kubelet is looked for, with
 * the PodAttachOptions from the query as the object (a webhook may refuse it, as `should be able to
 * deny attaching pod` expects); and a mutating webhook's patch of a custom resource is pruned by the
 * version's schema (`should mutate custom resource with pruning`).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { startWebhookServer, type TestWebhookServer } from '../helpers/webhook-server.js';
import { eventually, restFor, type Rest } from './rest.js';

type Obj = Record<string, any>;

let srv: TestServer;
let hooks: TestWebhookServer;
let rest: Rest;
let ns: string;

before(async () => {
  srv = await startTestServer();
  rest = restFor(srv.url);
  hooks = await startWebhookServer(['localhost']);
  ns = await rest.namespace('connect');
  await rest.patch(`/api/v1/namespaces/${ns}`, { metadata: { labels: { 'webhook-test': ns } } }, 'application/merge-patch+json');
});

after(async () => {
  await srv?.stop();
  await hooks?.stop();
});

function webhook(name: string, path: string, rule: Obj): Obj {
  return {
    name,
    clientConfig: { url: `https://localhost:${hooks.port}${path}`, caBundle: hooks.certs.caBundle },
    rules: [rule],
    namespaceSelector: { matchLabels: { 'webhook-test': ns } },
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    timeoutSeconds: 5,
  };
}

test('a CONNECT on pods/attach is admitted with its PodAttachOptions; a webhook denial is the answer', async () => {
  let seen: Obj | undefined;
  hooks.handle('/attach', (call) => {
    const request = (call.body as Obj).request as Obj;
    seen = request;
    const response = { uid: request.uid, allowed: false, status: { message: 'attaching is not allowed' } };
    return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
  });
  await rest.create('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: `${ns}-attach` },
    webhooks: [webhook('deny-attach.example.com', '/attach', { operations: ['CONNECT'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/attach'] })],
  });
  await rest.create(`/api/v1/namespaces/${ns}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p' },
    spec: { nodeName: 'n1', containers: [{ name: 'container1', image: 'x' }] },
  });
  const res = await rest.post(`/api/v1/namespaces/${ns}/pods/p/attach?stdin=true&stdout=1&stderr=false&container=container1`, undefined);
  assert.equal(res.status, 400, res.text);
  assert.equal(res.body.message, 'admission webhook "deny-attach.example.com" denied the request: attaching is not allowed');
  assert.equal(seen?.operation, 'CONNECT');
  assert.equal(seen?.subResource, 'attach');
  assert.deepEqual(seen?.kind, { group: '', version: 'v1', kind: 'PodAttachOptions' });
  assert.deepEqual(seen?.resource, { group: '', version: 'v1', resource: 'pods' });
  assert.deepEqual(seen?.object, { kind: 'PodAttachOptions', apiVersion: 'v1', stdin: true, stdout: true, container: 'container1' });
  assert.equal(seen?.options, null); // Go writes the absent RawExtension as null

  const dryRun = await rest.post(`/api/v1/namespaces/${ns}/pods/p/attach?stdin=true&dryRun=All`, undefined);
  assert.equal(dryRun.status, 400, dryRun.text);
  assert.equal(dryRun.body.message, 'dryRun is not supported');
  assert.equal(dryRun.body.reason, 'BadRequest');

  // Admission comes before the pod is looked up: the webhook answers for a pod that does not exist.
  const missing = await rest.post(`/api/v1/namespaces/${ns}/pods/nope/attach?stdin=true`, undefined);
  assert.equal(missing.status, 400, missing.text);
  assert.equal(seen?.name, 'nope');

  // Admitted (the webhook is for attach only), the exec looks for the kubelet of node n1, which does
  // not exist: kube's 404, which names the node as a pod.
  const other = await rest.post(`/api/v1/namespaces/${ns}/pods/p/exec?command=ls&stdout=true`, undefined);
  assert.equal(other.status, 404, other.text);
  assert.equal(other.body.message, 'pods "n1" not found');
});

test("a mutating webhook's patch of a custom resource is pruned by the version's schema", async () => {
  hooks.handle('/mutate-cr', (call) => {
    const request = (call.body as Obj).request as Obj;
    const patch = [
      { op: 'add', path: '/data/mutation-stage-1', value: 'yes' },
      { op: 'add', path: '/data/undeclared', value: 'yes' },
    ];
    const response = { uid: request.uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') };
    return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
  });
  const group = `${ns}.example.com`;
  await rest.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: { data: { type: 'object', properties: { 'mutation-start': { type: 'string' }, 'mutation-stage-1': { type: 'string' } } } },
            },
          },
        },
      ],
    },
  });
  await rest.create('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: `${ns}-mutate-cr` },
    webhooks: [webhook('mutate-cr.example.com', '/mutate-cr', { operations: ['CREATE'], apiGroups: [group], apiVersions: ['v1'], resources: ['widgets'] })],
  });
  const path = `/apis/${group}/v1/namespaces/${ns}/widgets`;
  const created = await eventually('the CR to be served and created', async () => {
    const res = await rest.post(path, { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w' }, data: { 'mutation-start': 'yes' } });
    return res.status === 201 ? (res.body as Obj) : undefined;
  });
  assert.deepEqual(created.data, { 'mutation-start': 'yes', 'mutation-stage-1': 'yes' });
});
