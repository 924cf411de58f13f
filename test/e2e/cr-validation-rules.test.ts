/**
 * `x-kubernetes-validations` CEL rules compared with kube-apiserver 1.36: every case of
 * test/fixtures/cr-validation-rules/cases.json (custom resources created and updated against a
 * CRD with rules) and of crd-cases.json (CRDs whose rules kube checks at creation) is replayed
 * against Capstan over HTTP; status code, Warning headers and the full body must equal the
 * reference's recorded answer in test/golden/cr-validation-rules/ (recorded by
 * scripts/capture-cr-validation-rules-goldens.mjs).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';
import { eventually, restFor } from './rest.js';
import { crdObject, replay, splitWarnings, type Case, type CaseResult, type CrdFixture, type Send } from './cr-schema-replay.js';
import { replayCrdCases, type CrdCases } from './cr-validation-rules-replay.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const fixtures = join(root, 'test', 'fixtures', 'cr-validation-rules');
const goldens = join(root, 'test', 'golden', 'cr-validation-rules');
const fixture = JSON.parse(readFileSync(join(fixtures, 'cases.json'), 'utf8')) as { crd: CrdFixture; cases: Case[] };
const crdFixture = JSON.parse(readFileSync(join(fixtures, 'crd-cases.json'), 'utf8')) as CrdCases;
const golden = JSON.parse(readFileSync(join(goldens, 'reference.json'), 'utf8')) as CaseResult[];
const crdGolden = JSON.parse(readFileSync(join(goldens, 'crd-reference.json'), 'utf8')) as CaseResult[];

interface Cause {
  field: string;
  message: string;
  reason: string;
}

/** kube lists causes of sibling properties in Go's map order: compare Invalid Statuses with causes sorted. */
function canonical(result: CaseResult): CaseResult {
  const body = result.body as { reason?: string; message?: string; details?: { causes?: Cause[] } };
  const causes = body.details?.causes;
  if (body.reason !== 'Invalid' || causes === undefined || causes.length < 2 || body.message === undefined) return result;
  const prefix = body.message.slice(0, body.message.indexOf(' is invalid: ') + ' is invalid: '.length);
  const sorted = [...causes].sort((a, b) => (a.field + a.message < b.field + b.message ? -1 : 1));
  const list = `${prefix}[${sorted.map((c) => `${c.field}: ${c.message}`).join(', ')}]`;
  return { ...result, body: { ...body, message: list, details: { ...body.details, causes: sorted } } };
}

let srv: TestServer;
let results: CaseResult[] = [];
let crdResults: CaseResult[] = [];

before(async () => {
  srv = await startTestServer();
  const rest = restFor(srv.url);
  const send: Send = async (method, path, headers, body) => {
    const res = await fetch(`${srv.url}${path}`, { method, headers, body });
    return { status: res.status, warnings: splitWarnings(res.headers.get('warning')), text: await res.text() };
  };
  crdResults = await replayCrdCases(send, crdFixture, uniqueName('celrules'));
  const group = `${uniqueName('celrules')}.example.com`;
  await rest.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crdObject(fixture.crd, group));
  await eventually('served', async () => ((await rest.get(`/apis/${group}/v1/${fixture.crd.plural}`)).status === 200 ? true : undefined));
  results = await replay(send, fixture.crd, group, fixture.cases);
});

after(async () => {
  await srv.stop();
});

describe('custom resources checked by CEL rules, as kube-apiserver answers', () => {
  test('every case has a recorded answer', () => {
    assert.equal(golden.length, fixture.cases.length);
  });
  for (const [i, c] of fixture.cases.entries()) {
    test(c.name, () => {
      const want = golden[i];
      const got = results[i];
      assert.ok(want !== undefined && got !== undefined);
      assert.deepEqual(canonical(got), canonical(want));
    });
  }
});

describe('CRD rules checked at creation, as kube-apiserver answers', () => {
  test('every case has a recorded answer', () => {
    assert.equal(crdGolden.length, crdFixture.cases.length);
  });
  for (const [i, c] of crdFixture.cases.entries()) {
    test(c.name, () => {
      const want = crdGolden[i];
      const got = crdResults[i];
      assert.ok(want !== undefined && got !== undefined);
      assert.deepEqual(canonical(got), canonical(want));
    });
  }
});
