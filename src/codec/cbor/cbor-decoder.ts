import { FORBIDDEN_KEYS, ForbiddenKeyError } from '../json-text.js';
import type { FieldKind, FieldTree } from './field-kinds.js';

/**
 * Reads CBOR into a JSON value, accepting and refusing what kube-apiserver 1.36's CBOR decoder
 * (apimachinery's cbor package over fxamacker/cbor) accepts and refuses, with its messages:
 * - malformed input, trailing bytes, lengths beyond the input, more than 2,097,152 map pairs, NaN and
 *   infinities, bignum tags (2, 3) and indefinite-length strings with chunks of the wrong type are
 *   refused before anything is decoded (kube reports these while reading the type metadata, hence
 *   `typeMeta: true`);
 * - duplicate map keys (a text and a byte string with the same content are the same key), invalid
 *   UTF-8 in text strings, map keys that are not strings, integers beyond int64, and simple values
 *   other than false/true/null are refused as kube's decode step refuses them;
 * - byte strings are strings (their UTF-8, invalid sequences replaced as Go's JSON encoder replaces
 *   them); under tag 22/21/23 they become base64/base64url/hex text, as kube converts them; tag 0
 *   must hold an RFC 3339 time, tag 1 an epoch time (turned into RFC 3339); other tags, the
 *   self-described tag included, stand for their content; indefinite lengths are accepted;
 * - at a `[]byte` field of a built-in kind (field-kinds.ts) a tag-22 byte string is the bytes
 *   themselves and an untagged one must hold base64 text; a text string is refused.
 * One difference on purpose: nesting is limited to `maxDepth` (the limit of the JSON and YAML body
 * decoders), where kube allows 10,000 levels.
 *
 * cbor-x is not used here: it accepts duplicate keys, invalid UTF-8, undefined and arbitrary simple
 * values, and maps bignums to BigInt, all of which kube refuses; one small reader with kube's rules is
 * simpler than checking cbor-x's output afterwards.
 */

/** A refusal, worded as kube's decoder words it. */
export class CborDecodeError extends Error {
  constructor(
    message: string,
    /** True for errors kube reports while reading the type metadata (malformed input, limits, refused
     *  values anywhere, a repeated kind or apiVersion): its message is prefixed "unable to determine
     *  group/version/kind: ". */
    readonly typeMeta: boolean,
  ) {
    super(message);
    this.name = 'CborDecodeError';
  }
}

export interface CborDecodeOptions {
  /** Nesting of maps and arrays allowed (see limits.ts). */
  maxDepth: number;
  /** The built-in kind's []byte positions. */
  fields?: FieldTree;
  /** The Go type named in type errors, e.g. `v1.ConfigMap`. */
  goType?: string;
  /** Record each map key's element index (for kube's "unknown field at map element index N"). */
  indexKeys?: boolean;
}

/**
 * What the literal table holds for a string the client sent as a CBOR text string (major type 3),
 * so that type errors name it as kube does (`UTF-8 text string`, not `byte string`).
 */
export const CBOR_TEXT_STRING = 'UTF-8 text string';

const MAX_MAP_PAIRS = 2_097_152;
const MAX_ARRAY_ELEMENTS = 2_147_483_647;
const TYPE_NAMES = ['positive integer', 'negative integer', 'byte string', 'UTF-8 text string', 'array', 'map', 'tag', 'primitives'];
const utf8Strict = new TextDecoder('utf-8', { fatal: true });
const utf8Lax = new TextDecoder('utf-8');
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function malformed(message: string): CborDecodeError {
  return new CborDecodeError(message, true);
}

class Reader {
  pos = 0;
  /** The first decode-step refusal, thrown once the whole input is known to be well formed. */
  firstError: CborDecodeError | undefined;
  /**
   * Literal text of numbers JavaScript cannot tell apart: whole floats (`1.0`) and integers beyond
   * 2^53; CBOR_TEXT_STRING for strings sent as text strings.
   */
  literals: Map<object, Map<string | number, string>> | undefined;
  /** Maps being read (1 inside the document's top-level map). */
  maps = 0;
  /** Element index of each key of each decoded map, when `indexKeys`. */
  keyIndexes: WeakMap<object, Map<string, number>> | undefined;
  /** Set by item() when the number it returned needs a literal (see `literals`). */
  private literal: string | undefined;

