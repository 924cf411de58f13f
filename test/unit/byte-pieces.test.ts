import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BytePieces } from '../../src/codec/protobuf/byte-pieces.js';

/** The bytes of `value` as a protobuf varint. */
function varintBytes(value: number): number[] {
  const out: number[] = [];
  let v = value;
  while (v > 127) {
    out.push((v & 127) | 128);
    v >>>= 7;
  }
  out.push(v);
  return out;
}

/** A run of N bytes counting up from SEED. */
function run(n: number, seed: number): Buffer {
  return Buffer.from(Array.from({ length: n }, (_, i) => (seed + i) & 255));
}

test('pieces add up to the runs and varints put, none longer than a piece unless it is one long run', () => {
  const pieceBytes = 100;
  const parts: Array<Buffer | number> = [];
  // Runs of every size around the piece size, varints of every length, and runs longer than a piece.
  for (let i = 0; i < 60; i++) {
    parts.push([1, 127, 128, 16383, 16384, 2097152, 268435456, 4294967295][i % 8] ?? 0);
    parts.push(run([0, 1, 7, 50, 99, 100, 101, 250][i % 8] ?? 0, i));
  }
  const expected = Buffer.concat(parts.map((p) => (typeof p === 'number' ? Buffer.from(varintBytes(p)) : p)));
  const out = new BytePieces(pieceBytes, expected.length);
  const pieces: Buffer[] = [];
  for (const p of parts) {
    if (typeof p === 'number') out.varint(p);
    else out.put(p);
    if (out.hasPieces) pieces.push(...out.take());
  }
  pieces.push(...out.finish());
  assert.deepEqual(Buffer.concat(pieces), expected);
  const longRuns = parts.filter((p): p is Buffer => typeof p !== 'number' && p.length > pieceBytes);
  for (const piece of pieces) {
    assert.ok(piece.length > 0, 'no empty piece');
    if (piece.length > pieceBytes) assert.ok(longRuns.includes(piece), `a piece of ${piece.length} bytes that is not a long run handed on as it is`);
  }
  // Every long run went out as the caller's own buffer, not a copy.
  for (const r of longRuns) assert.ok(pieces.includes(r));
  // Short runs were gathered: far fewer pieces than runs.
  assert.ok(pieces.length < parts.length / 2, `${pieces.length} pieces for ${parts.length} runs`);
});

test('a body shorter than a piece is one piece', () => {
  const out = new BytePieces(64 * 1024, 7);
  out.put(Buffer.from('k8s\0'));
  out.varint(300);
  out.put(Buffer.from([9]));
  assert.equal(out.hasPieces, false);
  assert.deepEqual(out.finish(), [Buffer.from([0x6b, 0x38, 0x73, 0, 0xac, 0x02, 9])]);
});

test('finishing short of the announced length is an error, not a truncated body', () => {
  const out = new BytePieces(16, 10);
  out.put(run(5, 0));
  assert.throws(() => out.finish(), /5 bytes announced and never put/);
});
