import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDuration, formatTimestamp, parseDuration, parseTimestamp } from '../../src/codec/protobuf/wire-time.js';
import { planFor, type MessagePlan } from '../../src/codec/protobuf/message-plan.js';
import { descriptorMessageNames, lookupMessage } from '../../src/codec/protobuf/proto-runtime.js';
import { fieldPresence } from '../../src/codec/protobuf/field-presence.js';

function plan(name: string): MessagePlan {
  const t = lookupMessage(name);
  assert.ok(t, name);
  return planFor(t);
}

describe('protobuf wire time values', () => {
  test('Time: RFC 3339 UTC whole seconds; zero time is absent', () => {
    assert.equal(formatTimestamp(1704164645, 0, 0), '2024-01-02T03:04:05Z');
    assert.equal(formatTimestamp(1704164645, 999_999_999, 0), '2024-01-02T03:04:05Z');
    assert.equal(formatTimestamp(0, 0, 0), undefined);
    assert.equal(formatTimestamp(-1, 0, 0), '1969-12-31T23:59:59Z');
    assert.deepEqual(parseTimestamp('2024-01-02T03:04:05Z'), { seconds: 1704164645, nanos: 0 });
    assert.deepEqual(parseTimestamp('2024-01-02T04:04:05.5+01:00'), { seconds: 1704164645, nanos: 500_000_000 });
    assert.equal(parseTimestamp('yesterday'), undefined);
  });

  test('Time: the whole-second UTC form (read without a regular expression) agrees with the general form', () => {
    for (const t of [
      '2024-01-02T03:04:05Z',
      '1970-01-01T00:00:00Z',
      '1969-12-31T23:59:59Z',
      '9999-12-31T23:59:59Z',
      '2024-02-29T12:00:00Z',
      '1000-01-01T00:00:00Z',
    ]) {
      assert.deepEqual(parseTimestamp(t), { seconds: Date.parse(t) / 1000, nanos: 0 }, t);
      assert.deepEqual(parseTimestamp(t), parseTimestamp(t.replace('Z', '.0+00:00')), t);
    }
    // Out-of-range fields roll over as in the general form; malformed texts are no time.
    assert.deepEqual(parseTimestamp('2024-13-01T00:00:00Z'), parseTimestamp('2024-13-01T00:00:00.0Z'));
    assert.deepEqual(parseTimestamp('0099-01-01T00:00:00Z'), parseTimestamp('0099-01-01T00:00:00.0Z'));
    for (const t of ['2024-01-02T03:04:0xZ', '2024-01-02 03:04:05Z', '2024/01/02T03:04:05Z', '+024-01-02T03:04:05Z'])
      assert.equal(parseTimestamp(t), undefined, t);
  });

  test('Time: whole-second times of one day and of many days, in range and rolled over, agree with the general form', () => {
    const two = (n: number): string => String(n).padStart(2, '0');
    let seed = 7;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let i = 0; i < 3000; i++) {
      // A run on one day, then a different day at every time; fields up to 99 (hours 24-99, day 32, month 13 roll over).
      const sameDay = i < 1000;
      const year = sameDay ? 2026 : 1000 + next(9000);
      const month = sameDay ? 12 : 1 + next(13);
      const day = sameDay ? 2 : 1 + next(32);
      const t = `${year}-${two(month)}-${two(day)}T${two(next(i % 7 === 0 ? 100 : 24))}:${two(next(i % 11 === 0 ? 100 : 60))}:${two(next(i % 13 === 0 ? 100 : 60))}Z`;
      assert.deepEqual(parseTimestamp(t), parseTimestamp(t.replace('Z', '.0Z')), t);
    }
  });

  test('MicroTime: six fractional digits', () => {
    assert.equal(formatTimestamp(1704164645, 123_456_789, 6), '2024-01-02T03:04:05.123456Z');
    assert.equal(formatTimestamp(1704164645, 0, 6), '2024-01-02T03:04:05.000000Z');
    assert.deepEqual(parseTimestamp('2024-01-02T03:04:05.123456Z'), { seconds: 1704164645, nanos: 123_456_000 });
  });

  test('Duration: Go time.Duration.String() and ParseDuration', () => {
    const cases: [bigint, string][] = [
      [0n, '0s'],
      [1n, '1ns'],
      [1_500n, '1.5µs'],
      [300_000_000n, '300ms'],
      [1_000_000_000n, '1s'],
      [1_500_000_000n, '1.5s'],
      [60_000_000_000n, '1m0s'],
      [3_723_000_000_000n, '1h2m3s'],
      [259_200_000_000_000n, '72h0m0s'],
      [-90_000_000_000n, '-1m30s'],
      [9_223_372_036_854_775_807n, '2562047h47m16.854775807s'],
    ];
    for (const [ns, text] of cases) {
      assert.equal(formatDuration(ns), text, text);
      assert.equal(parseDuration(text), ns, text);
    }
    assert.equal(parseDuration('1h30m'), 5_400_000_000_000n);
    assert.equal(parseDuration('2us'), 2_000n);
    assert.equal(parseDuration('0'), 0n);
    assert.equal(parseDuration('5'), undefined);
    assert.equal(parseDuration('1d'), undefined);
  });
});

