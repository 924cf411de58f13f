/**
 * A large body's next piece, built as UTF-8 bytes as its text is appended. Written as a Buffer, a
 * piece costs one encoding of each item: a piece built as a string is flattened (copied), measured
 * again for its chunk header and encoded once more when the socket takes it, and its copies stay
 * on the JavaScript heap for the garbage collector.
 */
export class Utf8Pieces {
  /** A short body starts small (a pooled 4 KiB) and grows; after the first piece, pieces start at full size. */
  private buf = Buffer.allocUnsafe(4096);
  private used = 0;

  /** `pieceBytes`: the size a caller takes pieces at; room for one more item of that size is kept. */
  constructor(private readonly pieceBytes: number) {}

  /** Bytes appended since the last `take`. */
  get length(): number {
    return this.used;
  }

  /** Appends `text` as UTF-8 (at most 3 bytes a UTF-16 unit, so the room is checked before writing). */
  append(text: string): void {
    const room = this.buf.length - this.used;
    if (text.length * 3 > room) {
      const bigger = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.used + text.length * 3));
      this.buf.copy(bigger, 0, 0, this.used);
      this.buf = bigger;
    }
    this.used += this.buf.write(text, this.used);
  }

  /** The bytes appended so far, as one piece the caller owns; the next piece starts empty. */
  take(): Buffer {
    const piece = this.buf.subarray(0, this.used);
    this.buf = Buffer.allocUnsafe(2 * this.pieceBytes);
    this.used = 0;
    return piece;
  }
}
