import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type protobuf from 'protobufjs';
import { ApiError } from '../../src/api/errors.js';
import {
  decodeProtobufObject,
  decodeProtobufWatchEvent,
  encodeProtobufList,
  encodeProtobufObject,
  encodeProtobufWatchFrame,
  hasProtobufMessage,
  ProtobufUnsupportedError,
  cachedProtobufObject,
  forgetStoredObject,
} from '../../src/codec/protobuf/protobuf-codec.js';
import { splitFrames } from '../../src/codec/protobuf/envelope.js';
import { lookupMessage } from '../../src/codec/protobuf/proto-runtime.js';

type Obj = Record<string, unknown>;

const MAGIC = [0x6b, 0x38, 0x73, 0x00];

function roundTrip(obj: Obj): Obj {
  return decodeProtobufObject(encodeProtobufObject(obj)).object;
}

/** A protobufjs type from the descriptor, to build bytes independently of the codec (as Go would). */
function type(name: string): protobuf.Type {
  const t = lookupMessage(name);
  assert.ok(t, name);
  return t;
}

/** Magic + Unknown around RAW, built directly with protobufjs. */
function envelope(apiVersion: string, kind: string, raw: Uint8Array): Buffer {
  const unknown = type('k8s.io.apimachinery.pkg.runtime.Unknown');
  return Buffer.concat([Buffer.from(MAGIC), unknown.encode({ typeMeta: { apiVersion, kind }, raw, contentEncoding: '', contentType: '' }).finish()]);
}

function assertBadRequest(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ApiError, `expected ApiError, got ${String(err)}`);
    assert.equal(err.code, 400);
    assert.equal(err.reason, 'BadRequest');
    assert.match(err.message, pattern);
    return true;
  });
}