  /** Records the literal of the value just read into container[key], if it needs one. */
  private note(container: object, key: string | number): void {
    if (this.literal === undefined) return;
    this.literals ??= new Map();
    let inContainer = this.literals.get(container);
    if (!inContainer) this.literals.set(container, (inContainer = new Map<string | number, string>()));
    inContainer.set(key, this.literal);
    this.literal = undefined;
  }

  constructor(
    readonly buf: Buffer,
    readonly options: CborDecodeOptions,
  ) {}

  fail(message: string, typeMeta = false): void {
    this.firstError ??= new CborDecodeError(message, typeMeta);
  }

  need(n: number): void {
    if (this.pos + n > this.buf.length) throw malformed('unexpected EOF');
  }

  /** Reads a head's argument; -1 for indefinite length. */
  arg(ai: number, major: number): number | bigint {
    if (ai < 24) return ai;
    if (ai === 24) {
      this.need(1);
      return this.buf[this.pos++];
    }
    if (ai === 25) {
      this.need(2);
      const v = this.buf.readUInt16BE(this.pos);
      this.pos += 2;
      return v;
    }
    if (ai === 26) {
      this.need(4);
      const v = this.buf.readUInt32BE(this.pos);
      this.pos += 4;
      return v;
    }
    if (ai === 27) {
      this.need(8);
      const v = this.buf.readBigUInt64BE(this.pos);
      this.pos += 8;
      return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
    }
    if (ai === 31 && major >= 2 && major <= 5) return -1;
    throw malformed(`cbor: invalid additional information ${ai} for type ${TYPE_NAMES[major] ?? 'primitives'}`);
  }

  /** A length, within kube's limits on map pairs and array elements; -1 for indefinite. */
  length(ai: number, major: number): number {
    const n = this.arg(ai, major);
    if (major === 5 && n > MAX_MAP_PAIRS) throw malformed(`cbor: exceeded max number of key-value pairs ${MAX_MAP_PAIRS} for CBOR map`);
    if (major === 4 && n > MAX_ARRAY_ELEMENTS) throw malformed(`cbor: exceeded max number of elements ${MAX_ARRAY_ELEMENTS} for CBOR array`);
    if (typeof n === 'bigint') throw malformed('unexpected EOF');
    return n;
  }

  /** A definite or indefinite byte/text string. */
  str(major: 2 | 3, ai: number): Buffer {
    const n = this.length(ai, major);
    if (n >= 0) {
      this.need(n);
      const b = this.buf.subarray(this.pos, this.pos + n);
      this.pos += n;
      return b;
    }
    const parts: Buffer[] = [];
    for (;;) {
      this.need(1);
      const ib = this.buf[this.pos++];
      if (ib === 0xff) break;
      if (ib >> 5 !== major || (ib & 31) === 31) {
        const what = major === 2 ? 'byte string' : 'UTF-8 text string';
        throw malformed(`cbor: wrong element type ${TYPE_NAMES[ib >> 5]} for indefinite-length ${what}`);
      }
      parts.push(this.str(major, ib & 31));
    }
    return Buffer.concat(parts);
  }

  text(bytes: Buffer): string {
    try {
      return utf8Strict.decode(bytes);
    } catch {
      this.fail('cbor: invalid UTF-8 string');
      return utf8Lax.decode(bytes);
    }
  }

