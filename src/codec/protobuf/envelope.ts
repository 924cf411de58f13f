import { requireMessage } from './proto-runtime.js';
import { WireFormatError, WireReader } from './wire-reader.js';
import { fieldNumber } from './wire-types.js';

/**
 * The Kubernetes protobuf envelope: 4 magic bytes `6b 38 73 00` then a `runtime.Unknown`
 * {typeMeta{apiVersion, kind}, raw, contentEncoding, contentType}, and the length-delimited framing of
 * protobuf watch streams (4-byte big-endian length, then the frame).
 */

/** The magic prefix of every protobuf body kube-apiserver reads or writes. */
export const PROTOBUF_MAGIC: Readonly<Uint8Array> = Uint8Array.from([0x6b, 0x38, 0x73, 0x00]);

/** The parts of a decoded envelope. */
export interface Envelope {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
  contentEncoding: string;
  contentType: string;
}

/** True when BYTES start with the magic prefix. */
export function hasMagic(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x6b && bytes[1] === 0x38 && bytes[2] === 0x73 && bytes[3] === 0x00;
}

/** Field numbers of `runtime.Unknown` and its `TypeMeta`, read from the descriptor once. */
interface EnvelopeNumbers {
  typeMeta: number;
  raw: number;
  contentEncoding: number;
  contentType: number;
  apiVersion: number;
  kind: number;
}

let numbers: EnvelopeNumbers | undefined;

function envelopeNumbers(): EnvelopeNumbers {
  if (numbers !== undefined) return numbers;
  const unknown = requireMessage('k8s.io.apimachinery.pkg.runtime.Unknown');
  const typeMeta = requireMessage('k8s.io.apimachinery.pkg.runtime.TypeMeta');
  numbers = {
    typeMeta: fieldNumber(unknown, 'typeMeta'),
    raw: fieldNumber(unknown, 'raw'),
    contentEncoding: fieldNumber(unknown, 'contentEncoding'),
    contentType: fieldNumber(unknown, 'contentType'),
    apiVersion: fieldNumber(typeMeta, 'apiVersion'),
    kind: fieldNumber(typeMeta, 'kind'),
  };
  return numbers;
}

/**
 * Decodes the `Unknown` after the magic prefix (the caller checked it); malformed bytes throw
 * WireFormatError. `raw` shares BYTES' memory.
 */
export function unwrapEnvelope(bytes: Uint8Array): Envelope {
  const n = envelopeNumbers();
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const r = new WireReader(buf, 4, buf.length);
  const env: Envelope = { apiVersion: '', kind: '', raw: EMPTY, contentEncoding: '', contentType: '' };
  while (r.pos < r.end) {
    const tag = r.tag();
    const field = tag >>> 3;
    const wt = tag & 7;
    if (wt !== 2) r.skip(tag);
    else if (field === n.typeMeta) {
      const end = r.delimited();
      while (r.pos < end) {
        const t = r.tag();
        if ((t & 7) !== 2) r.skip(t);
        else if (t >>> 3 === n.apiVersion) env.apiVersion = r.string();
        else if (t >>> 3 === n.kind) env.kind = r.string();
        else r.skip(t);
      }
      if (r.pos !== end) throw new WireFormatError('unexpected EOF');
    } else if (field === n.raw) env.raw = r.bytes();
    else if (field === n.contentEncoding) env.contentEncoding = r.string();
    else if (field === n.contentType) env.contentType = r.string();
    else r.skip(tag);
  }
  return env;
}

const EMPTY = new Uint8Array(0);

/**
 * Splits a length-delimited stream into complete frames; REST holds the bytes of an incomplete trailing
 * frame, to be prefixed to the next chunk.
 */
export function splitFrames(stream: Uint8Array): { frames: Buffer[]; rest: Buffer } {
  const buf = Buffer.from(stream.buffer, stream.byteOffset, stream.length);
  const frames: Buffer[] = [];
  let off = 0;
  while (buf.length - off >= 4) {
    const len = buf.readUInt32BE(off);
    if (buf.length - off - 4 < len) break;
    frames.push(buf.subarray(off + 4, off + 4 + len));
    off += 4 + len;
  }
  return { frames, rest: buf.subarray(off) };
}
