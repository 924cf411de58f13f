import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeProtobufList, ProtobufListEncoder, ProtobufUnsupportedError } from '../../src/codec/protobuf/protobuf-codec.js';
import { toPartialObjectMetadata } from '../../src/codec/representations.js';

/**
 * The item-by-item protobuf list encoder writes the bytes of the whole-list encoder (which the
 * protobuf goldens check), for full and metadata-only lists, large and empty ones.
 */

type Obj = Record<string, unknown>;

function pod(i: number): Obj {
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {
      name: `p${i}`,
      namespace: 'default',
      uid: `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`,
      resourceVersion: String(100 + i),
      creationTimestamp: '2024-01-02T03:04:05Z',
      labels: { app: 'web', index: String(i) },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u', controller: true }],
    },
    spec: {
      containers: [
        {
          name: 'c',
          image: 'nginx',
          ports: [{ containerPort: 80 + i, protocol: 'TCP' }],
          resources: { limits: { cpu: '500m', memory: '128Mi' } },
          livenessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 10 },
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      tolerations: [{ key: 'k', operator: 'Exists', tolerationSeconds: 300 }],
    },
    status: { phase: 'Pending', qosClass: 'Burstable' },
  };
}

function streamed(kind: string, apiVersion: string, metadata: Obj, items: Obj[]): Buffer {
  const e = new ProtobufListEncoder(kind, apiVersion, metadata);
  for (const i of items) e.add(i);
  return Buffer.concat([...e.chunks()]);
}

test('item by item: the same bytes as the whole-list encoder', () => {
  const meta = { resourceVersion: '12345', continue: 'abc', remainingItemCount: 7 };
  for (const n of [0, 1, 3, 2000]) {
    const pods = Array.from({ length: n }, (_, i) => pod(i));
    assert.deepEqual(streamed('PodList', 'v1', meta, pods), encodeProtobufList('PodList', 'v1', meta, pods), `${n} pods`);
    const partial = pods.map(toPartialObjectMetadata);
    assert.deepEqual(
      streamed('PartialObjectMetadataList', 'meta.k8s.io/v1', meta, partial),
      encodeProtobufList('PartialObjectMetadataList', 'meta.k8s.io/v1', meta, partial),
      `${n} metadata-only`,
    );
  }
  const secrets = [{ kind: 'Secret', apiVersion: 'v1', metadata: { name: 's' }, data: { a: 'AAEC/w==' }, type: 'Opaque' }];
  assert.deepEqual(streamed('SecretList', 'v1', {}, secrets), encodeProtobufList('SecretList', 'v1', {}, secrets));
});

test('a list kind without a protobuf message is refused before anything is encoded', () => {
  assert.throws(() => new ProtobufListEncoder('WidgetList', 'example.com/v1', {}), ProtobufUnsupportedError);
});
