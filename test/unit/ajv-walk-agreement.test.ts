/**
 * The ajv validators of the built-in kinds (src/codec/kind-validators.ts) and the typed-decode walk
 * must agree: a validator accepts a value exactly when the walk finds no type error and no unknown
 * field in it, and then leaves the value as the walk would (Quantities in canonical form). And
 * decodeInto, which takes the validator as its fast path, must answer every body as the walk alone
 * does: the same Go error text, the same unknown fields, the same decoded object.
 *
 * The validators the build writes out (dist/src/validators) are the ones the tests load; each body is
 * also given to a validator compiled in the process from the same schemas, which must answer alike.
 *
 * Bodies: every object of test/fixtures/validation and test/fixtures/defaulting, the hostile-input
 * corpus of test/e2e/hostile-bodies.ts, and variants of the fixtures with one value replaced by a
 * wrong-typed, out-of-range or malformed one, or an object given an unknown field.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readJson } from '../../src/codec/json-text.js';
import { decodeInto, TypedDecodeError, walkInto, type NumberLiteralLookup } from '../../src/codec/typed-decode.js';
import {
  addReachableSchemas,
  builtValidatorsDir,
  isBuiltValidator,
  kindValidator,
  validatorAjv,
  VALIDATOR_MANIFEST,
  type ValidatorManifest,
} from '../../src/codec/kind-validators.js';
import { sourceDigest } from '../../src/codec/kind-validator-modules.js';
import { schemaId, type SchemaWording } from '../../src/schema/ajv-schemas.js';
import { definitionNames, schemaForDefinition, schemaForKind, type SchemaNode } from '../../src/schema/openapi-schema.js';
import { hostileBodies, NAME_PLACEHOLDER } from '../e2e/hostile-bodies.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const FIXTURE_DIRS = [join(ROOT, 'test', 'fixtures', 'validation'), join(ROOT, 'test', 'fixtures', 'defaulting')];

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One body to decode: its JSON text and where it came from. */
interface Body {
  origin: string;
  text: string;
}

function schemaOf(value: unknown): SchemaNode | undefined {
  if (!isObj(value) || typeof value.apiVersion !== 'string' || typeof value.kind !== 'string') return undefined;
  const slash = value.apiVersion.lastIndexOf('/');
  const group = slash < 0 ? '' : value.apiVersion.slice(0, slash);
  return schemaForKind(group, value.apiVersion.slice(slash + 1), value.kind);
}

/** Every object of the fixture corpora (new and old objects of each case). */
function fixtureObjects(): Array<{ origin: string; object: Obj }> {
  const out: Array<{ origin: string; object: Obj }> = [];
  for (const dir of FIXTURE_DIRS) {
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
      const doc: unknown = JSON.parse(readFileSync(join(dir, file), 'utf8'));
      const cases = isObj(doc) && Array.isArray(doc.cases) ? doc.cases : [];
      for (const c of cases) {
        if (!isObj(c)) continue;
        for (const key of ['object', 'old']) {
          const object = c[key];
          if (isObj(object)) out.push({ origin: `${file} ${String(c.name)} (${key})`, object });
        }
      }
    }
  }
  return out;
}

/** Replacement values as JSON text (some are literals JSON.stringify cannot write). */
const REPLACEMENTS = [
  'null',
  '"x"',
  '5',
  '-0',
  'true',
  '{}',
  '[]',
  '1.5',
  '1.0',
  '1e400',
  '2147483648',
  '-2147483649',
  '9007199254740993',
  '9223372036854775808',
  '"100m"',
  '"1.5.5Gi"',
  '"1e"',
  '" 1Gi "',
  '"2024-02-29T10:00:00Z"',
  '"2023-02-29T10:00:00Z"',
  '"2024-01-01T10:00:00.123456+02:00"',
  '"not base64!"',
  '"YQ=="',
  '"YQ"',
  '{"zzUnknown":1}',
  '[null]',
  '["x"]',
  '[5]',
  '{"a":"b"}',
  '{"a":5}',
];

const MARK = '"@@MUTATION@@"';

/** Every position of `value` (object fields and array items), as paths from the root. */
function positions(value: unknown, path: Array<string | number>, out: Array<Array<string | number>>): void {
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      out.push([...path, i]);
      positions(v, [...path, i], out);
    });
  } else if (isObj(value)) {
    for (const [k, v] of Object.entries(value)) {
      out.push([...path, k]);
      positions(v, [...path, k], out);
    }
  }
}

function withMark(object: Obj, path: Array<string | number>): unknown {
  const copy: unknown = structuredClone(object);
  let at: unknown = copy;
  for (const seg of path.slice(0, -1)) at = (at as Record<string | number, unknown>)[seg];
  (at as Record<string | number, unknown>)[path[path.length - 1]] = '@@MUTATION@@';
  return copy;
}

