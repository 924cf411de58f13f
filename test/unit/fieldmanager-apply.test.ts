/**
 * Capstan's server-side apply against apimachinery's own (tools/goldens `managedfields`, `apply`
 * steps): every sequence of test/fixtures/managedfields/apply/ (applies, with and without force,
 * and updates by other managers) is replayed through applyConfiguration and updateManagedFields
 * and compared with what k8s.io/apimachinery/pkg/util/managedfields (FieldManager.Apply, with
 * structured-merge-diff) made of the same objects (test/golden/managedfields/apply/): the merged
 * object, the managedFields entry by entry and in order, and the 409 Status of a conflict.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApplyConflictError, applyConfiguration } from '../../src/fieldmanager/apply-configuration.js';
import { applyConflictStatus } from '../../src/fieldmanager/apply-conflict-status.js';
import { FieldSet } from '../../src/fieldmanager/field-set.js';
import { fieldElement } from '../../src/fieldmanager/path-element.js';
import { smdTypeOf } from '../../src/fieldmanager/smd-type.js';
import { emptyObjectFor } from '../../src/fieldmanager/track-write.js';
import { customResourceType } from '../../src/fieldmanager/custom-smd-type.js';
import { updateManagedFields } from '../../src/fieldmanager/update-managed-fields.js';
import { schemaForKind } from '../../src/schema/openapi-schema.js';

type Obj = Record<string, unknown>;

interface Step {
  op?: 'apply' | 'patch';
  patch?: Obj;
  force?: boolean;
  manager: string;
  subresource: string;
  reset: string[][];
  object: Obj;
}

interface GoldenStep {
  managedFields: Obj[] | null;
  object?: Obj;
  error?: Obj;
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const dir = (kind: 'fixtures' | 'golden'): string => join(root, 'test', kind, 'managedfields', 'apply');
const files = readdirSync(dir('fixtures'))
  .filter((f) => f.endsWith('.json'))
  .sort();
const read = <T>(kind: 'fixtures' | 'golden'): T[] => files.flatMap((f) => (JSON.parse(readFileSync(join(dir(kind), f), 'utf8')) as { cases: T[] }).cases);
const corpus = { cases: read<{ name: string; steps: Step[] }>('fixtures') };
const golden = { cases: read<{ name: string; steps: GoldenStep[] }>('golden') };

/** The CRDs the corpus writes custom resources of (test/fixtures/managedfields/crds/): their versions' schemas by apiVersion/kind. */
const crdSchemas = new Map<string, Obj>();
for (const f of readdirSync(join(root, 'test', 'fixtures', 'managedfields', 'crds'))) {
  const crd = JSON.parse(readFileSync(join(root, 'test', 'fixtures', 'managedfields', 'crds', f), 'utf8')) as {
    spec: { group: string; names: { kind: string }; versions: { name: string; schema: { openAPIV3Schema: Obj } }[] };
  };
  for (const v of crd.spec.versions) crdSchemas.set(`${crd.spec.group}/${v.name}/${crd.spec.names.kind}`, v.schema.openAPIV3Schema);
}

/** RFC 7386 merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Obj = typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as Obj) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

const stepTime = (i: number): string => `2000-01-01T00:00:${String(i).padStart(2, '0')}Z`;

function metaOf(o: Obj): Obj {
  return (o.metadata ?? {}) as Obj;
}

/** Kube's objects are typed and untyped maps alike: compare without the zero values kube's zero object carries. */
function withoutManagedFields(o: Obj): Obj {
  const copy = structuredClone(o);
  delete metaOf(copy).managedFields;
  return copy;
}

/** kube lists one manager's causes in path order but the managers in map order: compare them sorted by manager. */
function causesInOrder(status: Obj): Obj {
  const details = status.details as { causes?: { message?: string }[] } | undefined;
  if (details?.causes === undefined) return status;
  const causes = [...details.causes].sort((a, b) => ((a.message ?? '') < (b.message ?? '') ? -1 : (a.message ?? '') > (b.message ?? '') ? 1 : 0));
  return { ...status, details: { ...details, causes } };
}

for (const c of corpus.cases) {
  test(`server-side apply as apimachinery does it: ${c.name}`, () => {
    const want = golden.cases.find((g) => g.name === c.name);
    assert.ok(want, `no golden for ${c.name}`);
    let live: Obj | undefined;
    c.steps.forEach((step, i) => {
      const source = step.op === 'patch' ? (live ?? {}) : step.object;
      const apiVersion = String(source.apiVersion);
      const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
      const kind = String(source.kind);
      const crd = crdSchemas.get(`${group ?? ''}/${version ?? ''}/${kind}`);
      const info = { group: group ?? '', version: version ?? '', kind, custom: crd !== undefined };
      // kube diffs a created custom resource against the empty object of its kind.
      const empty = crd !== undefined ? { apiVersion, kind } : emptyObjectFor(info);
      const type = crd !== undefined ? customResourceType(crd) : smdTypeOf(schemaForKind(info.group, info.version, kind));
      // As Capstan's store serves it: the object in the request's version (the CRD-shaped kind's
      // versions convert by relabelling, its `None` strategy).
      if (live !== undefined && crd !== undefined) live = { ...live, apiVersion };
      const reset = step.reset.length === 0 ? undefined : FieldSet.of(...step.reset.map((p) => p.map((n) => fieldElement(n))));
      const expected = want.steps[i];
      assert.ok(expected, `${c.name} step ${i}: no golden`);
      let next: Obj;
      if (step.op === 'apply') {
        try {
          next = applyConfiguration(live ?? empty, step.object, {
            manager: step.manager,
            apiVersion,
            type,
            resetFields: reset,
            now: stepTime(i),
            force: step.force === true,
            empty,
            subresource: step.subresource,
          }).object;
        } catch (err) {
          assert.ok(err instanceof ApplyConflictError, `${c.name} step ${i}: ${String(err)}`);
          assert.ok(expected.error, `${c.name} step ${i}: kube applied without conflict`);
          const { kind: _kind, apiVersion: _apiVersion, ...status } = applyConflictStatus(err.conflicts).toStatus();
          assert.deepEqual(status, causesInOrder(expected.error), `${c.name} step ${i}: conflict`);
          return;
        }
        assert.equal(expected.error, undefined, `${c.name} step ${i}: kube answered ${JSON.stringify(expected.error)}`);
        // A custom resource's apiVersion is the store's business (served objects are converted to the
        // request's version); the field manager's output keeps whichever version it merged in.
        const got = withoutManagedFields(next);
        if (crd !== undefined && expected.object !== undefined) got.apiVersion = expected.object.apiVersion;
        assert.deepEqual(got, expected.object, `${c.name} step ${i}: object`);
      } else {
        next = step.op === 'patch' ? (mergePatch(structuredClone(live), step.patch) as Obj) : structuredClone(step.object);
        delete metaOf(next).managedFields;
        updateManagedFields(live ?? empty, next, {
          manager: step.manager,
          apiVersion,
          subresource: step.subresource,
          type,
          resetFields: reset,
          now: stepTime(i),
          sent: undefined,
        });
      }
      const mf = metaOf(next).managedFields ?? [];
      assert.deepEqual(mf, expected.managedFields ?? [], `${c.name} step ${i}: managedFields`);
      assert.equal(JSON.stringify(mf), JSON.stringify(expected.managedFields ?? []), `${c.name} step ${i}: key order`);
      live = { ...next, metadata: { ...metaOf(next), uid: 'u' } };
    });
  });
}
