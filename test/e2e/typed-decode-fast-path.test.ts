/**
 * Decoding bodies into their kind over HTTP, on each of decodeInto's paths: bodies ajv accepts (the
 * walk skipped; Quantities still stored in canonical form), bodies it refuses (the walk words Go's
 * error or reports the unknown fields per fieldValidation), bodies with number literals Go reads
 * differently from JavaScript (the walk alone), YAML bodies and merge and strategic merge patches.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { assertStatus, restFor, type Rest } from './rest.js';

let srv: TestServer;
let rest: Rest;
let pods: string;
let deployments: string;

before(async () => {
  srv = await startTestServer();
  rest = restFor(srv.url);
  const ns = await rest.namespace('decode');
  pods = `/api/v1/namespaces/${ns}/pods`;
  deployments = `/apis/apps/v1/namespaces/${ns}/deployments`;
});

after(async () => {
  await srv.stop();
});

type Obj = Record<string, unknown>;

const pod = (name: string, container: Obj = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'nginx', ...container }] },
});

const deploymentText = (name: string, replicas: string): string =>
  `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"${name}"},"spec":{"replicas":${replicas},"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`;

const DEPLOYMENT_PREFIX = 'Deployment in version "v1" cannot be handled as a Deployment: ';

describe('bodies that decode', { concurrency: true }, () => {
  test('a valid Pod is created with its quantities in canonical form, as Go re-encodes them', async () => {
    const r = await rest.post(pods, pod('canonical', { resources: { requests: { cpu: '1000m', memory: 1073741824 }, limits: { cpu: 2, memory: '2048Mi' } } }));
    assert.equal(r.status, 201, r.text);
    // A bare number is a DecimalSI quantity, so it keeps its digits; a binary suffix stays binary.
    assert.deepEqual(r.body.spec.containers[0].resources, { requests: { cpu: '1', memory: '1073741824' }, limits: { cpu: '2', memory: '2Gi' } });
    assert.equal(r.headers.get('warning'), null);
  });

  test('a YAML body is decoded as its JSON would be', async () => {
    const yaml =
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: from-yaml\nspec:\n  containers:\n  - name: c\n    image: nginx\n    resources:\n      limits:\n        cpu: 1500m\n';
    const r = await rest.post(pods, yaml, 'application/yaml');
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body.spec.containers[0].resources, { limits: { cpu: '1500m' }, requests: { cpu: '1500m' } });
  });

  test('null where Go takes it (a non-pointer field, a list item of a struct) is accepted', async () => {
    const r = await rest.post(pods, pod('nulls', { ports: null, env: [{ name: 'A', value: null }] }));
    assert.equal(r.status, 201, r.text);
  });
});

describe('bodies the schema refuses', { concurrency: true }, () => {
  test('an unknown field is a warning by default and a 400 with fieldValidation=Strict', async () => {
    const warned = await rest.post(pods, pod('unknown-warn', { foo: 1 }));
    assert.equal(warned.status, 201, warned.text);
    assert.equal(warned.headers.get('warning'), '299 - "unknown field \\"spec.containers[0].foo\\""');
    assert.equal(warned.body.spec.containers[0].foo, undefined);
    const strict = await rest.post(`${pods}?fieldValidation=Strict`, pod('unknown-strict', { foo: 1 }));
    assertStatus(strict, 400, 'BadRequest', 'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.containers[0].foo"');
  });

  test("an int32 out of range is 400 with Go's message", async () => {
    const r = await rest.post(deployments, deploymentText('int32', '2147483648'));
    assertStatus(
      r,
      400,
      'BadRequest',
      `${DEPLOYMENT_PREFIX}json: cannot unmarshal number 2147483648 into Go struct field DeploymentSpec.spec.replicas of type int32`,
    );
  });

  test("a wrong JSON type is 400 with Go's message, the first in document order", async () => {
    const r = await rest.post(pods, pod('types', { image: 5, ports: [{ containerPort: 'http' }] }));
    assertStatus(
      r,
      400,
      'BadRequest',
      'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field Container.spec.containers.image of type string',
    );
  });

  test('a bad quantity, time or base64 value is 400 with the message of its own decoder', async () => {
    const quantity = await rest.post(pods, pod('quantity', { resources: { limits: { cpu: '1.5.5' } } }));
    assertStatus(
      quantity,
      400,
      'BadRequest',
      'Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'',
    );
    const time = await rest.post(pods, { ...pod('time'), metadata: { name: 'time', creationTimestamp: '2024-02-30T00:00:00Z' } });
    assertStatus(time, 400, 'BadRequest', 'Pod in version "v1" cannot be handled as a Pod: parsing time "2024-02-30T00:00:00Z": day out of range');
    const secret = await rest.post(pods.replace('/pods', '/secrets'), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'b64' }, data: { a: 'YQ' } });
    assertStatus(secret, 400, 'BadRequest', 'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0');
  });
});

describe('number literals Go reads differently', { concurrency: true }, () => {
  test('an integral float literal in an integer field is refused as Go refuses it', async () => {
    const r = await rest.post(deployments, deploymentText('float-literal', '1.0'));
    assertStatus(r, 400, 'BadRequest', `${DEPLOYMENT_PREFIX}json: cannot unmarshal number 1.0 into Go struct field DeploymentSpec.spec.replicas of type int32`);
  });

  test('an overflowing literal is named as written', async () => {
    const r = await rest.post(deployments, deploymentText('overflow', '1e400'));
    assertStatus(
      r,
      400,
      'BadRequest',
      `${DEPLOYMENT_PREFIX}json: cannot unmarshal number 1e400 into Go struct field DeploymentSpec.spec.replicas of type int32`,
    );
  });
});

describe('patches', { concurrency: true }, () => {
  test('a merge patch and a strategic merge patch are type-checked in their own wording', async () => {
    const created = await rest.post(deployments, deploymentText('patched', '1'));
    assert.equal(created.status, 201, created.text);
    const path = `${deployments}/patched`;
    const ok = await rest.patch(path, { spec: { replicas: 4 } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.spec.replicas, 4);
    const merge = await rest.patch(path, { spec: { replicas: 'four' } });
    assertStatus(merge, 422, 'Invalid', /json: cannot unmarshal string into Go struct field DeploymentSpec\.spec\.replicas of type int32$/);
    const smp = await rest.patch(path, { spec: { replicas: 'four' } }, 'application/strategic-merge-patch+json');
    assertStatus(smp, 422, 'Invalid', /: unrecognized type: int32$/);
    const smpBig = await rest.patch(path, { spec: { replicas: 5 } }, 'application/strategic-merge-patch+json');
    assert.equal(smpBig.status, 200, smpBig.text);
    assert.equal(smpBig.body.spec.replicas, 5);
  });
});
