/**
 * Utf8Pieces: a large body's pieces built as UTF-8 bytes. The pieces, joined, are the UTF-8 of the
 * text appended, whatever the characters (1 to 4 bytes each) and however the buffer had to grow for
 * a long item; a piece taken is never written to again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Utf8Pieces } from '../../src/codec/utf8-pieces.js';

test('pieces joined are the UTF-8 of the appended text, across growth and takes', () => {
  const texts = ['{"a":"é"}', 'x'.repeat(5000), '"\u2028"', '😀'.repeat(3000), ',', 'ascii'.repeat(40_000), 'ü', '{}'];
  const pieces = new Utf8Pieces(1024);
  const taken: { piece: Buffer; copy: Buffer }[] = [];
  for (const text of texts) {
    pieces.append(text);
    if (pieces.length >= 1024) {
      const piece = pieces.take();
      taken.push({ piece, copy: Buffer.from(piece) });
    }
  }
  const last = pieces.take();
  assert.equal(pieces.length, 0);
  assert.equal(pieces.take().length, 0);
  for (const { piece, copy } of taken) assert.ok(piece.equals(copy), 'a taken piece keeps its bytes');
  assert.ok(Buffer.concat([...taken.map((t) => t.piece), last]).equals(Buffer.from(texts.join(''), 'utf8')));
  assert.ok(taken.length >= 3);
});
