/**
 * A protobuf wire writer over one growing buffer, with the integer semantics of protobufjs's Writer
 * (which the codec used before; its bytes are kept): int32 and uint32 wrapped to 32 bits, int32
 * negatives as 10-byte varints, int64 from numbers or decimal strings, two's complement for negatives.
 *
 * Nested messages are written in place: `begin` reserves one byte for the length, `end` writes it and
 * moves the content when the length needs more bytes (messages over 127 bytes), so no intermediate
 * object or per-field buffer is built. Positions returned by `begin` are relative to the current item
 * (`startItem`), so that `take` can hand finished items away and move the unfinished one to a fresh
 * buffer without invalidating them.
 */
export class WireWriter {
  private buf: Buffer;
  private pos = 0;
  /** Start of the item being written; bytes before it are finished. */
  private mark = 0;
  private readonly sealed: Buffer[] = [];
  private sealedBytes = 0;

  constructor(private readonly slab = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(slab);
  }

  /** Empties the writer for reuse, keeping its buffer (only for a writer that never handed pieces away). */
  reset(): void {
    this.pos = 0;
    this.mark = 0;
  }

  /** A copy of the bytes written, for a writer that keeps one buffer (never used with `startItem`). */
  copy(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.pos));
  }

  /** Bytes written so far, finished and unfinished. */
  get length(): number {
    return this.sealedBytes + this.pos;
  }

  /** Marks the start of an item: positions from `begin` are relative to it. */
  startItem(): void {
    this.mark = this.pos;
  }

  /** Makes room for N more bytes, moving the current item to a new buffer when the old one is full. */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const item = this.pos - this.mark;
    const next = Buffer.allocUnsafe(Math.max(this.slab, (item + n) * 2));
    this.buf.copy(next, 0, this.mark, this.pos);
    if (this.mark > 0) {
      this.sealed.push(this.buf.subarray(0, this.mark));
      this.sealedBytes += this.mark;
    }
    this.buf = next;
    this.pos = item;
    this.mark = 0;
  }

  /** Everything written, in pieces (no copy); the writer is spent. */
  pieces(): Buffer[] {
    const out = this.sealed.slice();
    if (this.pos > 0) out.push(this.buf.subarray(0, this.pos));
    return out;
  }

  /** A copy of the bytes from AT (a position relative to the item, such as `here` gives) to the end. */
  copyFrom(at: number): Buffer {
    return Buffer.from(this.buf.subarray(this.mark + at, this.pos));
  }

  /** The position (relative to the item) to roll back to with `rewind`. */
  here(): number {
    return this.pos - this.mark;
  }

  rewind(at: number): void {
    this.pos = this.mark + at;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  /** A tag or any non-negative 32-bit varint. */
  uint32(value: number): void {
    this.ensure(5);
    this.pos = putVarint32(this.buf, this.pos, value);
  }

  /** An int32, wrapped to 32 bits first; negatives take 10 bytes, as the protobuf spec says. */
  int32(value: number): void {
    const v = value | 0;
    if (v < 0) this.varint64(fromNumber(v));
    else this.uint32(v);
  }

  sint32(value: number): void {
    this.uint32(((value << 1) ^ (value >> 31)) >>> 0);
  }

  /** int64/uint64 from a number or a decimal string (values beyond 2^53). */
  int64(value: number | string): void {
    if (typeof value === 'number' && value >= 0 && value <= 0xffffffff) this.uint32(value);
    else this.varint64(longBits(value));
  }

  sint64(value: number | string): void {
    const [lo, hi] = longBits(value);
    const mask = hi >> 31;
    this.varint64([((lo << 1) ^ mask) >>> 0, (((hi << 1) | (lo >>> 31)) ^ mask) >>> 0]);
  }

  fixed32(value: number): void {
    this.ensure(4);
    this.buf.writeUInt32LE(value >>> 0, this.pos);
    this.pos += 4;
  }

  fixed64(value: number | string): void {
    const [lo, hi] = longBits(value);
    this.fixed32(lo);
    this.fixed32(hi);
  }

  double(value: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  float(value: number): void {
    this.ensure(4);
    this.buf.writeFloatLE(value, this.pos);
    this.pos += 4;
  }

  private varint64([lo0, hi0]: [number, number]): void {
    let lo = lo0;
    let hi = hi0;
    this.ensure(10);
    const buf = this.buf;
    let p = this.pos;
    while (hi) {
      buf[p++] = (lo & 127) | 128;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    while (lo > 127) {
      buf[p++] = (lo & 127) | 128;
      lo >>>= 7;
    }
    buf[p++] = lo;
    this.pos = p;
  }

  /** A length-delimited UTF-8 string. Short ASCII strings are copied in JavaScript, the rest by Buffer. */
  string(s: string): void {
    const n = s.length;
    if (n < 128) {
      this.ensure(n + 1);
      const buf = this.buf;
      const start = this.pos + 1;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        buf[start + i] = c;
      }
      if (i === n) {
        buf[this.pos] = n;
        this.pos = start + n;
        return;
      }
    }
    const len = Buffer.byteLength(s, 'utf8');
    this.uint32(len);
    this.ensure(len);
    this.pos += this.buf.write(s, this.pos, len, 'utf8');
  }

  /** Length-delimited raw bytes. */
  bytes(b: Uint8Array): void {
    this.uint32(b.length);
    this.raw(b);
  }

  /** Bytes as they are (no length). */
  raw(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** Reserves the length byte of a nested message; returns what `end` needs. */
  begin(): number {
    this.ensure(1);
    return this.pos++ - this.mark;
  }

  /** Writes the length of the message begun at AT (a `begin` result), moving its content if needed. */
  end(at: number): void {
    const start = this.mark + at;
    const len = this.pos - start - 1;
    if (len < 128) {
      this.buf[start] = len;
      return;
    }
    const extra = varintSize(len) - 1;
    this.ensure(extra);
    const s = this.mark + at;
    this.buf.copy(this.buf, s + 1 + extra, s + 1, this.pos);
    this.pos += extra;
    let v = len;
    let p = s;
    while (v > 127) {
      this.buf[p++] = (v & 127) | 128;
      v >>>= 7;
    }
    this.buf[p] = v;
  }
}

/**
 * Writes VALUE, wrapped to an unsigned 32-bit integer, as a varint into BUF at POS (the caller made
 * room for it); returns the position after it.
 */
export function putVarint32(buf: Buffer, pos: number, value: number): number {
  let v = value >>> 0;
  let p = pos;
  while (v > 127) {
    buf[p++] = (v & 127) | 128;
    v >>>= 7;
  }
  buf[p++] = v;
  return p;
}

/** Bytes of the varint of a non-negative 32-bit N. */
export function varintSize(n: number): number {
  return n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5;
}

/** protobufjs's LongBits.fromNumber: the low and high 32 bits of a (truncated) number, two's complement. */
function fromNumber(value: number): [number, number] {
  if (value === 0) return [0, 0];
  const sign = value < 0;
  const v = sign ? -value : value;
  let lo = v >>> 0;
  let hi = ((v - lo) / 4294967296) >>> 0;
  if (sign) {
    hi = ~hi >>> 0;
    lo = ~lo >>> 0;
    if (++lo > 4294967295) {
      lo = 0;
      if (++hi > 4294967295) hi = 0;
    }
  }
  return [lo, hi];
}

/** The 64 bits of an int64 given as a number or a decimal string (wrapped modulo 2^64, as Long does). */
function longBits(value: number | string): [number, number] {
  if (typeof value === 'number') return fromNumber(value);
  const b = BigInt.asUintN(64, BigInt(value));
  return [Number(b & 0xffffffffn), Number(b >> 32n)];
}