describe('protobuf codec round trips (JSON -> proto -> JSON)', () => {
  test('ConfigMap with data, binaryData and labels', () => {
    const cm = {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: 'cm', namespace: 'default', labels: { app: 'x' }, resourceVersion: '12', uid: 'u-1' },
      data: { a: '1', empty: '' },
      binaryData: { bin: 'AAEC/w==' },
      immutable: false,
    };
    assert.deepEqual(roundTrip(cm), cm);
  });

  test('Secret: bytes values survive as base64, pointer false survives', () => {
    const secret = {
      kind: 'Secret',
      apiVersion: 'v1',
      metadata: { name: 's', namespace: 'default' },
      type: 'Opaque',
      data: { password: Buffer.from('hunter2').toString('base64'), empty: '' },
      immutable: false,
    };
    assert.deepEqual(roundTrip(secret), secret);
  });

  test('Pod: inline volume sources, Quantity, IntOrString, Time, pointer zeros, managedFields', () => {
    const pod = {
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: {
        name: 'p',
        namespace: 'default',
        generation: 2,
        creationTimestamp: '2024-01-02T03:04:05Z',
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u1', controller: true }],
        managedFields: [
          {
            manager: 'kubectl',
            operation: 'Update',
            apiVersion: 'v1',
            time: '2024-01-02T03:04:05Z',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:spec': { 'f:containers': {} } },
          },
        ],
      },
      spec: {
        volumes: [
          { name: 'scratch', emptyDir: {} },
          { name: 'cfg', configMap: { name: 'cm', defaultMode: 420, items: [{ key: 'a', path: 'a.txt' }] } },
          { name: 'pvc', persistentVolumeClaim: { claimName: 'data', readOnly: true } },
        ],
        containers: [
          {
            name: 'c',
            image: 'nginx:1.27',
            ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }],
            env: [
              { name: 'A', value: 'x' },
              { name: 'B', valueFrom: { secretKeyRef: { name: 's', key: 'password' } } },
            ],
            resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '100m' } },
            readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 5 },
            livenessProbe: { tcpSocket: { port: 8080 } },
            securityContext: { allowPrivilegeEscalation: false, runAsUser: 0 },
          },
        ],
        automountServiceAccountToken: false,
        terminationGracePeriodSeconds: 0,
        tolerations: [{ key: 'k', operator: 'Exists', tolerationSeconds: 0 }],
      },
      status: {
        phase: 'Running',
        startTime: '2024-01-02T03:04:05Z',
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2024-01-02T03:04:05Z' }],
      },
    };
    assert.deepEqual(roundTrip(pod), pod);
  });

  test('Deployment: replicas 0, selector, template, strategy with maxSurge "25%" and maxUnavailable 0', () => {
    const deploy = {
      kind: 'Deployment',
      apiVersion: 'apps/v1',
      metadata: { name: 'd', namespace: 'default' },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'd' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['web'] }] },
        template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 0 } },
        revisionHistoryLimit: 10,
        progressDeadlineSeconds: 600,
      },
      status: { observedGeneration: 3, replicas: 1, conditions: [{ type: 'Available', status: 'True', lastUpdateTime: '2024-01-02T03:04:05Z' }] },
    };
    assert.deepEqual(roundTrip(deploy), deploy);
  });

  test('Service: targetPort as number and as name', () => {
    const svc = {
      kind: 'Service',
      apiVersion: 'v1',
      metadata: { name: 'svc', namespace: 'default' },
      spec: {
        type: 'ClusterIP',
        selector: { app: 'd' },
        clusterIP: '10.0.0.1',
        clusterIPs: ['10.0.0.1'],
        ports: [
          { name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' },
          { name: 'named', port: 81, targetPort: 'web', protocol: 'TCP' },
        ],
      },
    };
    assert.deepEqual(roundTrip(svc), svc);
  });

  test('Namespace with finalizers and phase', () => {
    const ns = { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'ns' }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } };
    assert.deepEqual(roundTrip(ns), ns);
  });

  test('events.k8s.io Event: MicroTime keeps six fractional digits', () => {
    const ev = {
      kind: 'Event',
      apiVersion: 'events.k8s.io/v1',
      metadata: { name: 'e', namespace: 'default' },
      eventTime: '2024-01-02T03:04:05.123456Z',
      reportingController: 'ctrl',
      reportingInstance: 'i',
      action: 'Create',
      reason: 'Created',
      type: 'Normal',
      note: 'hello',
      regarding: { kind: 'Pod', name: 'p', namespace: 'default' },
      series: { count: 2, lastObservedTime: '2024-01-02T03:04:06.000000Z' },
    };
    assert.deepEqual(roundTrip(ev), ev);
  });

  test('core Event: Time fields and int32 count', () => {
    const ev = {
      kind: 'Event',
      apiVersion: 'v1',
      metadata: { name: 'e', namespace: 'default' },
      involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
      reason: 'Started',
      message: 'm',
      source: { component: 'kubelet' },
      firstTimestamp: '2024-01-02T03:04:05Z',
      lastTimestamp: '2024-01-02T03:04:09Z',
      count: 3,
      type: 'Normal',
    };
    assert.deepEqual(roundTrip(ev), ev);
  });

  test('CustomResourceDefinition: JSONSchemaProps with $ref, x-kubernetes-*, default/enum JSON, OrBool, OrArray', () => {
    const crd = {
      kind: 'CustomResourceDefinition',
      apiVersion: 'apiextensions.k8s.io/v1',
      metadata: { name: 'foos.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'foos', singular: 'foo', kind: 'Foo', listKind: 'FooList', shortNames: ['fo'] },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
            additionalPrinterColumns: [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
            schema: {
              openAPIV3Schema: {
                type: 'object',
                description: 'Foo',
                properties: {
                  spec: {
                    type: 'object',
                    'x-kubernetes-preserve-unknown-fields': true,
                    additionalProperties: false,
                    required: ['n'],
                    properties: {
                      n: { type: 'integer', format: 'int32', minimum: 0, maximum: 10.5, default: 0, enum: [0, 1, 'x', null, { a: [1] }] },
                      flag: { type: 'boolean', default: false, nullable: true },
                      port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
                      tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set', maxItems: 5 },
                      tuple: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }] },
                      keyed: {
                        type: 'array',
                        items: { type: 'object', properties: { k: { type: 'string' } } },
                        'x-kubernetes-list-type': 'map',
                        'x-kubernetes-list-map-keys': ['k'],
                      },
                      m: { type: 'object', additionalProperties: { type: 'string' }, 'x-kubernetes-map-type': 'atomic' },
                      r: { $ref: '#/definitions/x', $schema: 'http://json-schema.org/draft-04/schema#' },
                      deps: { type: 'object', dependencies: { a: ['b', 'c'], d: { type: 'object' } } },
                      embedded: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
                    },
                    'x-kubernetes-validations': [{ rule: 'self.n >= 0', message: 'neg', reason: 'FieldValueInvalid' }],
                  },
                },
              },
            },
          },
        ],
        conversion: { strategy: 'None' },
      },
      status: { storedVersions: ['v1'], acceptedNames: { plural: 'foos', kind: 'Foo' } },
    };
    const back = roundTrip(crd);
    // enum entries: JSON null is not representable (Go drops a null JSON element's Raw), everything else is.
    const spec = ((((crd.spec.versions[0] as Obj).schema as Obj).openAPIV3Schema as Obj).properties as Obj).spec as Obj;
    const n = (spec.properties as Obj).n as Obj;
    n.enum = [0, 1, 'x', { a: [1] }];
    assert.deepEqual(back, crd);
  });

  test('Status (meta/v1) with details and causes', () => {
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'configmaps "x" not found',
      reason: 'NotFound',
      details: { name: 'x', kind: 'configmaps', causes: [{ reason: 'FieldValueInvalid', message: 'bad', field: 'spec.x' }] },
      code: 404,
    };
    const back = roundTrip(status);
    // An empty ListMeta is dropped like every empty optional struct.
    const { metadata: _metadata, ...rest } = status;
    assert.deepEqual(back, rest);
  });

  test('PartialObjectMetadata (meta.k8s.io/v1)', () => {
    const pom = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'x', namespace: 'ns', labels: { a: 'b' } } };
    assert.ok(hasProtobufMessage('meta.k8s.io/v1', 'PartialObjectMetadata'));
    assert.deepEqual(roundTrip(pom), pom);
  });

  test('int64 values round trip exactly up to 2^53', () => {
    const cm = { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'n', generation: 2 ** 53 - 1, deletionGracePeriodSeconds: -5 } };
    assert.deepEqual(roundTrip(cm), cm);
  });

  test('Time with an offset and fraction is normalized to UTC whole seconds', () => {
    const ns = { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'n', creationTimestamp: '2024-01-02T05:04:05.5+02:00' } };
    const back = roundTrip(ns);
    assert.equal((back.metadata as Obj).creationTimestamp, '2024-01-02T03:04:05Z');
  });

  test('FlowSchema (group with a dotted name: flowcontrol.apiserver.k8s.io)', () => {
    const fs = {
      kind: 'FlowSchema',
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      metadata: { name: 'f' },
      spec: { priorityLevelConfiguration: { name: 'p' }, matchingPrecedence: 100 },
    };
    assert.deepEqual(roundTrip(fs), fs);
  });

  test('UserInfo.extra (map of ExtraValue) and APIResource.verbs (Verbs) are plain arrays in JSON', () => {
    const tr = {
      kind: 'TokenReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: {},
      spec: { token: 't', audiences: ['a'] },
      status: { authenticated: true, user: { username: 'u', groups: ['g'], extra: { scopes: ['x', 'y'] } } },
    };
    const back = roundTrip(tr);
    assert.deepEqual(back.status, tr.status);
    const list = {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'v1',
      resources: [{ name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', verbs: ['get', 'list'] }],
    };
    assert.deepEqual(roundTrip(list), list);
  });

  test('ControllerRevision data (RawExtension) is the JSON value', () => {
    const cr = {
      kind: 'ControllerRevision',
      apiVersion: 'apps/v1',
      metadata: { name: 'r', namespace: 'default' },
      data: { spec: { template: { metadata: { labels: { a: 'b' } } } } },
      revision: 3,
    };
    assert.deepEqual(roundTrip(cr), cr);
  });
});

