import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CborEncodeError, CborWriter, encodeCbor, encodeCborWatchEvent, fieldsOf } from '../../src/codec/cbor/cbor-encoder.js';
import { CborDecodeError, decodeCbor, decodeCborDocument, decodeCborSequenceItem } from '../../src/codec/cbor/cbor-decoder.js';
import { fieldKindsFor } from '../../src/codec/cbor/field-kinds.js';
import { readJson } from '../../src/codec/json-text.js';
import { decodeInto, TypedDecodeError } from '../../src/codec/typed-decode.js';
import { schemaForKind } from '../../src/schema/openapi-schema.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const GOLDEN = join(ROOT, 'test', 'golden', 'cbor');

/**
 * Goldens written by apimachinery v0.36.4's CBOR serializer (tools/goldens `go run . cbor`, from
 * test/fixtures/cbor): `objects/` the bytes kube writes for each object (or watch event) and the JSON of
 * the same object, `inputs/` what kube's decoder makes of hand-built inputs, `values.json` single values.
 */
interface ObjectGolden {
  name: string;
  watchEventType?: string;
  unstructured?: boolean;
  cbor: string;
  json: unknown;
}
interface InputGolden {
  name: string;
  hex: string;
  error: string;
  strictError?: string;
  json?: string;
}
interface ValueGolden {
  name: string;
  cbor?: string;
  error?: string;
}

/** Literal text of numbers JavaScript cannot hold exactly, from every golden file read. */
const literals = new Map<object, Map<string | number, string>>();

function cases<T>(dir: string): T[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .flatMap((f) => {
      const parsed = readJson(readFileSync(join(dir, f), 'utf8'), { maxDepth: 100 });
      for (const [k, v] of parsed.numberLiterals ?? []) literals.set(k, v);
      return (parsed.value as { cases: T[] }).cases;
    });
}

const OBJECTS = cases<ObjectGolden>(join(GOLDEN, 'objects'));
const INPUTS = (JSON.parse(readFileSync(join(GOLDEN, 'inputs', 'inputs.json'), 'utf8')) as { cases: InputGolden[] }).cases;
const VALUES = (JSON.parse(readFileSync(join(GOLDEN, 'values.json'), 'utf8')) as { cases: ValueGolden[] }).cases;

/** The golden's JSON as the server holds it: parsed with the literal text of integers beyond 2^53. */
function stored(g: ObjectGolden): { value: Record<string, unknown>; literal: ((c: object, k: string | number) => string | undefined) | undefined } {
  return { value: g.json as Record<string, unknown>, literal: (c, k) => literals.get(c)?.get(k) };
}

function encodeGolden(g: ObjectGolden): Buffer {
  const { value, literal } = stored(g);
  const doc = encodeCbor(value, fieldsOf(value), literal);
  return g.watchEventType ? encodeCborWatchEvent(g.watchEventType, doc) : doc;
}

describe('CBOR encoder: byte for byte with kube', () => {
  test(`${OBJECTS.length} object and watch-event goldens`, () => {
    assert.ok(OBJECTS.length >= 50);
    for (const g of OBJECTS) assert.equal(encodeGolden(g).toString('hex'), g.cbor, g.name);
  });

  test(`${VALUES.length} single values (integers, floats, strings, key order, refusals)`, () => {
    for (const v of VALUES) {
      const w = new CborWriter();
      if (v.error) {
        // The values were written from Go floats: NaN and infinities, which JSON cannot carry.
        const n = v.name.endsWith('NaN') ? NaN : v.name.includes('minus-Inf') ? -Infinity : Infinity;
        assert.throws(
          () => w.value({ v: n }),
          (e: unknown) => e instanceof CborEncodeError && e.message === v.error,
          v.name,
        );
        continue;
      }
      const hex = v.cbor as string;
      // Decode Go's value and encode it again: what kube decodes, Capstan writes back identically
      // (floats are floats: Go wrote these from float64 values).
      const value = decodeCbor(Buffer.from(hex, 'hex'), { maxDepth: 1000 }) as { v: unknown };
      if (v.name.startsWith('float-')) {
        w.head(5, 1);
        w.string('v');
        w.float(value.v as number);
      } else if (v.name === 'int64-max' || v.name === 'int64-min') {
        w.head(5, 1);
        w.string('v');
        w.number(0, v.name === 'int64-max' ? '9223372036854775807' : '-9223372036854775808');
      } else w.value(value);
      assert.equal(w.take().toString('hex'), hex, v.name);
    }
  });

  test('[]byte and float64 fields come from the schema', () => {
    assert.equal(fieldKindsFor('v1', 'ConfigMap')?.fields.get('binaryData') !== undefined, true);
    assert.equal(fieldKindsFor('v1', 'Pod'), undefined);
    const crd = fieldKindsFor('apiextensions.k8s.io/v1', 'CustomResourceDefinition');
    assert.ok(crd);
  });
});

