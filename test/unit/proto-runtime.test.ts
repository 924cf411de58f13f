/**
 * The descriptor's packages are built on first use (proto-runtime.ts): every message looked up that
 * way has exactly the fields, numbers, types and resolved message types of the same message in a
 * root built from the whole descriptor at once, in any order of first use.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type protobuf from 'protobufjs';
import { descriptorMessageNames, lookupMessage, protobufModule } from '../../src/codec/protobuf/proto-runtime.js';
import { readSchemaJson } from '../../src/schema/schema-files.js';

function messages(ns: protobuf.NamespaceBase, out: protobuf.Type[] = []): protobuf.Type[] {
  for (const nested of ns.nestedArray) {
    if (nested instanceof protobufModule().Type) out.push(nested);
    else if (nested instanceof protobufModule().Namespace) messages(nested, out);
  }
  return out;
}

function shape(type: protobuf.Type): string[] {
  return type.fieldsArray.map((f) => `${f.name}=${f.id} ${f.rule ?? ''} ${f.type} ${f.map ? 'map' : ''} -> ${f.resolvedType?.fullName ?? 'scalar'}`);
}

test('the first message looked up (a Pod) encodes and decodes through its package and the packages it refers to', () => {
  const pod = lookupMessage('k8s.io.api.core.v1.Pod');
  assert.ok(pod);
  const message = pod.fromObject({
    metadata: { name: 'p', labels: { app: 'web' }, creationTimestamp: { seconds: 1700000000 } },
    spec: { containers: [{ name: 'c', image: 'nginx', resources: { limits: { cpu: { string: '500m' } } } }] },
  });
  const decoded = pod.toObject(pod.decode(pod.encode(message).finish()), { longs: Number }) as {
    metadata: { name: string; labels: Record<string, string>; creationTimestamp: { seconds: number } };
    spec: { containers: Array<{ image: string; resources: { limits: Record<string, { string: string }> } }> };
  };
  assert.equal(decoded.metadata.name, 'p');
  assert.deepEqual(decoded.metadata.labels, { app: 'web' });
  assert.equal(decoded.metadata.creationTimestamp.seconds, 1700000000);
  assert.equal(decoded.spec.containers[0]?.image, 'nginx');
  assert.equal(decoded.spec.containers[0]?.resources.limits.cpu?.string, '500m');
});

test('every message looked up package by package matches the whole descriptor built at once', () => {
  const whole = protobufModule().Root.fromJSON(readSchemaJson('protobuf.json') as protobuf.INamespace);
  whole.resolveAll();
  const all = messages(whole);
  assert.ok(all.length > 1000, `${all.length} messages in the descriptor`);
  assert.deepEqual(descriptorMessageNames().sort(), all.map((t) => t.fullName.slice(1)).sort());
  // After the pod of the test before, the rest in reverse order of the descriptor.
  const names = all.map((t) => t.fullName.slice(1)).reverse();
  for (const name of names) {
    const lazy = lookupMessage(name);
    const eager = whole.lookupType(name);
    assert.ok(lazy, `${name} found`);
    assert.equal(lazy.fullName, eager.fullName);
    assert.deepEqual(shape(lazy), shape(eager), name);
  }
  assert.equal(lookupMessage('k8s.io.api.core.v1.NoSuchKind'), undefined);
  assert.equal(lookupMessage('k8s.io.api.nosuchgroup.v1.Pod'), undefined);
  assert.equal(lookupMessage('Pod'), undefined);
});
