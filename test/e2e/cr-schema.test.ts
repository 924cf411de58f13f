/**
 * Custom resources validated, pruned and defaulted by their CRD version's schema, compared with
 * kube-apiserver 1.36: every case of test/fixtures/crd-schema/cases.json is replayed against Capstan
 * over HTTP and its status code, Warning headers and full body (Status or object, volatile metadata
 * removed) must equal the reference's recorded answer in test/golden/crd-schema/reference.json
 * (recorded by scripts/capture-cr-schema-goldens.mjs). kubectl checks a few of the same behaviours.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { uniqueName } from '../helpers/capstan.js';
import { startKubectlEnv, type Kubectl } from './kubectl.js';
import { eventually, restFor, type Rest } from './rest.js';
import { crdObject, replay, splitWarnings, type Case, type CaseResult, type CrdFixture, type Send } from './cr-schema-replay.js';
import type { SuiteServer } from '../helpers/suite-target.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const fixture = JSON.parse(readFileSync(join(root, 'test', 'fixtures', 'crd-schema', 'cases.json'), 'utf8')) as { crd: CrdFixture; cases: Case[] };
const golden = JSON.parse(readFileSync(join(root, 'test', 'golden', 'crd-schema', 'reference.json'), 'utf8')) as CaseResult[];

/**
 * Cases whose reference message holds the whole patched object (times, uid, managedFields, Go's key
 * order): their code, reason and the message's end are compared.
 */
const MESSAGE_TAIL_ONLY = new Set(['merge patch unknown strict']);

interface Cause {
  field: string;
  message: string;
  reason: string;
}

/**
 * kube reports the findings of different properties in Go's map order, which changes run to run: an
 * Invalid Status is compared with its causes sorted, once its message is checked to list exactly
 * its causes in their order.
 */
function canonical(result: CaseResult): CaseResult {
  const body = result.body as { reason?: string; message?: string; details?: { causes?: Cause[] } };
  const causes = body.details?.causes;
  if (body.reason !== 'Invalid' || causes === undefined || causes.length < 2 || body.message === undefined) return result;
  const prefix = body.message.slice(0, body.message.indexOf(' is invalid: ') + ' is invalid: '.length);
  const list = (cs: Cause[]) => `${prefix}[${cs.map((c) => `${c.field}: ${c.message}`).join(', ')}]`;
  assert.equal(body.message, list(causes), `${result.name}: the message lists the causes`);
  const sorted = [...causes].sort((a, b) => (a.field + a.message < b.field + b.message ? -1 : 1));
  return { ...result, body: { ...body, message: list(sorted), details: { ...body.details, causes: sorted } } };
}

let srv: SuiteServer;
let k: Kubectl;
let rest: Rest;
let results: CaseResult[] = [];
const group = `${uniqueName('crschema')}.example.com`;

before(async () => {
  ({ srv, k } = await startKubectlEnv('crschema'));
  rest = restFor(srv.url);
  const crd = crdObject(fixture.crd, group);
  await rest.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
  await eventually('served', async () => ((await rest.get(`/apis/${group}/v1/${fixture.crd.plural}`)).status === 200 ? true : undefined));
  const send: Send = async (method, path, headers, body) => {
    const res = await fetch(`${srv.url}${path}`, { method, headers, body });
    return { status: res.status, warnings: splitWarnings(res.headers.get('warning')), text: await res.text() };
  };
  results = await replay(send, fixture.crd, group, fixture.cases);
});

after(async () => {
  await srv.stop();
});

describe('custom resources by their schema, as kube-apiserver answers', () => {
  test('the fixture has as many recorded answers as cases', () => {
    assert.equal(golden.length, fixture.cases.length);
    assert.ok(golden.length >= 25);
  });
  for (const [i, c] of fixture.cases.entries()) {
    test(c.name, () => {
      const want = golden[i];
      const got = results[i];
      assert.ok(want !== undefined && got !== undefined);
      assert.equal(got.name, want.name);
      if (MESSAGE_TAIL_ONLY.has(c.name)) {
        const w = want.body as { reason: string; message: string };
        const g = got.body as { reason: string; message: string };
        assert.equal(got.status, want.status);
        assert.equal(g.reason, w.reason);
        const tail = w.message.slice(w.message.lastIndexOf('": ') + 1);
        assert.ok(g.message.endsWith(tail), `${g.message} should end with ${tail}`);
        return;
      }
      assert.deepEqual(canonical(got), canonical(want));
    });
  }
});

