/**
 * Errors of CBOR requests worded as kube-apiserver 1.36 words them with
 * `--feature-gates=CBORServingAndStorage=true` (every message below was read from it): the PATCH
 * handler's 415 for custom resources (no strategic merge patch, `apply-patch+cbor` listed with the gate
 * on), and fxamacker/cbor's type errors for CBOR bodies of built-in kinds (the top type's field the
 * error surfaced in, the innermost Go type, the CBOR type of the value, int overflows), and custom
 * resources' `integer` fields at the int64 bounds in CBOR and JSON.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';
import { encodeCbor } from '../../src/codec/cbor/cbor-encoder.js';
import { KNOWN_GATES } from '../../src/api/feature-gates.js';

let on: TestServer;
let off: TestServer;

before(async () => {
  [on, off] = await Promise.all([startTestServer({ featureGates: { ...KNOWN_GATES, CBORServingAndStorage: true } }), startTestServer()]);
});

after(async () => {
  await Promise.all([on.stop(), off.stop()]);
});

async function status(srv: TestServer, method: string, path: string, contentType: string, body: Buffer | string): Promise<{ code: number; message: string }> {
  const r = await fetch(srv.url + path, { method, headers: { 'content-type': contentType }, body: typeof body === 'string' ? body : new Uint8Array(body) });
  const text = await r.text();
  const parsed = JSON.parse(text) as { message?: string };
  return { code: r.status, message: parsed.message ?? text };
}

/** Creates a namespaced CRD and waits until its resource is served; returns the collection path. */
async function widgets(srv: TestServer): Promise<string> {
  const group = `${uniqueName('cborerr')}.example.com`;
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { n: { type: 'integer' } } } },
            },
          },
        },
      ],
    },
  };
  const created = await api(srv.url, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(crd),
  });
  assert.equal(created.status, 201, created.text);
  const path = `/apis/${group}/v1/namespaces/default/widgets`;
  for (let i = 0; (await api(srv.url, path)).status !== 200; i++) {
    assert.ok(i < 200, 'custom resource not served');
    await new Promise((r) => setTimeout(r, 50));
  }
  const w = { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1' }, spec: { count: 1 } };
  assert.equal((await status(srv, 'POST', path, 'application/json', JSON.stringify(w))).code, 201);
  return path;
}

/** CBOR for `body` with the byte string `marker` replaced by the raw item `raw` (a text string, a float). */
function cborWith(body: Record<string, unknown>, marker: string, raw: Buffer): Buffer {
  const encoded = encodeCbor(body);
  const placeholder = encodeCbor(marker).subarray(3); // without the self-described tag
  const at = encoded.indexOf(placeholder);
  assert.ok(at > 0, 'marker not found');
  return Buffer.concat([encoded.subarray(0, at), raw, encoded.subarray(at + placeholder.length)]);
}

/** A CBOR text string (major type 3), which kube's encoder never writes but accepts. */
function textString(s: string): Buffer {
  const bytes = Buffer.from(s);
  assert.ok(bytes.length < 24);
  return Buffer.concat([Buffer.from([0x60 | bytes.length]), bytes]);
}

/** A CBOR float64, whole or not. */
function float64(v: number): Buffer {
  const b = Buffer.alloc(9);
  b[0] = 0xfb;
  b.writeDoubleBE(v, 1);
  return b;
}

const PREFIX = 'the body of the request was in an unknown format - accepted media types include: ';

describe('PATCH of a custom resource: the handler 415 lists the custom resource patch types', () => {
  test('gate on: apply-patch+cbor listed; CBOR merge, JSON and strategic merge patches and SMP in JSON refused', async () => {
    const path = `${await widgets(on)}/w1`;
    const expected = `${PREFIX}application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/apply-patch+cbor`;
    for (const type of [
      'application/merge-patch+cbor',
      'application/json-patch+cbor',
      'application/strategic-merge-patch+cbor',
      'application/strategic-merge-patch+json',
    ]) {
      assert.deepEqual(await status(on, 'PATCH', path, type, encodeCbor({ spec: { count: 2 } })), { code: 415, message: expected }, type);
    }
    // Before the object is read: a missing object gets the same 415.
    assert.deepEqual(await status(on, 'PATCH', `${path}-absent`, 'application/merge-patch+cbor', encodeCbor({})), { code: 415, message: expected });
  });

  test('gate off: the same list without apply-patch+cbor', async () => {
    const path = `${await widgets(off)}/w1`;
    const expected = `${PREFIX}application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`;
    for (const type of ['application/merge-patch+cbor', 'application/strategic-merge-patch+json']) {
      assert.deepEqual(await status(off, 'PATCH', path, type, '{}'), { code: 415, message: expected }, type);
    }
  });

  test('built-in resources keep go-restful 415 for a CBOR merge patch', async () => {
    const r = await status(on, 'PATCH', '/api/v1/namespaces/default/configmaps/x', 'application/merge-patch+cbor', encodeCbor({}));
    assert.deepEqual(r, { code: 415, message: '415: Unsupported Media Type' });
  });
});

