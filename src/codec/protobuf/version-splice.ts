import { putVarint32, varintSize } from './wire-writer.js';

/**
 * A stored object's protobuf message is known before its write only up to its resourceVersion, which
 * the store allocates as it writes. Every top-level kind carries its ObjectMeta as field 1, and
 * ObjectMeta's resourceVersion is its field 6; the encoder writes fields in field-number order, as
 * Go does. So the message without a version, and the version, give the whole message: the version's
 * field goes before ObjectMeta's first field numbered above 6, and ObjectMeta's length grows by it.
 */

const METADATA_TAG = 0x0a; // field 1, length-delimited
const RESOURCE_VERSION_FIELD = 6;
const RESOURCE_VERSION_TAG = (RESOURCE_VERSION_FIELD << 3) | 2;

/** A varint at `pos` below `end`: its value (low 32 bits) and the position after it; undefined when cut short or longer than 5 bytes. */
function readVarint(buf: Uint8Array, pos: number, end: number): { value: number; next: number } | undefined {
  let value = 0;
  for (let shift = 0, p = pos; shift < 35 && p < end; shift += 7) {
    const b = buf[p++] ?? 0;
    value += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) return { value, next: p };
  }
  return undefined;
}

/** The position after the value of a field of `wireType` starting at `pos`; undefined when malformed. */
function skipValue(buf: Uint8Array, pos: number, end: number, wireType: number): number | undefined {
  switch (wireType) {
    case 0:
      return readVarint(buf, pos, end)?.next;
    case 1:
      return pos + 8 <= end ? pos + 8 : undefined;
    case 2: {
      const length = readVarint(buf, pos, end);
      if (length === undefined || length.next + length.value > end) return undefined;
      return length.next + length.value;
    }
    case 5:
      return pos + 4 <= end ? pos + 4 : undefined;
    default:
      return undefined;
  }
}

/**
 * The message `versionless` (an object's message whose ObjectMeta has no resourceVersion) with
 * `resourceVersion` set: byte for byte what the encoder writes for the object with that version.
 * Undefined when `versionless` does not start with ObjectMeta, already has a version, or is malformed.
 */
export function withResourceVersion(versionless: Uint8Array, resourceVersion: string): Buffer | undefined {
  if (versionless[0] !== METADATA_TAG) return undefined;
  const length = readVarint(versionless, 1, versionless.length);
  if (length === undefined) return undefined;
  const start = length.next;
  const end = start + length.value;
  if (end > versionless.length) return undefined;
  // ObjectMeta's first field numbered above resourceVersion's: the version's field goes before it.
  let split = start;
  while (split < end) {
    const tag = readVarint(versionless, split, end);
    if (tag === undefined) return undefined;
    const field = Math.floor(tag.value / 8);
    if (field === RESOURCE_VERSION_FIELD) return undefined;
    if (field > RESOURCE_VERSION_FIELD) break;
    const next = skipValue(versionless, tag.next, end, tag.value & 7);
    if (next === undefined) return undefined;
    split = next;
  }
  const rvBytes = Buffer.byteLength(resourceVersion);
  const rvField = 1 + varintSize(rvBytes) + rvBytes;
  const metaLength = length.value + rvField;
  const out = Buffer.allocUnsafe(1 + varintSize(metaLength) + metaLength + (versionless.length - end));
  out[0] = METADATA_TAG;
  let pos = putVarint32(out, 1, metaLength);
  out.set(versionless.subarray(start, split), pos);
  pos += split - start;
  out[pos++] = RESOURCE_VERSION_TAG;
  pos = putVarint32(out, pos, rvBytes);
  pos += out.write(resourceVersion, pos, 'utf8');
  out.set(versionless.subarray(split), pos);
  return out;
}