describe('repeated keys and unknown fields', () => {
  // Recorded from kube-apiserver 1.36: the decoder's repeated keys come before pruning's unknown fields.
  test('Warn sends duplicate then unknown field warnings; Strict refuses with both in that order', async () => {
    const base = `/apis/${group}/v1/${fixture.crd.plural}`;
    const body = (name: string) => `{"apiVersion":"${group}/v1","kind":"Gizmo","metadata":{"name":"${name}"},"spec":{"name":"abc","zz":1,"name":"abd"}}`;
    const send = (query: string, name: string) =>
      fetch(`${srv.url}${base}?${query}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(name) });
    const warn = await send('fieldValidation=Warn', uniqueName('dup'));
    assert.equal(warn.status, 201);
    assert.deepEqual(splitWarnings(warn.headers.get('warning')), ['299 - "duplicate field \\"spec.name\\""', '299 - "unknown field \\"spec.zz\\""']);
    const strict = await send('fieldValidation=Strict', uniqueName('dup'));
    assert.equal(strict.status, 400);
    const status = (await strict.json()) as { reason: string; message: string };
    assert.equal(status.reason, 'BadRequest');
    assert.equal(
      status.message,
      'Gizmo in version "v1" cannot be handled as a Gizmo: strict decoding error: duplicate field "spec.name", unknown field "spec.zz"',
    );
  });
});

describe('defaults on read', () => {
  test('a default added to the schema after a write shows on GET and LIST, as kube defaults what it reads', async () => {
    const g = `${uniqueName('rd')}.example.com`;
    const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
    const schema = (spec: Record<string, unknown>) => ({ type: 'object', properties: { spec: { type: 'object', properties: spec } } });
    const crd = crdObject({ plural: 'things', kind: 'Thing', schema: schema({ a: { type: 'string' } }) }, g);
    await rest.create(crdPath, crd);
    const base = `/apis/${g}/v1/things`;
    await eventually('served', async () => ((await rest.get(base)).status === 200 ? true : undefined));
    await rest.create(base, { apiVersion: `${g}/v1`, kind: 'Thing', metadata: { name: 't1' }, spec: { a: 'x' } });
    const current = await rest.get(`${crdPath}/things.${g}`);
    const updated = current.body as { spec: { versions: { schema: { openAPIV3Schema: unknown } }[] } };
    const version = updated.spec.versions[0];
    assert.ok(version !== undefined);
    version.schema.openAPIV3Schema = schema({ a: { type: 'string' }, d: { type: 'string', default: 'hello' } });
    assert.equal((await rest.put(`${crdPath}/things.${g}`, updated)).status, 200);
    const got = await eventually('defaulted on read', async () => {
      const r = await rest.get(`${base}/t1`);
      return (r.body as { spec: Record<string, unknown> }).spec.d === undefined ? undefined : r;
    });
    assert.deepEqual((got.body as { spec: unknown }).spec, { a: 'x', d: 'hello' });
    const list = await rest.get(base);
    assert.deepEqual(
      (list.body as { items: { spec: unknown }[] }).items.map((i) => i.spec),
      [{ a: 'x', d: 'hello' }],
    );
  });
});

describe('validation ratcheting on update', () => {
  test('unchanged values that a tightened schema refuses are let through; changed ones and changed atomic lists are not (messages from kube-apiserver 1.36)', async () => {
    const g = `${uniqueName('rt')}.example.com`;
    const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
    const schema = (max: number) => ({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: { a: { type: 'string' }, c: { type: 'integer', maximum: max }, l: { type: 'array', items: { type: 'integer', maximum: max } } },
        },
      },
    });
    await rest.create(crdPath, crdObject({ plural: 'things', kind: 'Thing', schema: schema(10) }, g));
    const base = `/apis/${g}/v1/things`;
    await eventually('served', async () => ((await rest.get(base)).status === 200 ? true : undefined));
    await rest.create(base, { apiVersion: `${g}/v1`, kind: 'Thing', metadata: { name: 't1' }, spec: { a: 'x', c: 8, l: [8, 9] } });
    const current = (await rest.get(`${crdPath}/things.${g}`)).body as { spec: { versions: { schema: { openAPIV3Schema: unknown } }[] } };
    const version = current.spec.versions[0];
    assert.ok(version !== undefined);
    version.schema.openAPIV3Schema = schema(5);
    assert.equal((await rest.put(`${crdPath}/things.${g}`, current)).status, 200);
    await eventually('tightened', async () => ((await rest.patch(`${base}/t1`, { spec: { c: 9 } })).status === 422 ? true : undefined));
    const kept = await rest.patch(`${base}/t1`, { spec: { a: 'y' } });
    assert.equal(kept.status, 200, kept.text);
    const changed = await rest.patch(`${base}/t1`, { spec: { c: 7 } });
    assert.equal(changed.status, 422);
    assert.equal(
      (changed.body as { message: string }).message,
      'Thing.' + g + ' "t1" is invalid: spec.c: Invalid value: 7: spec.c in body should be less than or equal to 5',
    );
    const list = await rest.patch(`${base}/t1`, [{ op: 'replace', path: '/spec/l/1', value: 1 }], 'application/json-patch+json');
    assert.equal(list.status, 422);
    assert.equal(
      (list.body as { message: string }).message,
      'Thing.' + g + ' "t1" is invalid: spec.l[0]: Invalid value: 8: spec.l[0] in body should be less than or equal to 5',
    );
  });
});

describe('scale subresource', () => {
  test('a scale write is validated by the schema of the object it changes (message from kube-apiserver 1.36)', async () => {
    const g = `${uniqueName('sc')}.example.com`;
    const crd = crdObject(
      {
        plural: 'things',
        kind: 'Thing',
        schema: {
          type: 'object',
          properties: {
            spec: { type: 'object', properties: { replicas: { type: 'integer', maximum: 5 } } },
            status: { type: 'object', properties: { replicas: { type: 'integer' } } },
          },
        },
      },
      g,
    ) as { spec: { versions: { subresources: unknown }[] } };
    const version = crd.spec.versions[0];
    assert.ok(version !== undefined);
    version.subresources = { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } };
    await rest.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    const base = `/apis/${g}/v1/things`;
    await eventually('served', async () => ((await rest.get(base)).status === 200 ? true : undefined));
    await rest.create(base, { apiVersion: `${g}/v1`, kind: 'Thing', metadata: { name: 't1' }, spec: { replicas: 1 } });
    const r = await rest.patch(`${base}/t1/scale`, { spec: { replicas: 9 } });
    assert.equal(r.status, 422, r.text);
    assert.deepEqual(r.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `Thing.${g} "t1" is invalid: spec.replicas: Invalid value: 9: spec.replicas in body should be less than or equal to 5`,
      reason: 'Invalid',
      details: {
        name: 't1',
        group: g,
        kind: 'Thing',
        causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: 9: spec.replicas in body should be less than or equal to 5', field: 'spec.replicas' }],
      },
      code: 422,
    });
  });
});

describe('kubectl and custom resource schemas', () => {
  // --validate=false: kubectl validates client-side when a CRD's OpenAPI paths lack the fieldValidation parameter.
  test('kubectl create gets the invalid object refused with kube message; unknown fields are pruned and defaults set', async () => {
    const manifest = (spec: string) => `apiVersion: ${group}/v1\nkind: ${fixture.crd.kind}\nmetadata:\n  name: ${uniqueName('kc')}\nspec:\n${spec}\n`;
    const bad = await k.run(['create', '--validate=false', '-f', '-'], { input: manifest('  name: abc\n  count: 11') });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /spec\.count: Invalid value: 11: spec\.count in body should be less than or equal to 10/);
    const good = await k.run(['create', '--validate=false', '-f', '-', '-o', 'json'], { input: manifest('  name: abc\n  bogus: 1') });
    assert.equal(good.code, 0, good.stderr);
    const obj = JSON.parse(good.stdout) as { spec: Record<string, unknown> };
    assert.deepEqual(obj.spec, { mode: 'auto', name: 'abc', nested: { a: 5 }, 'nullable-def': 'nd', nulldef: 'd' });
  });
});
