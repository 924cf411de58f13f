import { requireMessage } from './proto-runtime.js';
import { asString } from '../../api/values.js';

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

/** Decodes the `Unknown` after the magic prefix (the caller checked it); protobufjs errors propagate. */
export function unwrapEnvelope(bytes: Uint8Array): Envelope {
  const unknown = requireMessage('k8s.io.apimachinery.pkg.runtime.Unknown');
  const msg = unknown.decode(bytes.subarray(4)) as unknown as Record<string, unknown>;
  const typeMeta = typeof msg.typeMeta === 'object' && msg.typeMeta !== null ? (msg.typeMeta as Record<string, unknown>) : {};
  const raw = msg.raw instanceof Uint8Array ? msg.raw : new Uint8Array(0);
  return {
    apiVersion: asString(typeMeta.apiVersion),
    kind: asString(typeMeta.kind),
    raw,
    contentEncoding: asString(msg.contentEncoding),
    contentType: asString(msg.contentType),
  };
}

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