describe('protobuf lists and watch frames', () => {
  test('encodeProtobufList: ConfigMapList with ListMeta; items lose kind/apiVersion as in kube JSON lists', () => {
    const items = [
      { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', namespace: 'default' }, data: { k: 'v' } },
      { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'b', namespace: 'default' } },
    ];
    const body = encodeProtobufList('ConfigMapList', 'v1', { resourceVersion: '7', continue: 'abc', remainingItemCount: 5 }, items);
    const { apiVersion, kind, object } = decodeProtobufObject(body);
    assert.equal(apiVersion, 'v1');
    assert.equal(kind, 'ConfigMapList');
    assert.deepEqual(object, {
      kind: 'ConfigMapList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '7', continue: 'abc', remainingItemCount: 5 },
      items: items.map(({ kind: _k, apiVersion: _a, ...rest }) => rest),
    });
  });

  test('an empty list keeps its metadata and has no items', () => {
    const body = encodeProtobufList('DeploymentList', 'apps/v1', { resourceVersion: '1' }, []);
    assert.deepEqual(decodeProtobufObject(body).object, { kind: 'DeploymentList', apiVersion: 'apps/v1', metadata: { resourceVersion: '1' } });
  });

  test('encodeProtobufWatchFrame: 4-byte big-endian length + WatchEvent whose object.raw is a full envelope', () => {
    const cm = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'cm', namespace: 'default', resourceVersion: '5' }, data: { a: 'b' } };
    const frame = encodeProtobufWatchFrame('ADDED', cm);
    assert.equal(frame.readUInt32BE(0), frame.length - 4);
    const event = type('k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent').decode(frame.subarray(4)) as unknown as { type: string; object: { raw: Uint8Array } };
    assert.equal(event.type, 'ADDED');
    assert.deepEqual([...event.object.raw.subarray(0, 4)], MAGIC);
    assert.deepEqual(decodeProtobufObject(event.object.raw).object, cm);

    const stream = Buffer.concat([frame, encodeProtobufWatchFrame('DELETED', cm), frame.subarray(0, 3)]);
    const { frames, rest } = splitFrames(stream);
    assert.equal(frames.length, 2);
    assert.equal(rest.length, 3);
    assert.deepEqual(
      frames.map((f) => decodeProtobufWatchEvent(f).type),
      ['ADDED', 'DELETED'],
    );
    assert.deepEqual(decodeProtobufWatchEvent(frames[1] ?? Buffer.alloc(0)).object, cm);
  });

  test('an ERROR watch event carries a Status; a BOOKMARK carries only the resourceVersion', () => {
    const status = { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'too old resource version: 1 (5)', reason: 'Expired', code: 410 };
    const errorFrame = encodeProtobufWatchFrame('ERROR', status);
    assert.deepEqual(decodeProtobufWatchEvent(errorFrame.subarray(4)), { type: 'ERROR', object: status });
    const bookmark = { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '12', annotations: { 'k8s.io/initial-events-end': 'true' } } };
    assert.deepEqual(decodeProtobufWatchEvent(encodeProtobufWatchFrame('BOOKMARK', bookmark).subarray(4)), { type: 'BOOKMARK', object: bookmark });
  });
});