describe('protobuf conversion plans', () => {
  test('inline embedded structs are detected from OpenAPI', () => {
    const inline = (msg: string): string[] =>
      plan(msg)
        .fields.filter((f) => f.inline)
        .map((f) => f.protoName);
    assert.deepEqual(inline('k8s.io.api.core.v1.Volume'), ['volumeSource']);
    assert.deepEqual(inline('k8s.io.api.core.v1.PersistentVolumeSpec'), ['persistentVolumeSource']);
    assert.deepEqual(inline('k8s.io.api.core.v1.EphemeralContainer'), ['ephemeralContainerCommon']);
    assert.deepEqual(inline('k8s.io.api.core.v1.Probe'), ['handler']);
    assert.deepEqual(inline('k8s.io.api.core.v1.SecretKeySelector'), ['localObjectReference']);
    assert.deepEqual(inline('k8s.io.api.networking.v1.IngressRule'), ['ingressRuleValue']);
    assert.deepEqual(inline('k8s.io.api.admissionregistration.v1.NamedRuleWithOperations'), ['ruleWithOperations']);
    assert.deepEqual(inline('k8s.io.api.resource.v1.DeviceClaimConfiguration'), ['deviceConfiguration']);
    // Not inline although most fields overlap: named differently from its type (v1alpha1 has no OpenAPI).
    assert.deepEqual(inline('k8s.io.api.node.v1alpha1.RuntimeClass'), []);
    assert.deepEqual(inline('k8s.io.api.core.v1.Container'), []);
  });

  test('proto names differing from JSON names map to the OpenAPI property', () => {
    const json = (msg: string, proto: string): string | undefined => plan(msg).fields.find((f) => f.protoName === proto)?.jsonName;
    assert.equal(json('k8s.io.api.admissionregistration.v1.ValidatingWebhookConfiguration', 'Webhooks'), 'webhooks');
    assert.equal(json('k8s.io.api.authentication.v1.BoundObjectReference', 'uID'), 'uid');
    assert.equal(json('k8s.io.api.networking.v1.IngressClassParametersReference', 'aPIGroup'), 'apiGroup');
    assert.equal(json('k8s.io.api.admissionregistration.v1.Variable', 'Expression'), 'expression');
    assert.equal(json('k8s.io.api.admissionregistration.v1beta1.Variable', 'Name'), 'name');
    const props = 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps';
    assert.equal(json(props, 'ref'), '$ref');
    assert.equal(json(props, 'schema'), '$schema');
    assert.equal(json(props, 'xKubernetesPreserveUnknownFields'), 'x-kubernetes-preserve-unknown-fields');
    // `description` was stripped from the OpenAPI copy; the proto name stands.
    assert.equal(json(props, 'description'), 'description');
    assert.equal(json('k8s.io.api.scheduling.v1.PriorityClass', 'description'), 'description');
  });

  test('Go pointer / always-written facts', () => {
    assert.equal(fieldPresence('k8s.io.api.apps.v1.DeploymentSpec', 'replicas'), 'pointer');
    assert.equal(fieldPresence('k8s.io.api.apps.v1.DeploymentSpec', 'minReadySeconds'), 'omitempty');
    assert.equal(fieldPresence('k8s.io.api.core.v1.PodSpec', 'automountServiceAccountToken'), 'pointer');
    assert.equal(fieldPresence('k8s.io.api.core.v1.ContainerPort', 'containerPort'), 'always');
    assert.equal(fieldPresence('k8s.io.api.core.v1.VolumeSource', 'emptyDir'), 'pointer');
  });

  test('every message of the descriptor gets a plan', () => {
    let count = 0;
    for (const name of descriptorMessageNames()) {
      const message = lookupMessage(name);
      assert.ok(message, name);
      const p = plan(name);
      // One field plan per proto field, in descriptor order, each bound to a JSON member or inlined.
      assert.deepEqual(
        p.fields.map((f) => f.protoName),
        message.fieldsArray.map((f) => f.name),
        name,
      );
      for (const f of p.fields) assert.ok(f.jsonName !== '' || f.inline !== undefined, `${name}.${f.protoName} has a JSON name or is inline`);
      count++;
    }
    assert.equal(count, 1224);
  });
});