  item(depth: number, kind: FieldKind | undefined, field: string | undefined): unknown {
    this.literal = undefined;
    this.need(1);
    const ib = this.buf[this.pos++];
    const major = ib >> 5;
    const ai = ib & 31;
    switch (major) {
      case 0:
      case 1: {
        const n = this.arg(ai, major);
        if (typeof n === 'bigint' || n > Number.MAX_SAFE_INTEGER) {
          const big = BigInt(n);
          const value = major === 0 ? big : -1n - big;
          if (big > 2n ** 63n - 1n) {
            const what = major === 0 ? 'positive' : 'negative';
            this.fail(`cbor: cannot unmarshal ${what} integer into Go value of type int64 (${value} overflows Go's int64)`);
          }
          this.literal = String(value);
          return Number(value);
        }
        return major === 0 ? n : -1 - n;
      }
      case 2: {
        const bytes = this.str(2, ai);
        if (kind === 'bytes') return this.base64Field(bytes, field);
        return utf8Lax.decode(bytes);
      }
      case 3: {
        const s = this.text(this.str(3, ai));
        if (kind === 'bytes') this.typeError('UTF-8 text string', field, '[]uint8');
        this.literal = CBOR_TEXT_STRING;
        return s;
      }
      case 4:
        return this.array(ai, depth, kind, field);
      case 5:
        return this.map(ai, depth, kind, field);
      case 6:
        return this.tagged(ai, depth, kind, field);
      default:
        return this.simple(ai);
    }
  }

  typeError(what: string, field: string | undefined, goType: string): void {
    const into = this.options.goType && field ? `Go struct field ${this.options.goType}.${field}` : 'Go value';
    this.fail(`cbor: cannot unmarshal ${what} into ${into} of type ${goType}`);
  }

  /** An untagged byte string at a []byte field: kube reads its content as base64 text. */
  base64Field(bytes: Buffer, field: string | undefined): string {
    const text = bytes.toString('latin1');
    const bad = /[^A-Za-z0-9+/=]/.exec(text);
    if (bad || text.length % 4 !== 0) {
      this.fail(`cbor: failed to decode base64 from byte string: illegal base64 data at input byte ${bad ? bad.index : text.length}`);
      void field;
      return '';
    }
    return Buffer.from(text, 'base64').toString('base64');
  }

  array(ai: number, depth: number, kind: FieldKind | undefined, field: string | undefined): unknown[] {
    if (depth + 1 > this.options.maxDepth) throw malformed(`cbor: exceeded max nested level ${this.options.maxDepth}`);
    const n = this.length(ai, 4);
    const each = typeof kind === 'object' ? kind.each : undefined;
    const out: unknown[] = [];
    if (n >= 0) {
      for (let i = 0; i < n; i++) {
        out.push(this.item(depth + 1, each, field));
        this.note(out, i);
      }
      return out;
    }
    for (;;) {
      this.need(1);
      if (this.buf[this.pos] === 0xff) {
        this.pos++;
        return out;
      }
      out.push(this.item(depth + 1, each, field));
      this.note(out, out.length - 1);
    }
  }

  key(field: string | undefined): string | undefined {
    this.need(1);
    const ib = this.buf[this.pos];
    const major = ib >> 5;
    if (major === 2 || major === 3) {
      this.pos++;
      const bytes = this.str(major, ib & 31);
      return major === 3 ? this.text(bytes) : utf8Lax.decode(bytes);
    }
    this.item(Number.MAX_SAFE_INTEGER - 1, undefined, undefined);
    this.typeError(TYPE_NAMES[major], field, 'string');
    return undefined;
  }

