import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Response } from 'express';
import { CborWriter, encodeCbor, encodeCborWatchEvent, fieldsOf } from '../../src/codec/cbor/cbor-encoder.js';
import { encodeCborJson, writeCborList } from '../../src/codec/cbor/cbor-response.js';
import { fieldKindsFor } from '../../src/codec/cbor/field-kinds.js';
import { JsonCborWriter } from '../../src/codec/cbor/json-to-cbor.js';
import { readJson } from '../../src/codec/json-text.js';

/**
 * The JSON-text-to-CBOR transcoder (json-to-cbor.ts) writes what the value encoder writes for the
 * parsed value: checked on kube's goldens (from their stored JSON text), on the same objects with
 * their keys shuffled, on generated values covering every rule, and for whole lists.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const OBJECTS_DIR = join(ROOT, 'test', 'golden', 'cbor', 'objects');

type Literals = Map<object, Map<string | number, string>>;

/** JSON text of `v` with the recorded literal text of numbers beyond 2^53, keys in `order`. */
function text(v: unknown, literals: Literals | undefined, order: (keys: string[]) => string[] = (k) => k): string {
  if (Array.isArray(v)) return `[${v.map((e, i) => literals?.get(v)?.get(i) ?? text(e, literals, order)).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    return `{${order(Object.keys(o))
      .map((k) => `${JSON.stringify(k)}:${literals?.get(o)?.get(k) ?? text(o[k], literals, order)}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

interface ObjectGolden {
  name: string;
  watchEventType?: string;
  cbor: string;
  json: Record<string, unknown>;
}

const goldens: { g: ObjectGolden; literals: Literals | undefined }[] = readdirSync(OBJECTS_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .flatMap((f) => {
    const parsed = readJson(readFileSync(join(OBJECTS_DIR, f), 'utf8'), { maxDepth: 100 });
    return (parsed.value as { cases: ObjectGolden[] }).cases.map((g) => ({ g, literals: parsed.numberLiterals }));
  });

/** A deterministic pseudo-random source (xorshift), so a failure reproduces. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

const NUMBERS = [
  '0',
  '-0',
  '1',
  '-1',
  '23',
  '24',
  '255',
  '256',
  '65535',
  '65536',
  '4294967296',
  '-4294967297',
  '999999999999999',
  '9007199254740993',
  '-9007199254740993',
  '9223372036854775807',
  '-9223372036854775808',
  '9223372036854775808',
  '18446744073709551616',
  '1.5',
  '-0.0',
  '1.0',
  '1e3',
  '1E-7',
  '3.4028234663852886e38',
  '65504',
  '0.1',
  '1e300',
  '123456789012345678901234567890',
];
const STRINGS = [
  '',
  'a',
  'kind',
  'x'.repeat(23),
  'y'.repeat(24),
  'z'.repeat(300),
  'é',
  'ünïcödé key',
  'tab\there',
  'quote"and\\',
  '\u2028',
  '😀',
  'A'.repeat(70000),
];

function generate(next: () => number, depth: number): string {
  const pick = <T>(xs: T[]): T => xs[Math.floor(next() * xs.length)];
  const r = next();
  if (depth > 5 || r < 0.3) return pick(NUMBERS);
  if (r < 0.55) return JSON.stringify(pick(STRINGS.slice(0, -1)));
  if (r < 0.6) return pick(['true', 'false', 'null']);
  const n = Math.floor(next() * (next() < 0.1 ? 40 : 6));
  if (r < 0.75) return `[${Array.from({ length: n }, () => generate(next, depth + 1)).join(',')}]`;
  const keys = new Set<string>();
  for (let i = 0; i < n; i++) keys.add(next() < 0.3 ? pick(STRINGS.slice(0, -1)) : `k${Math.floor(next() * 1000)}`);
  return `{${[...keys].map((k) => `${JSON.stringify(k)}:${generate(next, depth + 1)}`).join(',')}}`;
}

function viaValue(json: string, kind?: Parameters<CborWriter['value']>[1]): string {
  const p = readJson(json, { maxDepth: 1000 });
  const table = p.numberLiterals;
  const w = new CborWriter();
  w.value(p.value, kind, table ? (c, k) => table.get(c)?.get(k) : undefined);
  return w.take().toString('hex');
}

function viaText(json: string, kind?: Parameters<CborWriter['value']>[1]): string {
  const w = new JsonCborWriter(16);
  w.json(json, kind);
  return w.take().toString('hex');
}

/** A Response stand-in that collects what writeCborList writes. */
function collector(): { res: Response; body: () => Buffer } {
  const chunks: Buffer[] = [];
  const res = Object.assign(new EventEmitter(), {
    write: (c: Buffer) => chunks.push(c) > 0,
    end: (c?: Buffer) => {
      if (c) chunks.push(c);
    },
  });
  return { res: res as unknown as Response, body: () => Buffer.concat(chunks) };
}

describe('CBOR from stored JSON text', () => {
  test(`${goldens.length} kube goldens, from their JSON text and with shuffled keys`, () => {
    assert.ok(goldens.length >= 50);
    const next = random(7);
    const shuffle = (keys: string[]): string[] => [...keys].sort(() => next() - 0.5);
    for (const { g, literals } of goldens) {
      for (const json of [text(g.json, literals), text(g.json, literals, shuffle)]) {
        const doc = encodeCborJson(json);
        const bytes = g.watchEventType ? encodeCborWatchEvent(g.watchEventType, doc) : doc;
        assert.equal(bytes.toString('hex'), g.cbor, g.name);
      }
    }
  });

  test('2,000 generated values: the same bytes as the value encoder', () => {
    const next = random(42);
    for (let i = 0; i < 2000; i++) {
      // Wrapped: the value encoder takes the literal text of a number from its container.
      const json = `[${generate(next, 0)}]`;
      assert.equal(viaText(json), viaValue(json), json);
    }
    for (const s of STRINGS) assert.equal(viaText(JSON.stringify(s)), viaValue(JSON.stringify(s)));
    const wide = `{${Array.from({ length: 70000 }, (_, i) => `"k${i}":${i}`).join(',')}}`;
    assert.equal(viaText(wide), viaValue(wide));
  });

  test('[]byte and float64 positions of built-in kinds', () => {
    const crd = fieldKindsFor('apiextensions.k8s.io/v1', 'CustomResourceDefinition');
    const json =
      '{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1","spec":{"versions":[{"name":"v1","schema":{"openAPIV3Schema":' +
      '{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":9007199254740993,"multipleOf":0.5}}}}}],' +
      '"conversion":{"webhook":{"clientConfig":{"caBundle":"AAEC/w=="}}}}}';
    assert.equal(viaText(json, crd), viaValue(json, crd));
    const cm = '{"kind":"ConfigMap","apiVersion":"v1","binaryData":{"b":"AAEC/w==","\\u00e9":""},"data":{"a":"AAEC/w=="}}';
    assert.equal(encodeCborJson(cm).toString('hex'), encodeCbor(JSON.parse(cm), fieldKindsFor('v1', 'ConfigMap')).toString('hex'));
  });

  test('lists and metadata-only lists: the bytes of the whole list encoded as one value', async () => {
    const items = goldens.filter(({ g }) => g.json.kind === 'ConfigMap' && !g.watchEventType).map(({ g, literals }) => text(g.json, literals));
    assert.ok(items.length > 0);
    const many = Array.from({ length: 300 }, (_, i) => items[i % items.length]);
    const envelope = { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '7' } };
    const parsed = many.map((i) => JSON.parse(i) as Record<string, unknown>);
    const full = collector();
    await writeCborList(full.res, envelope, many, false, () => Promise.resolve(true));
    assert.equal(full.body().toString('hex'), encodeCbor({ ...envelope, items: parsed }, fieldsOf(envelope)).toString('hex'));
    const meta = collector();
    await writeCborList(meta.res, envelope, many, true, () => Promise.resolve(true));
    const partial = parsed.map((p) => ({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: p.metadata ?? {} }));
    const expected = { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: envelope.metadata, items: partial };
    assert.equal(meta.body().toString('hex'), encodeCbor(expected).toString('hex'));
  });
});
