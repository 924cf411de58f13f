/**
 * A cursor over protobuf wire bytes: varints, fixed-width numbers and length-delimited pieces, each
 * checked against the end of the bytes. Malformed input throws WireFormatError with Go's wording
 * (`unexpected EOF`, `illegal wireType`), never reads past the end.
 */

/** Bytes that are not valid protobuf wire data. */
export class WireFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WireFormatError';
  }
}

const TWO_32 = 4294967296;

declare module 'node:buffer' {
  interface Buffer {
    /** Node's UTF-8 decoder of a range (what `toString('utf8', start, end)` calls, without its checks). */
    utf8Slice(start: number, end: number): string;
  }
}

export class WireReader {
  pos: number;
  /** The low and high 32 bits of the last `varint64` (unsigned). */
  lo = 0;
  hi = 0;

  constructor(
    readonly buf: Buffer,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }

  private eof(): never {
    throw new WireFormatError('unexpected EOF');
  }

  /** A varint's low 32 bits, unsigned (the rest of a longer varint is consumed). */
  uint32(): number {
    const buf = this.buf;
    let pos = this.pos;
    let value = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      if (pos >= this.end) this.eof();
      const b = buf[pos++] ?? 0;
      if (shift < 32) value |= (b & 0x7f) << shift;
      if (b < 0x80) {
        this.pos = pos;
        return value >>> 0;
      }
    }
    throw new WireFormatError('integer overflow');
  }

  /** A field's tag (field number and wire type); field number 0 is refused, as Go refuses it. */
  tag(): number {
    const tag = this.uint32();
    if (tag >>> 3 === 0) throw new WireFormatError(`illegal tag 0 (wire type ${tag & 7})`);
    return tag;
  }

  /** Reads a varint of up to 64 bits into `lo` and `hi`. */
  varint64(): void {
    const buf = this.buf;
    let pos = this.pos;
    let lo = 0;
    let hi = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      if (pos >= this.end) this.eof();
      const b = buf[pos++] ?? 0;
      const bits = b & 0x7f;
      if (shift < 28) lo |= bits << shift;
      else if (shift === 28) {
        lo |= bits << 28;
        hi |= bits >>> 4;
      } else if (shift < 64) hi |= bits << (shift - 32);
      if (b < 0x80) {
        this.pos = pos;
        this.lo = lo >>> 0;
        this.hi = hi >>> 0;
        return;
      }
    }
    throw new WireFormatError('integer overflow');
  }

  /** The last `varint64` or `fixed64` as a signed number (rounded beyond 2^53). */
  signed64(): number {
    return (this.hi | 0) * TWO_32 + this.lo;
  }

  /** The last `varint64` or `fixed64` as an unsigned number (rounded beyond 2^53). */
  unsigned64(): number {
    return this.hi * TWO_32 + this.lo;
  }

  /** The last `varint64` or `fixed64` exactly, signed. */
  bigint64(): bigint {
    return BigInt.asIntN(64, (BigInt(this.hi) << 32n) | BigInt(this.lo));
  }

  fixed32(): number {
    if (this.pos + 4 > this.end) this.eof();
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }

  /** Reads 8 little-endian bytes into `lo` and `hi`. */
  fixed64(): void {
    if (this.pos + 8 > this.end) this.eof();
    this.lo = this.buf.readUInt32LE(this.pos);
    this.hi = this.buf.readUInt32LE(this.pos + 4);
    this.pos += 8;
  }

  float(): number {
    if (this.pos + 4 > this.end) this.eof();
    const v = this.buf.readFloatLE(this.pos);
    this.pos += 4;
    return v;
  }

  double(): number {
    if (this.pos + 8 > this.end) this.eof();
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }

  /** A length prefix; returns the end of the piece it announces (the piece starts at `pos`). */
  delimited(): number {
    const len = this.uint32();
    const end = this.pos + len;
    if (end > this.end || end < this.pos) this.eof();
    return end;
  }

  string(): string {
    const end = this.delimited();
    const start = this.pos;
    this.pos = end;
    return this.buf.utf8Slice(start, end);
  }

  /** A length-delimited piece, shared with the input (not copied). */
  bytes(): Buffer {
    const end = this.delimited();
    const b = this.buf.subarray(this.pos, end);
    this.pos = end;
    return b;
  }

  /** Skips the value of the field whose tag was just read (groups included, as Go skips them). */
  skip(tag: number, depth = 0): void {
    const wt = tag & 7;
    switch (wt) {
      case 0:
        this.varint64();
        return;
      case 1:
        if (this.pos + 8 > this.end) this.eof();
        this.pos += 8;
        return;
      case 2:
        this.pos = this.delimited();
        return;
      case 3: {
        if (depth > 100) throw new WireFormatError('exceeded maximum recursion depth');
        for (;;) {
          const inner = this.tag();
          if ((inner & 7) !== 4) this.skip(inner, depth + 1);
          else if (inner >>> 3 === tag >>> 3) return;
          else throw new WireFormatError('mismatching end group marker');
        }
      }
      case 5:
        if (this.pos + 4 > this.end) this.eof();
        this.pos += 4;
        return;
      default:
        throw new WireFormatError(`illegal wireType ${wt}`);
    }
  }
}