  map(ai: number, depth: number, kind: FieldKind | undefined, field: string | undefined): Record<string, unknown> {
    if (depth + 1 > this.options.maxDepth) throw malformed(`cbor: exceeded max nested level ${this.options.maxDepth}`);
    const n = this.length(ai, 5);
    const tree = typeof kind === 'object' ? kind : undefined;
    const out: Record<string, unknown> = {};
    const seen = new Set<string>();
    this.maps++;
    let indexes: Map<string, number> | undefined;
    if (this.options.indexKeys === true) {
      this.keyIndexes ??= new WeakMap();
      indexes = new Map();
      this.keyIndexes.set(out, indexes);
    }
    for (let i = 0; n < 0 || i < n; i++) {
      if (n < 0) {
        this.need(1);
        if (this.buf[this.pos] === 0xff) {
          this.pos++;
          break;
        }
        if (i >= MAX_MAP_PAIRS) throw malformed(`cbor: exceeded max number of key-value pairs ${MAX_MAP_PAIRS} for CBOR map`);
      }
      const k = this.key(field);
      // Typed errors name the top-level field, as kube's do (`v1.ConfigMap.binaryData`).
      const childField = this.maps === 1 && k !== undefined ? k : field;
      const v = this.item(depth + 1, tree && k !== undefined ? (tree.fields.get(k) ?? tree.each) : undefined, childField);
      if (k === undefined) continue;
      this.note(out, k);
      if (seen.has(k)) {
        this.fail(`cbor: found duplicate map key ${JSON.stringify(k)} at map element index ${i}`, this.maps === 1 && (k === 'kind' || k === 'apiVersion'));
        continue;
      }
      seen.add(k);
      indexes?.set(k, i);
      if (FORBIDDEN_KEYS.has(k)) throw new ForbiddenKeyError(k);
      out[k] = v;
    }
    this.maps--;
    return out;
  }

  tagged(ai: number, depth: number, kind: FieldKind | undefined, field: string | undefined): unknown {
    const tag = this.arg(ai, 6);
    if (tag === 2 || tag === 3) {
      throw malformed('cbor: data item of cbor type tag is not accepted by protocol: bignum');
    }
    this.need(1);
    const next = this.buf[this.pos];
    if ((tag === 21 || tag === 22 || tag === 23) && next >> 5 === 2) {
      this.pos++;
      const bytes = this.str(2, next & 31);
      if (kind === 'bytes') return tag === 22 ? bytes.toString('base64') : this.base64Field(bytes, field);
      if (tag === 22) return bytes.toString('base64');
      if (tag === 21) return bytes.toString('base64url');
      return bytes.toString('hex');
    }
    // Tags nest like containers (a body of nested tags must not run the stack out).
    if (depth + 1 > this.options.maxDepth) throw malformed(`cbor: exceeded max nested level ${this.options.maxDepth}`);
    const content = this.item(depth + 1, kind, field);
    if (tag === 0) {
      if (typeof content !== 'string' || !RFC3339.test(content) || Number.isNaN(Date.parse(content))) {
        const s = String(content);
        this.fail(
          `cbor: cannot set ${s} for time.Time: parsing time ${JSON.stringify(s)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(s)} as "2006"`,
        );
      }
      return content;
    }
    if (tag === 1 && typeof content === 'number') {
      if (this.options.goType) {
        this.typeError(content >= 0 ? 'positive integer' : 'negative integer', field, 'string');
        return content;
      }
      return epochToRfc3339(content);
    }
    return content;
  }

  simple(ai: number): unknown {
    if (ai === 20) return false;
    if (ai === 21) return true;
    if (ai === 22) return null;
    if (ai === 25 || ai === 26 || ai === 27) {
      const size = ai === 25 ? 2 : ai === 26 ? 4 : 8;
      this.need(size);
      const v = ai === 25 ? halfToNumber(this.buf.readUInt16BE(this.pos)) : ai === 26 ? this.buf.readFloatBE(this.pos) : this.buf.readDoubleBE(this.pos);
      this.pos += size;
      if (Number.isNaN(v)) throw malformed('cbor: data item of cbor type primitives is not accepted by protocol: floating-point NaN');
      if (!Number.isFinite(v)) throw malformed('cbor: data item of cbor type primitives is not accepted by protocol: floating-point infinity');
      // A whole float is a float to Go (refused for integer fields): say so as a JSON body would.
      if (Number.isInteger(v)) this.literal = Object.is(v, -0) ? '-0.0' : `${v}.0`;
      return v;
    }
    if (ai === 24) {
      this.need(1);
      const v = this.buf[this.pos++];
      if (v < 32) throw malformed(`cbor: invalid simple value ${v} for type primitives`);
      this.fail(`cbor: data item of cbor type primitives is not accepted by protocol: simple value ${v} is not recognized`);
      return null;
    }
    if (ai < 24) {
      this.fail(`cbor: data item of cbor type primitives is not accepted by protocol: simple value ${ai} is not recognized`);
      return null;
    }
    if (ai === 31) throw malformed('cbor: unexpected "break" code');
    throw malformed(`cbor: invalid additional information ${ai} for type primitives`);
  }
}

function halfToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 31) return mant === 0 ? sign * Infinity : NaN;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

function epochToRfc3339(seconds: number): string {
  const ms = Math.floor(seconds * 1000);
  const iso = new Date(ms).toISOString();
  const frac = seconds - Math.floor(seconds);
  return frac === 0 ? iso.replace(/\.\d{3}Z$/, 'Z') : iso;
}

/**
 * Decodes one CBOR document (with or without the self-described tag) into a JSON value. Throws
 * CborDecodeError (kube's wording) or ForbiddenKeyError.
 */
export function decodeCbor(data: Buffer, options: CborDecodeOptions): unknown {
  return decodeCborDocument(data, options).value;
}

/** A decoded document and the literal text of numbers JavaScript cannot tell apart (for typed decoding). */
export interface DecodedCbor {
  value: unknown;
  /** As ParsedJson.numberLiterals: whole floats as `1.0`, integers beyond 2^53 exactly; text strings as CBOR_TEXT_STRING. */
  numberLiterals: Map<object, Map<string | number, string>> | undefined;
  /** With `indexKeys`: the element index of a key within the map that holds it. */
  keyIndexes: WeakMap<object, Map<string, number>> | undefined;
}

/**
 * kube's strict-decoding finding for the first unknown field, `path` as typed decoding prints it
 * (`spec.containers[0].foo`): "cbor: found unknown field at map element index N", N counted in the
 * map that holds the field. Undefined when the path cannot be followed.
 */
export function unknownFieldFinding(doc: DecodedCbor, path: string): string | undefined {
  const segments = path.match(/[^.[\]]+|\[\d+\]/g) ?? [];
  let container: unknown = doc.value;
  for (let i = 0; i < segments.length - 1; i++) {
    const seg = segments[i];
    if (container === null || typeof container !== 'object') return undefined;
    container = seg.startsWith('[') ? (container as unknown[])[Number(seg.slice(1, -1))] : (container as Record<string, unknown>)[seg];
  }
  const last = segments[segments.length - 1];
  if (container === null || typeof container !== 'object' || last === undefined) return undefined;
  const index = doc.keyIndexes?.get(container)?.get(last);
  return index === undefined ? undefined : `cbor: found unknown field at map element index ${index}`;
}

/** decodeCbor, with the number literals typed decoding needs to refuse what Go refuses. */
export function decodeCborDocument(data: Buffer, options: CborDecodeOptions): DecodedCbor {
  const r = new Reader(data, options);
  if (data.length === 0) throw malformed('EOF');
  // The leading self-described tags do not count toward the nesting limit (as the JSON readers count).
  while (data[r.pos] === 0xd9 && data[r.pos + 1] === 0xd9 && data[r.pos + 2] === 0xf7) r.pos += 3;
  const value = r.item(0, options.fields, undefined);
  if (r.pos < data.length) throw malformed(`cbor: ${data.length - r.pos} bytes of extraneous data starting at index ${r.pos}`);
  if (r.firstError) throw r.firstError;
  return { value, numberLiterals: r.literals, keyIndexes: r.keyIndexes };
}

/**
 * Reads one item of a CBOR sequence (a watch stream) from `data` at `offset`: the decoded value and
 * where the next item starts, or undefined when the data ends inside the item.
 */
export function decodeCborSequenceItem(data: Buffer, offset: number, options: CborDecodeOptions): { value: unknown; next: number } | undefined {
  const r = new Reader(data, options);
  r.pos = offset;
  if (data[r.pos] === 0xd9 && data[r.pos + 1] === 0xd9 && data[r.pos + 2] === 0xf7) r.pos += 3;
  try {
    const value = r.item(0, options.fields, undefined);
    if (r.firstError) throw r.firstError;
    return { value, next: r.pos };
  } catch (err) {
    if (err instanceof CborDecodeError && err.message === 'unexpected EOF') return undefined;
    throw err;
  }
}
