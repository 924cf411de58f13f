import { putVarint32, varintSize } from './wire-writer.js';

/**
 * Assembles a body of known length from many byte runs into pieces of about `pieceBytes`, so that
 * a large body is copied and written a piece at a time while the piece is still in the CPU's cache,
 * and no more than a piece is held beyond the runs themselves. A run longer than a piece is handed
 * on as it is (never copied); the runs must not change afterwards.
 */
export class BytePieces {
  private buf: Buffer;
  private pos = 0;
  /** Bytes not yet put (sizes the last piece exactly). */
  private left: number;
  /** Pieces completed and not yet taken. */
  private done: Buffer[] = [];

  constructor(
    private readonly pieceBytes: number,
    total: number,
  ) {
    this.left = total;
    this.buf = Buffer.allocUnsafe(Math.min(pieceBytes, total));
  }

  /** True when `take` has pieces to hand out. */
  get hasPieces(): boolean {
    return this.done.length > 0;
  }

  /** Appends a run of bytes. */
  put(bytes: Uint8Array): void {
    const n = bytes.length;
    if (n > this.pieceBytes) {
      this.left -= n;
      this.cut();
      this.done.push(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, n));
      return;
    }
    if (this.pos + n > this.buf.length) this.cut();
    this.buf.set(bytes, this.pos);
    this.pos += n;
    this.left -= n;
  }

  /** Appends a non-negative 32-bit varint (a tag or a length). */
  varint(value: number): void {
    const n = varintSize(value >>> 0);
    if (this.pos + n > this.buf.length) this.cut();
    this.left -= n;
    this.pos = putVarint32(this.buf, this.pos, value);
  }

  /** The pieces completed so far; the assembler keeps filling the next one. */
  take(): Buffer[] {
    const out = this.done;
    this.done = [];
    return out;
  }

  /** Every piece not yet taken, the last one included; call once, after the last run. */
  finish(): Buffer[] {
    if (this.left !== 0) throw new Error(`byte pieces: ${this.left} bytes announced and never put`);
    this.cut();
    return this.take();
  }

  /**
   * Ends the current piece (when it holds anything) and starts the next, sized to what is left
   * (which counts the run being put, so that it fits).
   */
  private cut(): void {
    if (this.pos === 0) return;
    this.done.push(this.buf.subarray(0, this.pos));
    this.buf = Buffer.allocUnsafe(Math.max(0, Math.min(this.pieceBytes, this.left)));
    this.pos = 0;
  }
}
