import type protobuf from 'protobufjs';
import { protobufModule } from './proto-runtime.js';

/**
 * Descriptor facts both directions of the codec read: the wire type of each protobuf scalar type,
 * a field's number by name, and a field's message type.
 */

/** Wire type of each scalar type: 0 varint, 1 fixed 64-bit, 2 length-delimited, 5 fixed 32-bit. */
export const SCALAR_WIRE_TYPE: Readonly<Record<string, number>> = {
  string: 2,
  bytes: 2,
  bool: 0,
  double: 1,
  float: 5,
  int32: 0,
  uint32: 0,
  sint32: 0,
  fixed32: 5,
  sfixed32: 5,
  int64: 0,
  uint64: 0,
  sint64: 0,
  fixed64: 1,
  sfixed64: 1,
};

/** The number of TYPE's field NAME; throws when the descriptor has no such field. */
export function fieldNumber(type: protobuf.Type | undefined, name: string): number {
  const f = type?.fields[name];
  if (f === undefined) throw new Error(`protobuf descriptor: ${type?.name ?? '?'} has no field ${name}`);
  return f.id;
}

/** The message type of FIELD; undefined for scalars and enums. */
export function messageTypeOf(field: protobuf.Field | undefined): protobuf.Type | undefined {
  const t = field?.resolvedType;
  return t instanceof protobufModule().Type ? t : undefined;
}