/** One-change variants of the fixtures, one per schema position (indices folded) and replacement. */
function mutatedBodies(objects: Array<{ origin: string; object: Obj }>): Body[] {
  const seen = new Set<string>();
  const out: Body[] = [];
  for (const { origin, object } of objects) {
    const found: Array<Array<string | number>> = [];
    positions(object, [], found);
    for (const path of found) {
      if (path[0] === 'apiVersion' || path[0] === 'kind') continue;
      const pattern = `${String(object.apiVersion)}/${String(object.kind)}:${path.map((s) => (typeof s === 'number' ? '[]' : s)).join('.')}`;
      if (seen.has(pattern)) continue;
      seen.add(pattern);
      const text = JSON.stringify(withMark(object, path));
      for (const r of REPLACEMENTS) out.push({ origin: `${origin} ${path.join('.')} = ${r}`, text: text.replace(MARK, r) });
    }
    // An unknown field in every object of the body.
    const objectsAt: Array<Array<string | number>> = [[]];
    for (const path of found) {
      let at: unknown = object;
      for (const seg of path) at = (at as Record<string | number, unknown>)[seg];
      if (isObj(at)) objectsAt.push(path);
    }
    for (const path of objectsAt) {
      const pattern = `${String(object.apiVersion)}/${String(object.kind)}:${path.map((s) => (typeof s === 'number' ? '[]' : s)).join('.')}+unknown`;
      if (seen.has(pattern)) continue;
      seen.add(pattern);
      const copy = structuredClone(object);
      let at: unknown = copy;
      for (const seg of path) at = (at as Record<string | number, unknown>)[seg];
      (at as Obj).zzUnknown = 'x';
      out.push({ origin: `${origin} ${path.join('.')}.zzUnknown`, text: JSON.stringify(copy) });
    }
  }
  return out;
}

function corpus(): Body[] {
  const objects = fixtureObjects();
  const bodies: Body[] = objects.map(({ origin, object }) => ({ origin, text: JSON.stringify(object) }));
  for (const h of hostileBodies()) bodies.push({ origin: `hostile ${h.kind} ${h.label}`, text: h.body.split(NAME_PLACEHOLDER).join('h') });
  bodies.push(...mutatedBodies(objects));
  return bodies;
}

interface Parsed {
  value: Obj;
  literal: NumberLiteralLookup | undefined;
}

/**
 * Independent copies of a body (decoding works in place), each with its own literal table: three, or
 * four when the body has number literals (the walk then runs once without and once with them).
 */
function parseCopies(text: string): Parsed[] | undefined {
  const first = readJson(text, { maxDepth: 1000 });
  if (!isObj(first.value)) return undefined;
  const copies: Parsed[] = [];
  const count = first.numberLiterals === undefined ? 3 : 4;
  for (let n = 0; n < count; n++) {
    // Without recorded literals the platform parser reads the same value, faster.
    const parsed =
      n === 0
        ? first
        : first.numberLiterals === undefined
          ? { value: JSON.parse(text) as unknown, numberLiterals: undefined }
          : readJson(text, { maxDepth: 1000 });
    const table = parsed.numberLiterals;
    if (!isObj(parsed.value)) return undefined;
    copies.push({ value: parsed.value, literal: table === undefined ? undefined : (c, k) => table.get(c)?.get(k) });
  }
  return copies;
}

type Outcome = { error: string } | { unknownFields: string[]; object: Obj };

function outcome(run: (obj: Obj) => { unknownFields: string[] }, obj: Obj): Outcome {
  try {
    return { unknownFields: run(obj).unknownFields, object: obj };
  } catch (err) {
    if (err instanceof TypedDecodeError) return { error: err.message };
    throw err;
  }
}

const BODIES = corpus();

/** Validators compiled here, as kindValidator compiles a definition no built module has. */
const compiling = validatorAjv();
const compiledIds = new Set<string>();
function compiledValidator(definition: string, wording: SchemaWording): (value: unknown) => boolean {
  assert.ok(addReachableSchemas(compiling, definition, wording, compiledIds), definition);
  const validate = compiling.getSchema(schemaId(definition, wording));
  assert.ok(validate, definition);
  return (value) => validate(value) as boolean;
}

