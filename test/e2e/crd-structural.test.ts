/**
 * CustomResourceDefinition schemas checked as kube-apiserver 1.36 checks them on create: structural
 * schemas, forbidden keywords, x-kubernetes-* consistency, defaults that must be pruned and valid,
 * and patterns that must compile as Go's regexp. Each case of test/fixtures/crd-structural/cases.json
 * is sent to Capstan as a dry-run create and its status code and Status must equal the reference's
 * answer recorded in test/golden/crd-structural/reference.json (scripts/capture-crd-structural-goldens.mjs).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';
import { splitWarnings, type CaseResult, type Send } from './cr-schema-replay.js';
import { replayStructural, type StructuralFixture } from './crd-structural-replay.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const fixture = JSON.parse(readFileSync(join(root, 'test', 'fixtures', 'crd-structural', 'cases.json'), 'utf8')) as StructuralFixture;
const golden = JSON.parse(readFileSync(join(root, 'test', 'golden', 'crd-structural', 'reference.json'), 'utf8')) as CaseResult[];

interface Cause {
  field: string;
  message: string;
  reason: string;
}

/**
 * kube reports the findings of different properties in Go's map order, which changes run to run:
 * an Invalid Status is compared with its causes sorted, once its message is checked to list exactly
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

let srv: TestServer;
let results: CaseResult[] = [];

before(async () => {
  srv = await startTestServer();
  const send: Send = async (method, path, headers, body) => {
    const res = await fetch(`${srv.url}${path}`, { method, headers, body });
    return { status: res.status, warnings: splitWarnings(res.headers.get('warning')), text: await res.text() };
  };
  results = await replayStructural(send, fixture, `${uniqueName('crd-structural')}.example.com`);
});

after(async () => {
  await srv.stop();
});

describe('CRD schemas, as kube-apiserver checks them on create', () => {
  test('the fixture has as many recorded answers as cases', () => {
    assert.equal(golden.length, fixture.cases.length);
    assert.ok(golden.length >= 80);
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