describe('CBOR decoder: accepts and refuses as kube', () => {
  test(`${OBJECTS.length} goldens decode to kube's JSON`, () => {
    for (const g of OBJECTS) {
      let bytes = Buffer.from(g.cbor, 'hex');
      if (g.watchEventType) {
        const item = decodeCborSequenceItem(bytes, 0, { maxDepth: 1000 });
        assert.ok(item, g.name);
        const event = item.value as { type: string; object: unknown };
        assert.equal(event.type, g.watchEventType);
        assert.equal(item.next, bytes.length);
        bytes = Buffer.from(encodeCbor(event.object).subarray(0, 0));
        assert.deepEqual(normal(event.object, g), g.json, g.name);
        continue;
      }
      const fields = g.unstructured ? undefined : fieldsOf(g.json as Record<string, unknown>);
      const value = decodeCbor(bytes, { maxDepth: 1000, fields });
      assert.deepEqual(normal(value, g), g.json, g.name);
    }
  });

  const goType = (c: InputGolden & { apiVersion?: string; kind?: string }): string | undefined =>
    c.kind ? `${(c.apiVersion ?? '').split('/').pop()}.${c.kind}` : undefined;
  const FIXTURE = new Map(
    (
      JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'cbor', 'inputs', 'inputs.json'), 'utf8')) as {
        cases: Array<InputGolden & { apiVersion?: string; kind?: string; unstructured?: boolean }>;
      }
    ).cases.map((c) => [c.name, c]),
  );

  /** Nesting Capstan refuses on purpose: its decoders' limit (1,000) is below kube's (10,000). */
  const DEEPER_THAN_OUR_LIMIT = new Set(['valid-nesting-1100']);

  test('hostile nesting of tags, arrays and maps stops at the limit without exhausting the stack', () => {
    for (const unit of ['d9d9f7', 'c6', '81', 'a14161', '9f']) {
      const body = Buffer.from(`a14161${unit.repeat(200_000)}00`, 'hex');
      assert.throws(
        () => decodeCbor(body, { maxDepth: 1000 }),
        (e: unknown) => e instanceof CborDecodeError && e.message === 'cbor: exceeded max nested level 1000',
        unit,
      );
    }
  });

  test('the limit counts containers as the JSON reader does: 1,000 levels pass, 1,001 do not', () => {
    const nested = (n: number): Buffer => Buffer.from(`d9d9f7${'81'.repeat(n)}00`, 'hex');
    assert.doesNotThrow(() => decodeCbor(nested(1000), { maxDepth: 1000 }));
    assert.throws(() => decodeCbor(nested(1001), { maxDepth: 1000 }), CborDecodeError);
  });

  test(`${INPUTS.length} valid, malformed and hostile inputs`, () => {
    let typedLater = 0;
    for (const g of INPUTS) {
      const input = FIXTURE.get(g.name);
      assert.ok(input, g.name);
      const typed = !input.unstructured && input.kind !== undefined;
      const fields = typed ? fieldKindsFor(input.apiVersion as string, input.kind as string) : undefined;
      const data = Buffer.from(g.hex, 'hex');
      let value: unknown;
      let error: string | undefined;
      let literals: Map<object, Map<string | number, string>> | undefined;
      try {
        ({ value, numberLiterals: literals } = decodeCborDocument(data, { maxDepth: 1000, fields, goType: typed ? goType(input) : undefined }));
      } catch (err) {
        if (!(err instanceof CborDecodeError)) throw err;
        error = err.typeMeta ? `unable to determine group/version/kind: ${err.message}` : err.message;
      }
      if (DEEPER_THAN_OUR_LIMIT.has(g.name)) {
        assert.equal(error, 'unable to determine group/version/kind: cbor: exceeded max nested level 1000', g.name);
        continue;
      }
      if (g.error === '') {
        assert.equal(error, undefined, `${g.name} must be accepted`);
        if (value !== null && g.json !== undefined && !g.name.includes('nesting')) {
          const expected = JSON.parse(g.json) as Record<string, unknown>;
          const got = value as Record<string, unknown>;
          const schema = typed ? schemaForKind(...gvk(input)) : undefined;
          if (schema) decodeInto(got, schema);
          for (const k of ['kind', 'apiVersion']) if (expected[k] === undefined) delete got[k];
          assert.deepEqual(pruneEmpty(got), pruneEmpty(expected), g.name);
        }
        continue;
      }
      if (error !== undefined) {
        assert.equal(
          error,
          g.error.replace(
            /^unable to determine group\/version\/kind: (cbor: exceeded max nested level) 10000$/,
            'unable to determine group/version/kind: $1 1000',
          ),
          g.name,
        );
        continue;
      }
      // Accepted here, refused by kube: a type mismatch that Capstan's typed decoding refuses next
      // (with its JSON wording), or a document that is not an object.
      if (typed && value !== null && typeof value === 'object' && !Array.isArray(value)) {
        const literal = literals ? (c: object, k: string | number) => literals?.get(c)?.get(k) : undefined;
        assert.throws(() => decodeInto(value as Record<string, unknown>, schemaForKind(...gvk(input)) as never, literal), TypedDecodeError, g.name);
        typedLater++;
        continue;
      }
      // Or a document the body reader refuses after decoding: not an object, no kind or no apiVersion.
      const obj = value as Record<string, unknown> | null;
      assert.ok(obj === null || Array.isArray(obj) || typeof obj !== 'object' || !obj.kind || !obj.apiVersion, g.name);
    }
    assert.ok(typedLater <= 6, `typed refusals left to typed decoding: ${typedLater}`);
  });
});

function gvk(c: { apiVersion?: string; kind?: string }): [string, string, string] {
  const av = c.apiVersion ?? '';
  const slash = av.indexOf('/');
  return [slash < 0 ? '' : av.slice(0, slash), slash < 0 ? av : av.slice(slash + 1), c.kind ?? ''];
}

/** Go's JSON of a typed object writes nulls and empty structs the decoded CBOR does not hold either way. */
function pruneEmpty(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(pruneEmpty);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, e] of Object.entries(v)) {
      if (e === null) continue;
      const p = pruneEmpty(e);
      if (p && typeof p === 'object' && !Array.isArray(p) && Object.keys(p).length === 0) continue;
      out[k] = p;
    }
    return out;
  }
  return v;
}

/** Decoded golden values compared with Go's JSON: integers beyond 2^53 lose precision in both. */
function normal(value: unknown, g: ObjectGolden): unknown {
  void g;
  return JSON.parse(JSON.stringify(value)) as unknown;
}