describe('a stored version encoded once serves its protobuf response', () => {
  test('cachedProtobufObject: the bytes of encodeProtobufObject once a watch frame encoded the text, none before or after it is forgotten', () => {
    const obj = {
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { name: 'cached', namespace: 'default', resourceVersion: '41' },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    };
    const json = JSON.stringify(obj);
    assert.equal(cachedProtobufObject(json), undefined, 'nothing encoded this text yet');
    encodeProtobufWatchFrame('ADDED', obj, json);
    assert.deepEqual(cachedProtobufObject(json), encodeProtobufObject(obj));
    // apiVersion first is the same stored object.
    const reordered = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: obj.metadata, spec: obj.spec });
    encodeProtobufWatchFrame('MODIFIED', obj, reordered);
    assert.deepEqual(cachedProtobufObject(reordered), encodeProtobufObject(obj));
    // Another version of the object is another text: a miss, never the old bytes.
    assert.equal(cachedProtobufObject(json.replace('"41"', '"42"')), undefined);
    forgetStoredObject('v1', 'Pod', json);
    assert.equal(cachedProtobufObject(json), undefined, 'a forgotten version is not served');
    // Kinds without a message (custom resources) and texts without leading type meta miss.
    assert.equal(cachedProtobufObject('{"kind":"Widget","apiVersion":"example.com/v1","metadata":{}}'), undefined);
    assert.equal(cachedProtobufObject('{"metadata":{},"kind":"Pod","apiVersion":"v1"}'), undefined);
  });
});

describe('protobuf envelope bytes', () => {
  test('magic prefix then Unknown{typeMeta, raw, contentEncoding "", contentType ""} like Go writes it', () => {
    const ns = { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'n' } };
    const body = encodeProtobufObject(ns);
    assert.deepEqual([...body.subarray(0, 4)], MAGIC);
    // field 1 (typeMeta), length-delimited: {1: "v1", 2: "Namespace"}
    const typeMeta = Buffer.from([0x0a, 0x02, 0x76, 0x31, 0x12, 0x09, ...Buffer.from('Namespace')]);
    assert.deepEqual([...body.subarray(4, 6)], [0x0a, typeMeta.length]);
    assert.deepEqual(body.subarray(6, 6 + typeMeta.length), typeMeta);
    // field 2 (raw): Namespace{metadata{name: "n"}} = 0a 03 0a 01 6e
    const rawStart = 6 + typeMeta.length;
    assert.deepEqual([...body.subarray(rawStart, rawStart + 7)], [0x12, 0x05, 0x0a, 0x03, 0x0a, 0x01, 0x6e]);
    // fields 3 and 4: empty strings
    assert.deepEqual([...body.subarray(rawStart + 7)], [0x1a, 0x00, 0x22, 0x00]);
    const unknown = type('k8s.io.apimachinery.pkg.runtime.Unknown').decode(body.subarray(4)) as unknown as Obj;
    assert.deepEqual({ ...(unknown.typeMeta as Obj) }, { apiVersion: 'v1', kind: 'Namespace' });
  });
});

