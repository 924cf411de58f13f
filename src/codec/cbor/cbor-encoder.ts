import { fieldKindsFor, type FieldKind, type FieldTree } from './field-kinds.js';

/**
 * Writes CBOR exactly as kube-apiserver 1.36's CBOR serializer (apimachinery's cbor package over
 * fxamacker/cbor) writes the same object, byte for byte:
 * - the document starts with the self-described CBOR tag 55799 (`d9 d9 f7`);
 * - every string, map key included, is a byte string (major type 2), never a text string;
 * - map keys are sorted bytewise by their encoded form, so shorter keys first, then by UTF-8 bytes
 *   (the deterministic order of RFC 8949 §4.2.1);
 * - integers take the shortest head; whole numbers within int64 are integers, other numbers are floats
 *   in the shortest of float16/32/64 that holds them exactly (`-0` read from JSON is integer 0, as kube
 *   reads it); NaN and infinities are refused;
 * - `[]byte` fields (see field-kinds.ts) are byte strings of the decoded base64, tagged 22 ("expected
 *   later encoding: base64"), and `float64` fields are floats even when whole;
 * - definite lengths only.
 *
 * Why our own encoder rather than cbor-x: cbor-x writes text strings, keeps insertion order for map
 * keys (or its own record extension), and chooses integer vs float by JavaScript type, so it cannot
 * produce kube's deterministic form; the rules above are small enough to write directly.
 */

/** The self-described CBOR tag (55799) that starts every document kube writes. */
export const SELF_DESCRIBED = Buffer.from([0xd9, 0xd9, 0xf7]);

/** A value kube's encoder refuses (NaN, infinities), with fxamacker's message. */
export class CborEncodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CborEncodeError';
  }
}

const TWO_63 = 2 ** 63;
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The float16 bits of `n` when float16 holds it exactly (n already exact in float32), else -1. */
function half(n: number): number {
  f32[0] = n;
  const bits = u32[0];
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  const mant = bits & 0x7fffff;
  if (exp === 0) return mant === 0 ? sign : -1;
  const e = exp - 127;
  if (e >= -14 && e <= 15) return (mant & 0x1fff) === 0 ? sign | ((e + 15) << 10) | (mant >>> 13) : -1;
  if (e >= -24 && e < -14) {
    const full = mant | 0x800000;
    const shift = -1 - e;
    return (full & ((1 << shift) - 1)) === 0 ? sign | (full >>> shift) : -1;
  }
  return -1;
}

/** A map key's encoding, interned (keys repeat across objects; their encoding never changes). */
interface KeyInfo {
  encoded: Buffer;
  /** Only ASCII characters: its UTF-8 bytes are its characters. */
  ascii: boolean;
}

const keyCache = new Map<string, KeyInfo>();

function keyInfo(key: string): KeyInfo {
  let info = keyCache.get(key);
  if (info === undefined) {
    const body = Buffer.from(key, 'utf8');
    const w = new CborWriter(body.length + 9);
    w.head(2, body.length);
    w.raw(body);
    info = { encoded: w.take(), ascii: body.length === key.length };
    if (keyCache.size < 50_000) keyCache.set(key, info);
  }
  return info;
}

function encodedKey(key: string): Buffer {
  return keyInfo(key).encoded;
}

/**
 * kube's key order: bytewise on the encoded keys. Encoded lengths decide most pairs; ASCII keys of
 * equal length compare as strings (the same order as their bytes), others as bytes.
 */
function byEncodedKey(a: string, b: string): number {
  const ia = keyInfo(a);
  const ib = keyInfo(b);
  if (ia.encoded.length !== ib.encoded.length) return ia.encoded.length - ib.encoded.length;
  if (ia.ascii && ib.ascii) return a < b ? -1 : a > b ? 1 : 0;
  return Buffer.compare(ia.encoded, ib.encoded);
}

/** Looks up the literal text of a number JavaScript cannot hold exactly (see json-text.ts). */
export type NumberLiteral = (container: object, key: string | number) => string | undefined;

/** A growable output buffer with CBOR's primitives. */
export class CborWriter {
  protected buf: Buffer;
  protected pos = 0;

