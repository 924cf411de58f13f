import { CborWriter } from './cbor-encoder.js';
import type { FieldKind, FieldTree } from './field-kinds.js';

/**
 * Stored JSON text -> kube's CBOR in one pass over the text, without building the object: the bytes
 * are exactly what `CborWriter.value` writes for the parsed value (same key order, integer and float
 * rules, `[]byte` and `float64` positions, integers beyond 2^53 from their literal text), at a
 * fraction of the cost, which is what makes CBOR LISTs and watch fan-out cheap.
 *
 * How a map's keys get kube's order without objects: each entry (encoded key, then value) is written
 * where it falls, its start offset noted; when the map closes and its entries are out of order, the
 * map's bytes are copied aside and written back sorted by their encoded keys. A container's head is
 * written with a one-byte count and widened in place when it holds 24 entries or more.
 *
 * The text must be valid JSON without duplicate keys, as the server stores it (JSON.stringify's
 * output). Anything the fast paths do not cover (escapes, non-ASCII text, Table rows' embedded
 * objects) goes through `JSON.parse` of that one value and the value encoder.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const TWO_63 = 2n ** 63n;

/** `{"kind":"K","apiVersion":"V"` (either order) at the start of stored JSON: the object's type. */
const KIND_FIRST = /^\{"kind":"([^"\\]*)","apiVersion":"([^"\\]*)"/;
const API_VERSION_FIRST = /^\{"apiVersion":"([^"\\]*)","kind":"([^"\\]*)"/;

/** The apiVersion and kind a stored object starts with, undefined when it does not start with both. */
export function leadingType(json: string): { apiVersion: string; kind: string } | undefined {
  let m = KIND_FIRST.exec(json);
  if (m) return { kind: m[1], apiVersion: m[2] };
  m = API_VERSION_FIRST.exec(json);
  if (m) return { apiVersion: m[1], kind: m[2] };
  return undefined;
}

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
}

/** A CborWriter that also writes JSON text (see the module comment). */
export class JsonCborWriter extends CborWriter {
  private src = '';
  private at = 0;
  /** Entry start offsets of the maps being written (a stack shared by nested maps). */
  private starts = new Int32Array(256);
  private depth = 0;
  /** Sort order of a map's entries (indexes into starts), reused. */
  private order = new Int32Array(256);

  /**
   * Writes the JSON value `json` (no self-described tag). `kind` marks []byte and float64 positions as
   * for `CborWriter.value`. Throws SyntaxError for text that is not JSON and CborEncodeError as
   * `value` does.
   */
  json(json: string, kind?: FieldKind): void {
    this.src = json;
    this.at = 0;
    this.depth = 0;
    this.skipSpace();
    this.jsonValue(kind);
  }

  /**
   * Writes `{kind: PartialObjectMetadata, apiVersion: meta.k8s.io/v1, metadata}` for the object in
   * `json`, in kube's key order, with `metadata` transcoded from the text (an empty map when absent).
   */
  jsonPartialMetadata(json: string): void {
    this.src = json;
    this.at = 0;
    this.depth = 0;
    this.head(5, 3);
    this.string('kind');
    this.string('PartialObjectMetadata');
    this.string('metadata');
    if (!this.findMember('metadata') || this.src.charCodeAt(this.at) !== 0x7b) {
      this.room(1);
      this.buf[this.pos++] = 0xa0;
    } else this.jsonValue(undefined);
    this.string('apiVersion');
    this.string('meta.k8s.io/v1');
  }

  /** Moves to the value of top-level member `name`; false when the object has none. */
  private findMember(name: string): boolean {
    const s = this.src;
    this.skipSpace();
    if (s.charCodeAt(this.at) !== 0x7b) throw new SyntaxError('expected a JSON object');
    this.at++;
    this.skipSpace();
    if (s.charCodeAt(this.at) === 0x7d) return false;
    for (;;) {
      const key = this.readKey();
      this.skipSpace();
      if (key === name) return true;
      this.skipValue();
      this.skipSpace();
      const c = s.charCodeAt(this.at++);
      if (c === 0x7d) return false;
      if (c !== 0x2c) throw new SyntaxError(`unexpected character at ${this.at - 1}`);
      this.skipSpace();
    }
  }

  /** Reads `"key":` and returns the key. */
  private readKey(): string {
    const s = this.src;
    const start = this.at;
    const end = this.stringEnd(start);
    const plain = end > 0;
    const close = plain ? end : -end;
    const key = plain ? s.slice(start + 1, close) : (JSON.parse(s.slice(start, close + 1)) as string);
    this.at = close + 1;
    this.skipSpace();
    if (s.charCodeAt(this.at) !== 0x3a) throw new SyntaxError(`expected ':' at ${this.at}`);
    this.at++;
    return key;
  }

  /**
   * The index of the closing quote of the string starting at `start`: positive when the string is
   * plain (ASCII, no escapes), negated when it needs JSON.parse.
   */
  private stringEnd(start: number): number {
    const s = this.src;
    const n = s.length;
    let plain = true;
    let i = start + 1;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c === QUOTE) return plain ? i : -i;
      if (c === BACKSLASH) {
        plain = false;
        i++;
      } else if (c >= 0x80) plain = false;
    }
    throw new SyntaxError('unterminated string in JSON');
  }

  private skipSpace(): void {
    const s = this.src;
    while (isWhitespace(s.charCodeAt(this.at))) this.at++;
  }

  private skipValue(): void {
    const s = this.src;
    const c = s.charCodeAt(this.at);
    if (c === QUOTE) {
      this.at = Math.abs(this.stringEnd(this.at)) + 1;
      return;
    }
    if (c !== 0x7b && c !== 0x5b) {
      while (this.at < s.length && !isDelimiter(s.charCodeAt(this.at))) this.at++;
      return;
    }
    let nesting = 0;
    for (;;) {
      const d = s.charCodeAt(this.at);
      if (d === QUOTE) {
        this.at = Math.abs(this.stringEnd(this.at)) + 1;
        continue;
      }
      this.at++;
      if (d === 0x7b || d === 0x5b) nesting++;
      else if (d === 0x7d || d === 0x5d) {
        if (--nesting === 0) return;
      } else if (this.at > s.length) throw new SyntaxError('unexpected end of JSON');
    }
  }

  private jsonValue(kind: FieldKind | undefined): void {
    const s = this.src;
    const c = s.charCodeAt(this.at);
    if (c === 0x7b) {
      if (kind === 'embedded') this.parsedValue(kind);
      else this.jsonObject(typeof kind === 'object' ? kind : undefined);
    } else if (c === 0x5b) this.jsonArray(typeof kind === 'object' ? kind.each : undefined);
    else if (c === QUOTE) this.jsonString(kind === 'bytes');
    else if (c === 0x74 || c === 0x66 || c === 0x6e) {
      const word = c === 0x74 ? 'true' : c === 0x66 ? 'false' : 'null';
      if (!s.startsWith(word, this.at)) throw new SyntaxError(`unexpected token at ${this.at}`);
      this.at += word.length;
      this.room(1);
      this.buf[this.pos++] = c === 0x74 ? 0xf5 : c === 0x66 ? 0xf4 : 0xf6;
    } else this.jsonNumber(kind === 'float');
  }

  /** The value at the cursor parsed and written by the value encoder (rare shapes). */
  private parsedValue(kind: FieldKind | undefined): void {
    const start = this.at;
    this.skipValue();
    this.value(JSON.parse(this.src.slice(start, this.at)), kind);
  }

  private jsonString(bytes: boolean): void {
    if (!bytes && this.plainString()) return;
    const s = this.src;
    const start = this.at;
    const end = this.stringEnd(start);
    const close = end > 0 ? end : -end;
    this.at = close + 1;
    const text = end > 0 ? s.slice(start + 1, close) : (JSON.parse(s.slice(start, close + 1)) as string);
    this.value(text, bytes ? 'bytes' : undefined);
  }

  /**
   * Writes the string at the cursor in one pass when it is ASCII without escapes (its characters are
   * its UTF-8 bytes), with a one-byte head widened at the end if needed; false (nothing written) for
   * any other string.
   */
  private plainString(): boolean {
    const s = this.src;
    const n = s.length;
    const start = this.at + 1;
    let i = start;
    this.room(64);
    let buf = this.buf;
    const headAt = this.pos;
    let p = headAt + 1;
    let limit = buf.length;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c === QUOTE) break;
      if (c === BACKSLASH || c >= 0x80) return false;
      if (p === limit) {
        this.pos = p;
        this.room(1024);
        buf = this.buf;
        limit = buf.length;
      }
      buf[p++] = c;
    }
    if (i >= n) throw new SyntaxError('unterminated string in JSON');
    this.at = i + 1;
    this.pos = p;
    this.fixHead(headAt, 2, i - start);
    return true;
  }

  private jsonNumber(float: boolean): void {
    const s = this.src;
    const start = this.at;
    let i = start;
    const negative = s.charCodeAt(i) === 0x2d;
    if (negative) i++;
    let v = 0;
    const digits = i;
    for (let c = s.charCodeAt(i); c >= 0x30 && c <= 0x39; c = s.charCodeAt(++i)) v = v * 10 + (c - 0x30);
    const count = i - digits;
    if (count === 0) throw new SyntaxError(`unexpected token at ${start}`);
    if (!float && count <= 15 && !isNumberChar(s.charCodeAt(i))) {
      this.at = i;
      // -0 is integer 0, as Go reads it.
      this.integer(negative ? -v : v);
      return;
    }
    while (isNumberChar(s.charCodeAt(i))) i++;
    this.at = i;
    const text = s.slice(start, i);
    const n = Number(text);
    if (Number.isNaN(n)) throw new SyntaxError(`invalid number ${text}`);
    const integerLiteral = i - digits === count;
    // An integer literal beyond 2^53 keeps its exact value (Go's int64), even in a float64 field, as
    // the value encoder does with the literal table.
    if (integerLiteral && !Number.isSafeInteger(n) && (!float || String(n) !== text)) {
      const big = BigInt(text);
      if (big >= -TWO_63 && big < TWO_63) this.integer(big);
      else this.float(n);
      return;
    }
    if (float) this.float(n);
    else this.number(n);
  }

  private jsonArray(each: FieldKind | undefined): void {
    const s = this.src;
    this.at++;
    this.room(1);
    const headAt = this.pos++;
    let count = 0;
    this.skipSpace();
    if (s.charCodeAt(this.at) === 0x5d) this.at++;
    else {
      for (;;) {
        this.jsonValue(each);
        count++;
        this.skipSpace();
        const c = s.charCodeAt(this.at++);
        if (c === 0x5d) break;
        if (c !== 0x2c) throw new SyntaxError(`unexpected character at ${this.at - 1}`);
        this.skipSpace();
      }
    }
    this.fixHead(headAt, 4, count);
  }

  private jsonObject(tree: FieldTree | undefined): void {
    const s = this.src;
    this.at++;
    this.room(1);
    const headAt = this.pos++;
    const base = this.depth;
    let count = 0;
    let sorted = true;
    this.skipSpace();
    if (s.charCodeAt(this.at) === 0x7d) this.at++;
    else {
      for (;;) {
        if (this.depth === this.starts.length) {
          const next = new Int32Array(this.starts.length * 2);
          next.set(this.starts);
          this.starts = next;
        }
        const entry = this.pos;
        this.starts[this.depth++] = entry;
        let kind: FieldKind | undefined;
        if (tree === undefined) {
          this.jsonString(false);
          this.skipSpace();
          if (s.charCodeAt(this.at) !== 0x3a) throw new SyntaxError(`expected ':' at ${this.at}`);
          this.at++;
        } else {
          const key = this.readKey();
          this.string(key);
          kind = tree.fields.get(key) ?? tree.each;
        }
        if (count > 0 && sorted && this.compareEntries(this.starts[this.depth - 2], entry) > 0) sorted = false;
        count++;
        this.skipSpace();
        this.jsonValue(kind);
        this.skipSpace();
        const c = s.charCodeAt(this.at++);
        if (c === 0x7d) break;
        if (c !== 0x2c) throw new SyntaxError(`unexpected character at ${this.at - 1}`);
        this.skipSpace();
      }
    }
    if (!sorted) this.sortEntries(base, headAt + 1);
    this.depth = base;
    this.fixHead(headAt, 5, count);
  }

  /** Bytewise order of the encoded keys that start entries at offsets a and b. */
  private compareEntries(a: number, b: number): number {
    const buf = this.buf;
    // Encoded keys differ within their length: the head carries it, so none is a prefix of another.
    for (let i = 0; ; i++) {
      const x = buf[a + i];
      const y = buf[b + i];
      if (x !== y) return x - y;
      if (a + i >= this.pos || b + i >= this.pos) return 0;
    }
  }

  /** Rewrites the entries starting at starts[base..depth) (content from `from` to pos) in key order. */
  private sortEntries(base: number, from: number): void {
    const n = this.depth - base;
    const starts = this.starts;
    if (this.order.length < n) this.order = new Int32Array(n * 2);
    const order = this.order;
    for (let i = 0; i < n; i++) order[i] = base + i;
    if (n <= 32) {
      for (let i = 1; i < n; i++) {
        const e = order[i];
        let j = i - 1;
        while (j >= 0 && this.compareEntries(starts[order[j]], starts[e]) > 0) {
          order[j + 1] = order[j];
          j--;
        }
        order[j + 1] = e;
      }
    } else {
      const sorted = Array.from(order.subarray(0, n)).sort((a, b) => this.compareEntries(starts[a], starts[b]));
      order.set(sorted);
    }
    // The entries are copied past the end, then back in order (copyWithin: one native memmove each).
    const size = this.pos - from;
    this.room(size);
    const buf = this.buf;
    const aside = this.pos - from;
    buf.copyWithin(this.pos, from, this.pos);
    let p = from;
    const last = base + n - 1;
    for (let i = 0; i < n; i++) {
      const e = order[i];
      const start = starts[e] + aside;
      const end = (e < last ? starts[e + 1] : this.pos) + aside;
      if (end - start > 32) {
        buf.copyWithin(p, start, end);
        p += end - start;
      } else for (let k = start; k < end; k++) buf[p++] = buf[k];
    }
  }

  /** Sets the one-byte head reserved at `at` to `count` entries, widening it when count >= 24. */
  private fixHead(at: number, major: number, count: number): void {
    if (count < 24) {
      this.buf[at] = (major << 5) | count;
      return;
    }
    const extra = count < 0x100 ? 1 : count < 0x10000 ? 2 : 4;
    this.room(extra);
    this.buf.copyWithin(at + 1 + extra, at + 1, this.pos);
    const end = this.pos + extra;
    this.pos = at;
    this.head(major, count);
    this.pos = end;
  }
}

function isDelimiter(c: number): boolean {
  return c === 0x2c || c === 0x7d || c === 0x5d || isWhitespace(c);
}