describe('decoding bytes built like Go does (zero-valued non-pointer fields present)', () => {
  test('zero scalars of omitempty fields are dropped; pointer and non-omitempty zeros are kept', () => {
    const ObjectMeta = 'k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta';
    const meta = {
      name: 'web',
      generateName: '',
      namespace: 'default',
      selfLink: '',
      uid: '',
      resourceVersion: '',
      generation: 0,
      creationTimestamp: { seconds: 0, nanos: 0 },
    };
    type(ObjectMeta);
    const deployment = type('k8s.io.api.apps.v1.Deployment');
    const raw = deployment
      .encode({
        metadata: meta,
        spec: {
          replicas: 0, // *int32: meaningful zero
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { name: '', creationTimestamp: { seconds: 0, nanos: 0 } },
            spec: {
              containers: [
                {
                  name: 'c',
                  image: 'nginx',
                  workingDir: '',
                  imagePullPolicy: '',
                  terminationMessagePath: '',
                  stdin: false,
                  tty: false,
                  resources: {},
                  ports: [{ name: '', hostPort: 0, containerPort: 0, protocol: '', hostIP: '' }],
                },
              ],
              restartPolicy: '',
              dnsPolicy: '',
              serviceAccountName: '',
              hostNetwork: false,
              automountServiceAccountToken: false, // *bool: meaningful false
              securityContext: {}, // *PodSecurityContext set but empty
            },
          },
          strategy: { type: '', rollingUpdate: { maxUnavailable: { type: 0, intVal: 0, strVal: '' }, maxSurge: { type: 1, intVal: 0, strVal: '25%' } } },
          minReadySeconds: 0,
          paused: false,
        },
        status: { observedGeneration: 0, replicas: 0, updatedReplicas: 0, readyReplicas: 0, availableReplicas: 0, unavailableReplicas: 0 },
      })
      .finish();
    const { object } = decodeProtobufObject(envelope('apps/v1', 'Deployment', raw));
    assert.deepEqual(object, {
      kind: 'Deployment',
      apiVersion: 'apps/v1',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'web' } },
        template: {
          spec: {
            containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 0 }] }],
            automountServiceAccountToken: false,
            securityContext: {},
          },
        },
        strategy: { rollingUpdate: { maxUnavailable: 0, maxSurge: '25%' } },
      },
    });
  });

  test('Service targetPort zero (unset non-pointer IntOrString) is dropped so defaulting can apply', () => {
    const raw = type('k8s.io.api.core.v1.Service')
      .encode({
        metadata: { name: 's' },
        spec: { ports: [{ name: '', protocol: 'TCP', port: 80, targetPort: { type: 0, intVal: 0, strVal: '' }, nodePort: 0 }], type: '', clusterIP: '' },
        status: { loadBalancer: {} },
      })
      .finish();
    const { object } = decodeProtobufObject(envelope('v1', 'Service', raw));
    assert.deepEqual(object, { kind: 'Service', apiVersion: 'v1', metadata: { name: 's' }, spec: { ports: [{ protocol: 'TCP', port: 80 }] } });
  });

  test('Volume source fields decode flattened next to name; PV source flattened into spec', () => {
    const pod = type('k8s.io.api.core.v1.Pod')
      .encode({
        metadata: { name: 'p' },
        spec: {
          volumes: [
            { name: 'v', volumeSource: { hostPath: { path: '/data' } } },
            { name: 'e', volumeSource: { emptyDir: {} } },
          ],
          containers: [],
        },
      })
      .finish();
    assert.deepEqual(decodeProtobufObject(envelope('v1', 'Pod', pod)).object.spec, {
      volumes: [
        { name: 'v', hostPath: { path: '/data' } },
        { name: 'e', emptyDir: {} },
      ],
    });
    const pv = type('k8s.io.api.core.v1.PersistentVolume')
      .encode({
        metadata: { name: 'pv' },
        spec: {
          capacity: { storage: { string: '1Gi' } },
          persistentVolumeSource: { nfs: { server: 'nfs', path: '/x' } },
          accessModes: ['ReadWriteOnce'],
          storageClassName: '',
        },
      })
      .finish();
    assert.deepEqual(decodeProtobufObject(envelope('v1', 'PersistentVolume', pv)).object.spec, {
      capacity: { storage: '1Gi' },
      nfs: { server: 'nfs', path: '/x' },
      accessModes: ['ReadWriteOnce'],
    });
  });

  test('a PVC storageClassName "" (pointer) is kept; ephemeral containers flatten their common part', () => {
    const pvc = type('k8s.io.api.core.v1.PersistentVolumeClaim')
      .encode({ metadata: { name: 'c' }, spec: { storageClassName: '', volumeName: '' } })
      .finish();
    assert.deepEqual(decodeProtobufObject(envelope('v1', 'PersistentVolumeClaim', pvc)).object.spec, { storageClassName: '' });
    const pod = type('k8s.io.api.core.v1.Pod')
      .encode({
        metadata: { name: 'p' },
        spec: { ephemeralContainers: [{ ephemeralContainerCommon: { name: 'debug', image: 'busybox', stdin: true }, targetContainerName: 'c' }] },
      })
      .finish();
    assert.deepEqual(decodeProtobufObject(envelope('v1', 'Pod', pod)).object.spec, {
      ephemeralContainers: [{ name: 'debug', image: 'busybox', stdin: true, targetContainerName: 'c' }],
    });
  });

  test('renamed fields: MutatingWebhookConfiguration.Webhooks, IngressClass aPIGroup, webhook rules inline', () => {
    const mwc = type('k8s.io.api.admissionregistration.v1.MutatingWebhookConfiguration')
      .encode({
        metadata: { name: 'm' },
        Webhooks: [
          {
            name: 'w.example.com',
            clientConfig: { url: 'https://x' },
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            rules: [{ operations: ['CREATE'], rule: { apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] } }],
          },
        ],
      })
      .finish();
    const decoded = decodeProtobufObject(envelope('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', mwc)).object;
    assert.deepEqual(decoded.webhooks, [
      {
        name: 'w.example.com',
        clientConfig: { url: 'https://x' },
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
      },
    ]);
    assert.deepEqual(roundTrip(decoded), decoded);
    const ic = {
      kind: 'IngressClass',
      apiVersion: 'networking.k8s.io/v1',
      metadata: { name: 'i' },
      spec: { controller: 'x/y', parameters: { apiGroup: 'g', kind: 'K', name: 'n' } },
    };
    const wire = type('k8s.io.api.networking.v1.IngressClass').decode(
      (type('k8s.io.apimachinery.pkg.runtime.Unknown').decode(encodeProtobufObject(ic).subarray(4)) as unknown as { raw: Uint8Array }).raw,
    ) as unknown as { spec: { parameters: Obj } };
    assert.equal(wire.spec.parameters.aPIGroup, 'g');
    assert.deepEqual(roundTrip(ic), ic);
  });

  test('default kind/apiVersion from the expectation when the envelope omits them', () => {
    const raw = type('k8s.io.api.core.v1.ConfigMap')
      .encode({ metadata: { name: 'x' } })
      .finish();
    const decoded = decodeProtobufObject(envelope('', '', raw), { apiVersion: 'v1', kind: 'ConfigMap' });
    assert.deepEqual(decoded, { apiVersion: 'v1', kind: 'ConfigMap', object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'x' } } });
  });
});