for (const wording of ['json', 'unstructured'] as const) {
  test(`ajv and the walk (${wording}) agree on every body, and decodeInto answers as the walk alone`, () => {
    let checked = 0;
    let accepted = 0;
    let built = 0;
    const disagreements: string[] = [];
    for (const body of BODIES) {
      const copies = parseCopies(body.text);
      if (copies === undefined) continue;
      const [a, b, c] = copies;
      const schema = schemaOf(a.value);
      assert.ok(schema?.definition, `no schema for ${body.origin}`);
      const validate = kindValidator(schema.definition, wording);
      assert.ok(validate);
      if (isBuiltValidator(schema.definition, wording)) built++;
      // The validator against the walk reading numbers as JavaScript holds them, as the fast path runs.
      const ajvAccepts = validate(a.value);
      const compiledCopy = JSON.parse(body.text) as unknown;
      const compiledAccepts = compiledValidator(schema.definition, wording)(compiledCopy);
      if (compiledAccepts !== ajvAccepts) disagreements.push(`${body.origin}: compiled validator ${compiledAccepts ? 'accepts' : 'refuses'}`);
      else if (ajvAccepts && JSON.stringify(compiledCopy) !== JSON.stringify(a.value))
        disagreements.push(`${body.origin}: compiled validator left another object`);
      const walked = outcome((o) => walkInto(o, schema, undefined, wording), b.value);
      const walkClean = 'unknownFields' in walked && walked.unknownFields.length === 0;
      checked++;
      if (ajvAccepts) accepted++;
      if (ajvAccepts !== walkClean)
        disagreements.push(`${body.origin}: ajv ${ajvAccepts ? 'accepts' : 'refuses'}, walk ${JSON.stringify(walked).slice(0, 200)}`);
      else if (ajvAccepts && JSON.stringify(a.value) !== JSON.stringify(b.value)) disagreements.push(`${body.origin}: decoded objects differ`);
      // decodeInto (fast path when no literal was recorded) against the walk alone, with the literals.
      const fast = JSON.stringify(outcome((o) => decodeInto(o, schema, c.literal, wording), c.value));
      const d = copies[3];
      const reference = JSON.stringify(d === undefined ? walked : outcome((o) => walkInto(o, schema, d.literal, wording), d.value));
      if (fast !== reference) disagreements.push(`${body.origin}: decodeInto ${fast.slice(0, 200)}, walk ${reference.slice(0, 200)}`);
    }
    assert.deepEqual(disagreements.slice(0, 20), [], `${disagreements.length} disagreements`);
    assert.ok(checked > 50000, `only ${checked} bodies`);
    assert.ok(accepted > 10000 && accepted < checked, `${accepted} of ${checked} accepted`);
    assert.equal(built, checked, 'every body was checked by a built validator (npm run build writes them)');
  });
}

test('the built validator modules are those of the schemas in the tree, one per kind, workloads sharing one', () => {
  const dir = builtValidatorsDir();
  assert.ok(dir, 'no dist/src/validators: npm run build writes them');
  const manifest = JSON.parse(readFileSync(join(dir, VALIDATOR_MANIFEST), 'utf8')) as ValidatorManifest;
  const stale: string[] = [];
  const holders = new Map<string, string>();
  for (const [file, entry] of Object.entries(manifest.modules)) {
    if (sourceDigest(entry.definitions, entry.wording) !== entry.digest) stale.push(file);
    for (const definition of entry.definitions) holders.set(`${entry.wording}:${definition}`, file);
  }
  assert.deepEqual(stale, [], 'modules built from other schemas than the tree has: run npm run build');
  for (const name of definitionNames()) {
    const kinds = schemaForDefinition(name)?.groupVersionKinds() ?? [];
    if (kinds.length === 0 || kinds.every((gvk) => gvk.kind.endsWith('List'))) continue;
    for (const wording of ['json', 'unstructured'] as const) {
      assert.ok(holders.has(`${wording}:${name}`), `${wording} ${name} has no built module`);
      assert.equal(isBuiltValidator(name, wording), true, `${wording} ${name}`);
    }
  }
  assert.equal(holders.get('json:io.k8s.api.core.v1.Pod'), 'json.workloads.cjs');
  assert.equal(holders.get('json:io.k8s.api.batch.v1.CronJob'), 'json.workloads.cjs');
  assert.equal(holders.get('unstructured:io.k8s.api.core.v1.Namespace'), 'unstructured.io.k8s.api.core.v1.Namespace.cjs');
  // A list has no built validator; it compiles on first use.
  assert.equal(isBuiltValidator('io.k8s.api.core.v1.PodList', 'json'), false);
  assert.equal(kindValidator('io.k8s.api.core.v1.PodList', 'json')?.({ items: [{ spec: { containers: [] } }] }), true);
  assert.equal(kindValidator('io.k8s.api.core.v1.PodList', 'json')?.({ items: [{ spec: { containers: 1 } }] }), false);
});

test('a kind validator is compiled once and shared; unknown definitions have none', () => {
  const first = kindValidator('io.k8s.api.apps.v1.Deployment', 'json');
  assert.ok(first);
  assert.equal(kindValidator('io.k8s.api.apps.v1.Deployment', 'json'), first);
  assert.notEqual(kindValidator('io.k8s.api.apps.v1.Deployment', 'unstructured'), first);
  assert.equal(kindValidator('io.k8s.api.apps.v1.NoSuchKind', 'json'), undefined);
});

test('every built-in kind of the OpenAPI document compiles to a validator that accepts an empty object', () => {
  let kinds = 0;
  for (const name of definitionNames()) {
    if (schemaForDefinition(name)?.groupVersionKinds().length === 0) continue;
    const validate = kindValidator(name, 'json');
    assert.ok(validate, name);
    assert.equal(validate({}), true, name);
    kinds++;
  }
  assert.ok(kinds > 100, `only ${kinds} kinds`);
});
