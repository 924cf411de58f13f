import { putVarint32, varintSize } from './wire-writer.js';

/**
 * An object's protobuf message at another resourceVersion, without encoding the object again (a
 * deletion's object is the removed one with the deletion's version, whose message a watch frame or
 * LIST usually encoded already). Every top-level kind carries its ObjectMeta as field 1,
 * and ObjectMeta's resourceVersion is its field 6; the encoder writes fields in field-number order,
 * as Go does. So the version's field goes before ObjectMeta's first field numbered above 6 (in place
 * of the one there, if any), and ObjectMeta's length changes by the difference.
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
 * `message` (an object's message) with its resourceVersion set to `resourceVersion`, added where it
 * has none and replacing the one it has: byte for byte what the encoder writes for the object with
 * that version. Undefined when `message` does not start with ObjectMeta or is malformed.
 */
export function withResourceVersion(message: Uint8Array, resourceVersion: string): Buffer | undefined {
  if (message[0] !== METADATA_TAG) return undefined;
  const length = readVarint(message, 1, message.length);
  if (length === undefined) return undefined;
  const start = length.next;
  const end = start + length.value;
  if (end > message.length) return undefined;
  // The version's field goes where ObjectMeta's fields numbered above it begin; [split, resume) is
  // the version field the message has, if any.
  let split = start;
  let resume = start;
  while (split < end) {
    const tag = readVarint(message, split, end);
    if (tag === undefined) return undefined;
    const field = Math.floor(tag.value / 8);
    if (field > RESOURCE_VERSION_FIELD) break;
    const next = skipValue(message, tag.next, end, tag.value & 7);
    if (next === undefined) return undefined;
    if (field === RESOURCE_VERSION_FIELD) {
      resume = next;
      break;
    }
    split = next;
  }
  if (resume < split) resume = split;
  const rvBytes = Buffer.byteLength(resourceVersion);
  const rvField = 1 + varintSize(rvBytes) + rvBytes;
  const metaLength = length.value - (resume - split) + rvField;
  const out = Buffer.allocUnsafe(1 + varintSize(metaLength) + metaLength + (message.length - end));
  out[0] = METADATA_TAG;
  let pos = putVarint32(out, 1, metaLength);
  out.set(message.subarray(start, split), pos);
  pos += split - start;
  out[pos++] = RESOURCE_VERSION_TAG;
  pos = putVarint32(out, pos, rvBytes);
  pos += out.write(resourceVersion, pos, 'utf8');
  out.set(message.subarray(resume), pos);
  return out;
}