describe('decoding wire bytes as Go reads them', () => {
  /** A length-delimited field: tag (NUMBER, wire type 2), length, BYTES. */
  const delimited = (number: number, bytes: Uint8Array | number[]): Buffer => Buffer.from([(number << 3) | 2, bytes.length, ...bytes]);
  const cm = type('k8s.io.api.core.v1.ConfigMap');
  const meta = (m: Obj): Uint8Array => type('k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta').encode(m).finish();
  const dataEntry = (k: string, v: string): Buffer => delimited(2, [...delimited(1, Buffer.from(k)), ...delimited(2, Buffer.from(v))]);
  const decode = (kind: string, apiVersion: string, raw: Uint8Array): Obj => decodeProtobufObject(envelope(apiVersion, kind, raw)).object;

  test("members come out in the message's declaration order whatever the order on the wire", () => {
    // data (field 2) before metadata (field 1), and metadata's namespace (3) before its name (1).
    const raw = Buffer.concat([dataEntry('k', 'v'), delimited(1, Buffer.concat([delimited(3, Buffer.from('ns')), delimited(1, Buffer.from('n'))]))]);
    const obj = decode('ConfigMap', 'v1', raw);
    assert.equal(JSON.stringify(obj), '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"n","namespace":"ns"},"data":{"k":"v"}}');
  });

  test('a singular message sent twice merges, a scalar sent twice keeps its last value, map entries accumulate', () => {
    const raw = Buffer.concat([
      delimited(1, meta({ name: 'first', labels: { a: '1' } })),
      dataEntry('x', '1'),
      delimited(1, meta({ name: 'second', namespace: 'ns', labels: { b: '2' } })),
      dataEntry('y', '2'),
    ]);
    assert.deepEqual(decode('ConfigMap', 'v1', raw), {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: 'second', namespace: 'ns', labels: { a: '1', b: '2' } },
      data: { x: '1', y: '2' },
    });
  });

  test('repeated numbers packed and unpacked; unknown fields and groups skipped', () => {
    // An unknown varint (field 99) and an unknown group (field 98) before ConfigMap.immutable.
    const unknownVarint = Buffer.from([0x98, 0x06, 0x2a]);
    const unknownGroup = Buffer.from([0x93, 0x06, 0x08, 0x01, 0x94, 0x06]); // start 98, {1: 1}, end 98
    const immutable = cm.fields.immutable?.id ?? 0;
    assert.ok(immutable > 0 && immutable < 16);
    const raw = Buffer.concat([delimited(1, meta({ name: 'n' })), unknownVarint, unknownGroup, Buffer.from([immutable << 3, 0x01])]);
    assert.deepEqual(decode('ConfigMap', 'v1', raw), { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'n' }, immutable: true });
    const pm = type('k8s.io.api.core.v1.PodSecurityContext');
    const groups = pm.fields.supplementalGroups;
    assert.ok(groups);
    const tag = groups.id << 3;
    assert.ok(groups.id < 16);
    const unpacked = Buffer.from([tag, 1, tag, 2]);
    const packed = Buffer.from([tag | 2, 2, 3, 4]);
    const podSpecCtx = type('k8s.io.api.core.v1.PodSpec').fields.securityContext;
    assert.ok(podSpecCtx && podSpecCtx.id < 16);
    const spec = Buffer.from([(podSpecCtx.id << 3) | 2, unpacked.length + packed.length, ...unpacked, ...packed]);
    const pod = decode('Pod', 'v1', delimited(2, spec));
    assert.deepEqual(pod.spec, { securityContext: { supplementalGroups: [1, 2, 3, 4] } });
  });

  test('a field sent with another wire type than its own, field number 0, a mismatched group end and cut bytes are 400s', () => {
    const cases: Array<[string, Buffer, RegExp]> = [
      ['metadata as a varint', Buffer.from([0x08, 0x01]), /proto: illegal wireType 0/],
      ['field number 0', Buffer.concat([Buffer.from([0x02, 0x00]), delimited(1, meta({ name: 'n' }))]), /proto: illegal tag 0/],
      ['group ended by another field', Buffer.from([0x93, 0x06, 0x9c, 0x06]), /proto: mismatching end group marker/],
      ['a string longer than the bytes', Buffer.from([0x0a, 0x05, 0x0a, 0x09, 0x61]), /proto: unexpected EOF/],
    ];
    for (const [what, raw, message] of cases) {
      assert.throws(
        () => decode('ConfigMap', 'v1', raw),
        (err: unknown) => err instanceof ApiError && err.code === 400 && message.test(err.message),
        what,
      );
    }
    assert.equal(cm.fields.metadata?.id, 1, 'the cases above assume ConfigMap.metadata is field 1');
  });
});