  constructor(initial = 4096) {
    this.buf = Buffer.allocUnsafe(initial);
  }

  get length(): number {
    return this.pos;
  }

  protected room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** The bytes written so far (a copy), and starts over. */
  take(): Buffer {
    const out = Buffer.allocUnsafe(this.pos);
    out.set(this.buf.subarray(0, this.pos));
    this.pos = 0;
    return out;
  }

  /** Drops what was written. */
  reset(): void {
    this.pos = 0;
  }

  raw(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** A head: major type and argument in the shortest form. */
  head(major: number, n: number | bigint): void {
    this.room(9);
    const m = major << 5;
    if (typeof n === 'bigint') {
      if (n < 2n ** 32n) return this.head(major, Number(n));
      this.buf[this.pos++] = m | 27;
      this.buf.writeBigUInt64BE(n, this.pos);
      this.pos += 8;
      return;
    }
    if (n < 24) this.buf[this.pos++] = m | n;
    else if (n < 0x100) {
      this.buf[this.pos++] = m | 24;
      this.buf[this.pos++] = n;
    } else if (n < 0x10000) {
      this.buf[this.pos++] = m | 25;
      this.buf.writeUInt16BE(n, this.pos);
      this.pos += 2;
    } else if (n < 0x100000000) {
      this.buf[this.pos++] = m | 26;
      this.buf.writeUInt32BE(n, this.pos);
      this.pos += 4;
    } else {
      this.buf[this.pos++] = m | 27;
      this.buf.writeBigUInt64BE(BigInt(n), this.pos);
      this.pos += 8;
    }
  }

  /** A string as kube writes every string: a byte string of its UTF-8. */
  string(s: string): void {
    if (s.length < 24) {
      // Short ASCII strings (most keys and values) are written byte by byte, without a native call.
      this.room(s.length + 1);
      const start = this.pos;
      this.buf[this.pos++] = 0x40 | s.length;
      let ascii = true;
      for (let i = 0; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) {
          ascii = false;
          break;
        }
        this.buf[this.pos++] = c;
      }
      if (ascii) return;
      this.pos = start;
    }
    const len = Buffer.byteLength(s, 'utf8');
    this.head(2, len);
    this.room(len);
    this.buf.write(s, this.pos, 'utf8');
    this.pos += len;
  }

  integer(n: number | bigint): void {
    if (n < 0) this.head(1, typeof n === 'bigint' ? -n - 1n : -n - 1);
    else this.head(0, n);
  }

  float(n: number): void {
    if (Number.isNaN(n)) throw new CborEncodeError('cbor: unsupported value: floating-point NaN');
    if (!Number.isFinite(n)) throw new CborEncodeError('cbor: unsupported value: floating-point infinity');
    this.room(9);
    if (Math.fround(n) === n) {
      const h = half(n);
      if (h >= 0) {
        this.buf[this.pos++] = 0xf9;
        this.buf.writeUInt16BE(h, this.pos);
        this.pos += 2;
        return;
      }
      this.buf[this.pos++] = 0xfa;
      this.buf.writeFloatBE(n, this.pos);
      this.pos += 4;
      return;
    }
    this.buf[this.pos++] = 0xfb;
    this.buf.writeDoubleBE(n, this.pos);
    this.pos += 8;
  }

  /** A number read from JSON: an integer when whole and within int64, else a float. */
  number(n: number, literal?: string): void {
    // Integer literals beyond 2^53 are exact in Go's int64; other literals (`1.0`, `1e3`) are read
    // as their value, which kube's storage round trip turns into an integer when whole.
    if (literal !== undefined && /^-?\d+$/.test(literal)) {
      const big = BigInt(literal);
      if (big >= -(2n ** 63n) && big < 2n ** 63n) return this.integer(big);
      return this.float(Number(literal));
    }
    if (Number.isInteger(n) && n >= -TWO_63 && n < TWO_63) {
      if (Number.isSafeInteger(n)) this.integer(n);
      else this.integer(BigInt(n));
      return;
    }
    this.float(n);
  }

