/**
 * Decoding into a kind: Go's type error messages (each case checked against kube-apiserver 1.36) and
 * unknown-field pruning, in the JSON decoder's words and in the unstructured converter's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readJson } from '../../src/codec/json-text.js';
import { base64ErrorOffset } from '../../src/codec/go-base64.js';
import { decodeInto, TypedDecodeError } from '../../src/codec/typed-decode.js';
import { schemaForKind } from '../../src/schema/openapi-schema.js';

function decodeError(kind: [string, string, string], json: string, wording: 'json' | 'unstructured' = 'json'): string {
  const schema = schemaForKind(...kind);
  assert.ok(schema);
  const parsed = readJson(json, { maxDepth: 1000 });
  try {
    decodeInto(parsed.value as Record<string, unknown>, schema, (c, k) => parsed.numberLiterals?.get(c)?.get(k), wording);
  } catch (err) {
    if (err instanceof TypedDecodeError) return err.message;
    throw err;
  }
  return 'decoded';
}

const DEPLOYMENT: [string, string, string] = ['apps', 'v1', 'Deployment'];
const POD: [string, string, string] = ['', 'v1', 'Pod'];
const CONFIGMAP: [string, string, string] = ['', 'v1', 'ConfigMap'];
const SERVICE: [string, string, string] = ['', 'v1', 'Service'];

test("type errors are worded as Go's encoding/json words them (reference answers)", () => {
  const cases: Array<[[string, string, string], string, string]> = [
    [DEPLOYMENT, '{"spec":{"replicas":"abc"}}', 'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32'],
    [DEPLOYMENT, '{"spec":{"replicas":1e400}}', 'json: cannot unmarshal number 1e400 into Go struct field DeploymentSpec.spec.replicas of type int32'],
    [DEPLOYMENT, '{"spec":{"replicas":1.5}}', 'json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32'],
    [
      DEPLOYMENT,
      '{"spec":{"replicas":3000000000}}',
      'json: cannot unmarshal number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32',
    ],
    [
      DEPLOYMENT,
      '{"spec":{"template":{"spec":{"containers":[{"name":"c","ports":[{"containerPort":"80"}]}]}}}}',
      'json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32',
    ],
    [
      CONFIGMAP,
      '{"metadata":{"labels":[]},"data":[]}',
      'json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string',
    ],
    [CONFIGMAP, '{"data":{"a":1}}', 'json: cannot unmarshal number into Go struct field ConfigMap.data of type string'],
    [CONFIGMAP, '{"binaryData":{"a":"!!!"}}', 'illegal base64 data at input byte 0'],
    [CONFIGMAP, '{"binaryData":{"a":5}}', 'json: cannot unmarshal number into Go struct field ConfigMap.binaryData of type []uint8'],
    [
      CONFIGMAP,
      '{"metadata":{"labels":{"a":1}},"binaryData":{"a":"!!!"}}',
      'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string',
    ],
    [
      SERVICE,
      '{"spec":{"ports":[{"port":80,"targetPort":1.5}]}}',
      'json: cannot unmarshal number 1.5 into Go struct field ServicePort.spec.ports.targetPort of type int32',
    ],
    [
      SERVICE,
      '{"spec":{"ports":[{"port":80,"targetPort":{}}]}}',
      'json: cannot unmarshal object into Go struct field ServicePort.spec.ports.targetPort of type int32',
    ],
    [
      POD,
      '{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"abc"}}}]}}',
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ],
    // Let through by the regular expression, refused by ParseQuantity (answers checked on the reference).
    [
      POD,
      '{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"1..5"}}}]}}',
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ],
    [POD, '{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"1e"}}}]}}', "unable to parse quantity's suffix"],
    [POD, '{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"1Ki5"}}}]}}', "unable to parse quantity's suffix"],
    [POD, '{"metadata":{"creationTimestamp":"x"}}', 'parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"'],
    [POD, '{"metadata":{"creationTimestamp":5}}', 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string'],
    [POD, '{"spec":{"containers":{}}}', 'json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container'],
    [POD, '{"spec":{"activeDeadlineSeconds":1.0}}', 'json: cannot unmarshal number 1.0 into Go struct field PodSpec.spec.activeDeadlineSeconds of type int64'],
    [POD, '{"spec":{"activeDeadlineSeconds":1e3}}', 'json: cannot unmarshal number 1e3 into Go struct field PodSpec.spec.activeDeadlineSeconds of type int64'],
  ];
  for (const [kind, json, message] of cases) assert.equal(decodeError(kind, json), message, json);
  assert.equal(decodeError(POD, '{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":1.5}}}]}}'), 'decoded');
});

test("the unstructured converter's words, for strategic merge patches (reference answers)", () => {
  assert.equal(decodeError(DEPLOYMENT, '{"spec":{"replicas":"abc"}}', 'unstructured'), 'unrecognized type: int32');
  assert.equal(decodeError(POD, '{"spec":{"containers":[{"name":5}]}}', 'unstructured'), 'cannot convert int64 to string');
  assert.equal(decodeError(POD, '{"spec":{"containers":5}}', 'unstructured'), 'cannot restore slice from int64');
  assert.equal(decodeError(POD, '{"spec":5}', 'unstructured'), 'cannot restore struct from: int64');
});

test('undeclared fields are dropped and reported with their paths, in document order', () => {
  const schema = schemaForKind('apps', 'v1', 'Deployment');
  assert.ok(schema);
  const obj = { metadata: { bogusMeta: 1, labels: { any: 'x' } }, spec: { template: { spec: { containers: [{ name: 'c', bogus: true }] } } }, extra: 1 };
  const { unknownFields } = decodeInto(obj, schema);
  assert.deepEqual(unknownFields, ['metadata.bogusMeta', 'spec.template.spec.containers[0].bogus', 'extra']);
  assert.deepEqual(obj, { metadata: { labels: { any: 'x' } }, spec: { template: { spec: { containers: [{ name: 'c' }] } } } });
});

test("base64 is checked as Go's StdEncoding decodes it", () => {
  assert.equal(base64ErrorOffset('aGVsbG8='), -1);
  assert.equal(base64ErrorOffset('aGVs\nbG8='), -1);
  assert.equal(base64ErrorOffset('!!!'), 0);
  assert.equal(base64ErrorOffset('aGVsbG8'), 4);
  assert.equal(base64ErrorOffset('aGVsbG8=x'), 8);
  assert.equal(base64ErrorOffset('a==='), 1);
});