describe('type errors of CBOR bodies in kube CBOR decoder words', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    [
      '/api/v1/namespaces/default/configmaps',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1' }, data: 5 },
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: cannot unmarshal positive integer into Go struct field v1.ConfigMap.data of type map[string]string',
    ],
    [
      '/api/v1/namespaces/default/configmaps',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 5 } },
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: cannot unmarshal positive integer into Go struct field v1.ConfigMap.metadata of type string',
    ],
    [
      '/api/v1/namespaces/default/configmaps',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c3', labels: ['x'] } },
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: cannot unmarshal array into Go struct field v1.ConfigMap.metadata of type map[string]string',
    ],
    [
      '/api/v1/namespaces/default/configmaps',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c4' }, immutable: 'yes' },
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: cannot unmarshal byte string into Go struct field v1.ConfigMap.immutable of type bool',
    ],
    [
      '/api/v1/namespaces/default/configmaps',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c6', generation: 1.5 } },
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: cannot unmarshal primitives into Go struct field v1.ConfigMap.metadata of type int64',
    ],
    [
      '/api/v1/namespaces/default/configmaps',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c7', generation: -1e30 } },
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: cannot unmarshal primitives into Go struct field v1.ConfigMap.metadata of type int64',
    ],
    [
      '/api/v1/namespaces/default/configmaps',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c8' }, data: { a: true } },
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: cannot unmarshal primitives into Go struct field v1.ConfigMap.data of type string',
    ],
    [
      '/api/v1/namespaces/default/configmaps',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c9' }, data: { a: { b: 1 } } },
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: cannot unmarshal map into Go struct field v1.ConfigMap.data of type string',
    ],
    [
      '/api/v1/namespaces/default/pods',
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p1' }, spec: { containers: [{ name: 5, image: 'x' }] } },
      'Pod in version "v1" cannot be handled as a Pod: cbor: cannot unmarshal positive integer into Go struct field v1.Pod.spec of type string',
    ],
    [
      '/apis/apps/v1/namespaces/default/deployments',
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd1' }, spec: { replicas: 1099511627776 } },
      'Deployment in version "v1" cannot be handled as a Deployment: cbor: cannot unmarshal positive integer into Go struct field v1.Deployment.spec of type int32 (1099511627776 overflows int32)',
    ],
    [
      '/apis/apps/v1/namespaces/default/deployments',
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd2' }, spec: { replicas: -5, paused: 'x' } },
      'Deployment in version "v1" cannot be handled as a Deployment: cbor: cannot unmarshal byte string into Go struct field v1.Deployment.spec of type bool',
    ],
  ];

  test(`${cases.length} bodies with a field of the wrong type`, async () => {
    for (const [path, body, message] of cases) {
      assert.deepEqual(await status(on, 'POST', path, 'application/cbor', encodeCbor(body)), { code: 400, message }, message);
    }
  });

  const raw: [string, Record<string, unknown>, Buffer, string][] = [
    [
      '/api/v1/namespaces/default/configmaps',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 't1' }, immutable: '@' },
      textString('yes'),
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: cannot unmarshal UTF-8 text string into Go struct field v1.ConfigMap.immutable of type bool',
    ],
    [
      '/api/v1/namespaces/default/configmaps',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 't2' }, data: '@' },
      textString('x'),
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: cannot unmarshal UTF-8 text string into Go struct field v1.ConfigMap.data of type map[string]string',
    ],
    [
      '/api/v1/namespaces/default/configmaps',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 't3', generation: '@' } },
      textString('x'),
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: cannot unmarshal UTF-8 text string into Go struct field v1.ConfigMap.metadata of type int64',
    ],
    [
      '/apis/apps/v1/namespaces/default/deployments',
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 't4' }, spec: { replicas: '@' } },
      textString('2'),
      'Deployment in version "v1" cannot be handled as a Deployment: cbor: cannot unmarshal UTF-8 text string into Go struct field v1.Deployment.spec of type int32',
    ],
    [
      '/api/v1/namespaces/default/configmaps',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'f1', generation: '@' } },
      float64(2),
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: cbor: cannot unmarshal primitives into Go struct field v1.ConfigMap.metadata of type int64',
    ],
    [
      '/apis/apps/v1/namespaces/default/deployments',
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'f2' }, spec: { replicas: '@' } },
      float64(2),
      'Deployment in version "v1" cannot be handled as a Deployment: cbor: cannot unmarshal primitives into Go struct field v1.Deployment.spec of type int32',
    ],
  ];

  test(`${raw.length} bodies with a text string or a whole float: kube names the CBOR type sent`, async () => {
    for (const [path, body, item, message] of raw) {
      assert.deepEqual(await status(on, 'POST', path, 'application/cbor', cborWith(body, '@', item)), { code: 400, message }, message);
    }
  });

  test("the same body in JSON keeps encoding/json's wording", async () => {
    const r = await status(on, 'POST', cases[3][0], 'application/json', JSON.stringify(cases[3][1]));
    assert.equal(
      r.message,
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool',
    );
  });
});