  value(v: unknown, kind?: FieldKind, literal?: NumberLiteral): void {
    if (v === null || v === undefined) {
      this.room(1);
      this.buf[this.pos++] = 0xf6;
    } else if (typeof v === 'string') {
      if (kind === 'bytes') {
        const bytes = Buffer.from(v, 'base64');
        this.room(1);
        this.buf[this.pos++] = 0xd6;
        this.head(2, bytes.length);
        this.raw(bytes);
      } else this.string(v);
    } else if (typeof v === 'number') {
      if (kind === 'float') this.float(v);
      else this.number(v);
    } else if (typeof v === 'boolean') {
      this.room(1);
      this.buf[this.pos++] = v ? 0xf5 : 0xf4;
    } else if (typeof v === 'bigint') {
      if (v >= -(2n ** 63n) && v < 2n ** 63n) this.integer(v);
      else this.float(Number(v));
    } else if (Array.isArray(v)) {
      const each = typeof kind === 'object' ? kind.each : undefined;
      this.head(4, v.length);
      for (let i = 0; i < v.length; i++) {
        const e: unknown = v[i];
        const lit = literal && typeof e === 'number' && !Number.isSafeInteger(e) ? literal(v, i) : undefined;
        if (lit !== undefined) this.number(e as number, lit);
        else this.value(e, each, literal);
      }
    } else if (typeof v === 'object') {
      const obj = v as Record<string, unknown>;
      const tree = kind === 'embedded' ? fieldsOf(obj) : typeof kind === 'object' ? kind : undefined;
      this.map(obj, tree, literal);
    } else {
      throw new CborEncodeError(`cbor: unsupported type: ${typeof v}`);
    }
  }

  map(obj: Record<string, unknown>, tree?: FieldTree, literal?: NumberLiteral): void {
    const keys = Object.keys(obj).filter((k) => obj[k] !== undefined);
    const encoded = keys.map(encodedKey);
    const order = keys.map((_, i) => i);
    order.sort((a, b) => Buffer.compare(encoded[a], encoded[b]));
    this.head(5, keys.length);
    for (const i of order) {
      const k = keys[i];
      this.raw(encoded[i]);
      const e = obj[k];
      const lit = literal && typeof e === 'number' && !Number.isSafeInteger(e) ? literal(obj, k) : undefined;
      if (lit !== undefined) this.number(e as number, lit);
      else this.value(e, tree ? (tree.fields.get(k) ?? tree.each) : undefined, literal);
    }
  }
}

/** The []byte and float64 positions of an object, by its apiVersion and kind (none for custom resources). */
export function fieldsOf(obj: Record<string, unknown>): FieldTree | undefined {
  return typeof obj.apiVersion === 'string' && typeof obj.kind === 'string' ? fieldKindsFor(obj.apiVersion, obj.kind) : undefined;
}

const shared = new CborWriter(64 * 1024);

/**
 * One CBOR document of a JSON value as kube writes it (self-described tag first). `fields` marks the
 * built-in kind's []byte and float64 positions; `literal` gives the text of integers beyond 2^53.
 */
export function encodeCbor(value: unknown, fields?: FieldTree, literal?: NumberLiteral): Buffer {
  // One writer serves every call (encoding never re-enters itself); take() copies the result out.
  const w = shared;
  w.reset();
  w.raw(SELF_DESCRIBED);
  w.value(value, fields, literal);
  return w.take();
}

/**
 * One item of an `application/cbor-seq` watch stream: the self-described tag and a WatchEvent map
 * `{type, object}` whose object is `object`, the event object's own CBOR document (tag included, as
 * kube embeds it).
 */
export function encodeCborWatchEvent(type: string, object: Buffer): Buffer {
  const w = new CborWriter(object.length + 32);
  w.raw(SELF_DESCRIBED);
  w.head(5, 2);
  w.string('type');
  w.string(type);
  w.string('object');
  w.raw(object);
  return w.take();
}

/** The sort position of a map key among others, for writers that emit a map's entries themselves. */
export function compareKeys(a: string, b: string): number {
  return byEncodedKey(a, b);
}