describe('protobuf errors', () => {
  test('bad prefix, empty bodies, truncated bytes, garbage, unknown kinds -> 400 BadRequest', () => {
    assertBadRequest(
      () => decodeProtobufObject(Buffer.from('{"kind":"ConfigMap"}')),
      /does not appear to be a protobuf message, expected prefix \[107 56 115 0\]/,
    );
    assertBadRequest(() => decodeProtobufObject(new Uint8Array(0)), /empty data/);
    assertBadRequest(() => decodeProtobufObject(Buffer.from(MAGIC)), /empty body/);
    const good = encodeProtobufObject({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'x' }, data: { a: 'b' } });
    for (let cut = 5; cut < good.length - 4; cut += 3) {
      assert.throws(
        () => decodeProtobufObject(good.subarray(0, cut)),
        (err: unknown) => err instanceof ApiError && err.code === 400,
      );
    }
    assertBadRequest(() => decodeProtobufObject(Buffer.from([...MAGIC, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])), /proto:/);
    const raw = type('k8s.io.api.core.v1.ConfigMap')
      .encode({ metadata: { name: 'x' } })
      .finish();
    assertBadRequest(() => decodeProtobufObject(envelope('example.com/v1', 'Foo', raw)), /no kind "Foo" is registered for version "example.com\/v1"/);
    assertBadRequest(() => decodeProtobufObject(envelope('v1', '', raw)), /Object 'Kind' is missing/);
    // raw bytes that are not a ConfigMap message
    assertBadRequest(() => decodeProtobufObject(envelope('v1', 'ConfigMap', Buffer.from([0x0a, 0x10, 0x01]))), /proto:/);
    // RawExtension with bytes that are not JSON
    const cr = type('k8s.io.api.apps.v1.ControllerRevision')
      .encode({ metadata: { name: 'r' }, data: { raw: Buffer.from('{not json') } })
      .finish();
    assertBadRequest(() => decodeProtobufObject(envelope('apps/v1', 'ControllerRevision', cr)), /not valid JSON/);
  });

  test('prototype-polluting keys in maps and embedded JSON are refused', () => {
    const ConfigMap = type('k8s.io.api.core.v1.ConfigMap');
    // Build the map entry by hand: field 2 (data) = entry {1: key, 2: value}.
    const entry = (key: string): Buffer => {
      const k = Buffer.from(key);
      const inner = Buffer.concat([Buffer.from([0x0a, k.length]), k, Buffer.from([0x12, 0x01, 0x78])]);
      return Buffer.concat([Buffer.from([0x12, inner.length]), inner]);
    };
    assertBadRequest(() => decodeProtobufObject(envelope('v1', 'ConfigMap', entry('__proto__'))), /invalid field name "__proto__"/);
    assertBadRequest(() => decodeProtobufObject(envelope('v1', 'ConfigMap', entry('constructor'))), /invalid field name "constructor"/);
    assert.deepEqual(decodeProtobufObject(envelope('v1', 'ConfigMap', entry('ok'))).object.data, { ok: 'x' });
    assert.ok(ConfigMap);
    const cr = type('k8s.io.api.apps.v1.ControllerRevision')
      .encode({ metadata: { name: 'r' }, data: { raw: Buffer.from('{"__proto__":{"x":1}}') } })
      .finish();
    assertBadRequest(() => decodeProtobufObject(envelope('apps/v1', 'ControllerRevision', cr)), /invalid field name "__proto__"/);
  });

  test('messages follow kube-apiserver when the caller names the expected kind', () => {
    assertBadRequest(
      () => decodeProtobufObject(Buffer.from('xyz'), { kind: 'ConfigMap' }),
      /^the object provided is unrecognized \(must be of type ConfigMap\): provided data does not appear to be a protobuf message.* \(78797a\)$/,
    );
    assertBadRequest(
      () => decodeProtobufObject(envelope('v1', 'ConfigMap', Buffer.from([0x0a, 0x10, 0x01])), { kind: 'ConfigMap' }),
      /^ConfigMap in version "v1" cannot be handled as a ConfigMap: proto:/,
    );
  });

  test('custom resources and Table have no message: ProtobufUnsupportedError, hasProtobufMessage false', () => {
    assert.equal(hasProtobufMessage('example.com/v1', 'Foo'), false);
    assert.equal(hasProtobufMessage('meta.k8s.io/v1', 'Table'), false);
    assert.equal(hasProtobufMessage('v1', 'ConfigMap'), true);
    assert.equal(hasProtobufMessage('apps/v1', 'DeploymentList'), true);
    assert.equal(hasProtobufMessage('apiextensions.k8s.io/v1', 'CustomResourceDefinition'), true);
    assert.equal(hasProtobufMessage('apiregistration.k8s.io/v1', 'APIService'), true);
    assert.equal(hasProtobufMessage('apps/v1', 'DeleteOptions'), true);
    assert.throws(() => encodeProtobufObject({ kind: 'Foo', apiVersion: 'example.com/v1', metadata: { name: 'x' } }), ProtobufUnsupportedError);
    assert.throws(() => encodeProtobufList('FooList', 'example.com/v1', {}, []), ProtobufUnsupportedError);
    assert.throws(() => encodeProtobufWatchFrame('ADDED', { kind: 'Foo', apiVersion: 'example.com/v1' }), ProtobufUnsupportedError);
  });
});