/** A CBOR integer head with an 8-byte argument: major type 0 (n >= 0) or 1 (-1 - n). */
function int64Item(v: bigint): Buffer {
  const b = Buffer.alloc(9);
  b[0] = v >= 0n ? 0x1b : 0x3b;
  b.writeBigUInt64BE(v >= 0n ? v : -1n - v, 1);
  return b;
}

describe('custom-resource integers near the int64 bounds and floats in integer fields, as kube answers', () => {
  const notInteger = (group: string, name: string): string =>
    `Widget.${group} "${name}" is invalid: [spec.n: Invalid value: "number": spec.n in body must be of type integer: "number", <nil>: Invalid value: "": Checked value must be of type integer (default format) in spec.n]`;

  test('JSON: int64 bounds and whole floats accepted; beyond int64 and fractions refused with both findings', async () => {
    const path = await widgets(on);
    const group = path.split('/')[2];
    const cases: [string, number, string | undefined][] = [
      ['9223372036854775807', 201, undefined],
      ['-9223372036854775808', 201, undefined],
      ['2.0', 201, undefined],
      ['9223372036854775808', 422, 'notint'],
      ['-9223372036854775809', 422, 'notint'],
      ['2.5', 422, 'notint'],
    ];
    for (const [i, [literal, code, expect]] of cases.entries()) {
      const name = `j${i}`;
      const body = `{"apiVersion":"${group}/v1","kind":"Widget","metadata":{"name":"${name}"},"spec":{"n":${literal}}}`;
      const r = await status(on, 'POST', path, 'application/json', body);
      assert.equal(r.code, code, `${literal}: ${r.message}`);
      if (expect !== undefined) assert.equal(r.message, notInteger(group, name), literal);
    }
  });

  test('CBOR: int64 bounds and whole floats accepted; beyond int64 refused by the decoder; a float of 2^63 is no integer', async () => {
    const path = await widgets(on);
    const group = path.split('/')[2];
    const cases: [Buffer, number, string | undefined][] = [
      [int64Item(2n ** 63n - 1n), 201, undefined],
      [int64Item(-(2n ** 63n)), 201, undefined],
      [float64(2), 201, undefined],
      [
        int64Item(2n ** 63n),
        400,
        'Widget in version "v1" cannot be handled as a Widget: cbor: cannot unmarshal positive integer into Go value of type int64 (9223372036854775808 overflows Go\'s int64)',
      ],
      [
        int64Item(-(2n ** 63n) - 1n),
        400,
        'Widget in version "v1" cannot be handled as a Widget: cbor: cannot unmarshal negative integer into Go value of type int64 (-9223372036854775809 overflows Go\'s int64)',
      ],
      [float64(2 ** 63), 422, 'notint'],
    ];
    for (const [i, [item, code, expect]] of cases.entries()) {
      const name = `c${i}`;
      const body = cborWith({ apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name }, spec: { n: '@' } }, '@', item);
      const r = await status(on, 'POST', path, 'application/cbor', body);
      assert.deepEqual(r.code, code, `${item.toString('hex')}: ${r.message}`);
      if (expect !== undefined) assert.equal(r.message, expect === 'notint' ? notInteger(group, name) : expect);
    }
  });
});
