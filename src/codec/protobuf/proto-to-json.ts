import type protobuf from 'protobufjs';
import { badRequest } from '../../api/errors.js';
import { DEFAULT_LIMITS } from '../../api/limits.js';
import { ForbiddenKeyError, JsonSyntaxError, readJson } from '../json-text.js';
import { formatDuration, formatTimestamp } from './wire-time.js';
import { WireFormatError, WireReader } from './wire-reader.js';
import type { FieldPlan, MessagePlan, ValuePlan } from './message-plan.js';
import type { Obj } from '../../api/object-util.js';
import { fieldNumber, messageTypeOf, SCALAR_WIRE_TYPE } from './wire-types.js';

/**
 * Protobuf wire bytes straight to kube's JSON form, mimicking Go's JSON encoder: a zero value read
 * from the wire is dropped unless the Go field is a pointer, has no `omitempty`, or is `required`;
 * the zero Time is dropped (Go writes `null`); lists and maps keep every element. Members come out
 * in the message's declaration order (Go's struct order) whatever the order on the wire.
 *
 * Each message plan is compiled once into a table from field number to field; a message is read
 * into one slot per field (as in Go, a singular scalar's last occurrence wins, a singular message's
 * occurrences merge, repeated and map fields accumulate) and then written out, with no
 * intermediate message objects.
 */

/** Raised for bytes that decode as protobuf but not as the expected content (bad embedded JSON). */
export class ProtobufContentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtobufContentError';
  }
}

/** Decodes an embedded protobuf envelope found inside a RawExtension (watch events, admission reviews). */
export type EmbeddedDecoder = (bytes: Uint8Array) => Obj | undefined;

let embedded: EmbeddedDecoder | undefined;

/** Installs the decoder for RawExtension bytes that carry the protobuf magic prefix. */
export function setEmbeddedDecoder(decoder: EmbeddedDecoder): void {
  embedded = decoder;
}

/** Nested messages deeper than this are refused, as JSON bodies nested deeper are. */
const MAX_DEPTH = DEFAULT_LIMITS.maxNestingDepth;

const enum V {
  String,
  Bytes,
  Bool,
  Double,
  Float,
  Int32,
  Uint32,
  Sint32,
  Fixed32,
  Sfixed32,
  Int64,
  Uint64,
  Sint64,
  Fixed64,
  Sfixed64,
  Time,
  Duration,
  Quantity,
  IntOrString,
  RawJson,
  WrappedList,
  SchemaOrArray,
  SchemaOrBool,
  SchemaOrStringArray,
  Message,
}

/** How one value (a singular field, a list element, a map value) is read. */
interface ValueReader {
  v: V;
  /** The wire type a value of this kind is written with. */
  wire: number;
  /** Field numbers inside the value's own message (Time: seconds, nanos; IntOrString: type, intVal, strVal; ...). */
  n1: number;
  n2: number;
  n3: number;
  fraction: 0 | 6;
  /** A wrapped list's element. */
  item: ValueReader | undefined;
  /** A message value's decoder, or the JSONSchemaProps of the schema unions. */
  message: (() => MessageReader) | undefined;
}

const enum F {
  Single,
  /** A singular message field: its occurrences merge, as Go merges them. */
  Message,
  Repeated,
  Map,
  Inline,
}

interface FieldReader {
  f: F;
  /** Position among the message's fields in declaration order (its slot). */
  slot: number;
  jsonName: string;
  value: ValueReader;
  /** Packed repeated elements are accepted for scalars of wire type 0, 1 and 5. */
  packable: boolean;
  /** A map's key type and its wire type. */
  key: V;
  keyWire: number;
  /** Kept in JSON even when zero (pointer, not `omitempty`, or required). */
  keepsZero: boolean;
  /** The message of an inline struct or of a singular message field. */
  inline: (() => MessageReader) | undefined;
}

interface MessageReader {
  /** In declaration order. */
  fields: FieldReader[];
  /** By field number. */
  byNumber: (FieldReader | undefined)[];
}

const SCALARS: Record<string, V> = {
  string: V.String,
  bytes: V.Bytes,
  bool: V.Bool,
  double: V.Double,
  float: V.Float,
  int32: V.Int32,
  uint32: V.Uint32,
  sint32: V.Sint32,
  fixed32: V.Fixed32,
  sfixed32: V.Sfixed32,
  int64: V.Int64,
  uint64: V.Uint64,
  sint64: V.Sint64,
  fixed64: V.Fixed64,
  sfixed64: V.Sfixed64,
};

const readers = new WeakMap<MessagePlan, MessageReader>();

function valueReader(v: V, wire: number, n1 = 0, n2 = 0, n3 = 0, more: Partial<ValueReader> = {}): ValueReader {
  return { v, wire, n1, n2, n3, fraction: 0, item: undefined, message: undefined, ...more };
}

function lazy(get: () => MessagePlan): () => MessageReader {
  let r: MessageReader | undefined;
  return () => (r ??= compileReader(get()));
}

/** The reader of a value planned as PLAN whose message type (for message values) is TYPE. */
function compileValue(plan: ValuePlan, type: protobuf.Type | undefined): ValueReader {
  switch (plan.kind) {
    case 'scalar': {
      const v = SCALARS[plan.type];
      const wire = SCALAR_WIRE_TYPE[plan.type];
      if (v === undefined || wire === undefined) throw new Error(`protobuf descriptor: unsupported scalar type ${plan.type}`);
      return valueReader(v, wire);
    }
    case 'time':
      return valueReader(V.Time, 2, fieldNumber(type, 'seconds'), fieldNumber(type, 'nanos'), 0, { fraction: plan.fraction });
    case 'duration':
      return valueReader(V.Duration, 2, fieldNumber(type, 'duration'));
    case 'quantity':
      return valueReader(V.Quantity, 2, fieldNumber(type, 'string'));
    case 'intOrString':
      return valueReader(V.IntOrString, 2, fieldNumber(type, 'type'), fieldNumber(type, 'intVal'), fieldNumber(type, 'strVal'));
    case 'rawJson':
      return valueReader(V.RawJson, 2, fieldNumber(type, plan.field));
    case 'wrappedList': {
      const inner = type?.fields[plan.field];
      return valueReader(V.WrappedList, 2, fieldNumber(type, plan.field), 0, 0, { item: compileValue(plan.item, messageTypeOf(inner)) });
    }
    case 'schemaOrArray':
      return valueReader(V.SchemaOrArray, 2, fieldNumber(type, 'schema'), fieldNumber(type, 'jSONSchemas'), 0, { message: lazy(plan.schema) });
    case 'schemaOrBool':
      return valueReader(V.SchemaOrBool, 2, fieldNumber(type, 'allows'), fieldNumber(type, 'schema'), 0, { message: lazy(plan.schema) });
    case 'schemaOrStringArray':
      return valueReader(V.SchemaOrStringArray, 2, fieldNumber(type, 'schema'), fieldNumber(type, 'property'), 0, { message: lazy(plan.schema) });
    case 'message':
      return valueReader(V.Message, 2, 0, 0, 0, { message: lazy(plan.plan) });
  }
}

function keepsZero(field: FieldPlan): boolean {
  return field.presence === 'pointer' || field.presence === 'always' || field.required;
}

function compileField(plan: FieldPlan, field: protobuf.Field, slot: number): FieldReader {
  const value = compileValue(plan.value, messageTypeOf(field));
  const inlinePlan = plan.inline;
  const f = inlinePlan !== undefined ? F.Inline : plan.map ? F.Map : plan.repeated ? F.Repeated : value.v === V.Message ? F.Message : F.Single;
  const keyType = (field as protobuf.Field & { keyType?: string }).keyType;
  return {
    f,
    slot,
    jsonName: plan.jsonName,
    value,
    packable: value.wire !== 2,
    key: keyType === undefined ? V.String : (SCALARS[keyType] ?? V.String),
    keyWire: keyType === undefined ? 2 : (SCALAR_WIRE_TYPE[keyType] ?? 2),
    keepsZero: keepsZero(plan),
    inline: inlinePlan !== undefined ? lazy(() => inlinePlan) : f === F.Message ? value.message : undefined,
  };
}

/** The reader of PLAN, compiled once per plan. */
export function compileReader(plan: MessagePlan): MessageReader {
  let r = readers.get(plan);
  if (r !== undefined) return r;
  r = { fields: [], byNumber: [] };
  // Registered before its fields are compiled so that recursive messages terminate.
  readers.set(plan, r);
  const byName = plan.type.fields;
  for (const fp of plan.fields) {
    const field = byName[fp.protoName];
    if (field === undefined) continue;
    const fr = compileField(fp, field, r.fields.length);
    r.fields.push(fr);
    r.byNumber[field.id] = fr;
  }
  return r;
}

function rawJson(bytes: Buffer): unknown {
  if (bytes.length === 0) return undefined;
  if (bytes.length >= 4 && bytes[0] === 0x6b && bytes[1] === 0x38 && bytes[2] === 0x73 && bytes[3] === 0x00 && embedded) {
    return embedded(bytes);
  }
  try {
    return readJson(bytes.toString('utf8'), { maxDepth: MAX_DEPTH }).value;
  } catch (err) {
    if (err instanceof JsonSyntaxError) throw new ProtobufContentError(`embedded raw data is not valid JSON: ${err.message}`);
    if (err instanceof ForbiddenKeyError) throw badRequest(err.message);
    throw err;
  }
}

function expectWire(r: WireReader, wt: number, wanted: number): void {
  if (wt !== wanted) throw new WireFormatError(`illegal wireType ${wt}`);
}

/** A scalar of kind V whose wire type the caller checked. */
function readScalar(r: WireReader, v: V): unknown {
  switch (v) {
    case V.String:
      return r.string();
    case V.Bytes:
      return r.bytes().toString('base64');
    case V.Bool:
      r.varint64();
      return r.lo !== 0 || r.hi !== 0;
    case V.Double:
      return r.double();
    case V.Float:
      return r.float();
    case V.Int32:
      r.varint64();
      return r.lo | 0;
    case V.Uint32:
      return r.uint32();
    case V.Sint32: {
      const n = r.uint32();
      return (n >>> 1) ^ -(n & 1);
    }
    case V.Fixed32:
      return r.fixed32();
    case V.Sfixed32:
      return r.fixed32() | 0;
    case V.Int64:
      r.varint64();
      return r.signed64();
    case V.Uint64:
      r.varint64();
      return r.unsigned64();
    case V.Sint64: {
      r.varint64();
      const n = r.bigint64();
      return Number((BigInt.asUintN(64, n) >> 1n) ^ -(BigInt.asUintN(64, n) & 1n));
    }
    case V.Fixed64:
      r.fixed64();
      return r.unsigned64();
    case V.Sfixed64:
      r.fixed64();
      return r.signed64();
    default:
      throw new Error(`not a scalar: ${v}`);
  }
}

/** The JSON of a value absent from a map entry (Go's zero value of the map's value type). */
function absentValue(value: ValueReader): unknown {
  switch (value.v) {
    case V.String:
    case V.Bytes:
    case V.Quantity:
      return '';
    case V.Bool:
      return false;
    case V.WrappedList:
      return [];
    case V.Message:
      return {};
    case V.Time:
    case V.Duration:
    case V.RawJson:
    case V.SchemaOrArray:
    case V.SchemaOrBool:
    case V.SchemaOrStringArray:
      return null;
    default:
      return 0;
  }
}

/**
 * One value of VALUE at the reader (its wire type WT checked here); undefined when Go's JSON would
 * write null (the zero Time, an empty raw extension, an empty schema union).
 */
function readValue(r: WireReader, wt: number, value: ValueReader, depth: number): unknown {
  expectWire(r, wt, value.wire);
  if (value.v <= V.Sfixed64) return readScalar(r, value.v);
  const end = r.delimited();
  if (depth >= MAX_DEPTH) throw new WireFormatError('exceeded maximum recursion depth');
  let out: unknown;
  switch (value.v) {
    case V.Message:
      out = readMessage(r, end, value.message!(), depth + 1);
      break;
    case V.Time:
      out = readTime(r, end, value);
      break;
    case V.Duration: {
      let ns = 0n;
      while (r.pos < end) {
        const tag = r.tag();
        if (tag >>> 3 === value.n1 && (tag & 7) === 0) {
          r.varint64();
          ns = r.bigint64();
        } else r.skip(tag);
      }
      out = formatDuration(ns);
      break;
    }
    case V.Quantity: {
      let s = '';
      while (r.pos < end) {
        const tag = r.tag();
        if (tag >>> 3 === value.n1 && (tag & 7) === 2) s = r.string();
        else r.skip(tag);
      }
      out = s;
      break;
    }
    case V.IntOrString:
      out = readIntOrString(r, end, value);
      break;
    case V.RawJson: {
      let raw: Buffer | undefined;
      while (r.pos < end) {
        const tag = r.tag();
        if (tag >>> 3 === value.n1 && (tag & 7) === 2) raw = r.bytes();
        else r.skip(tag);
      }
      out = raw === undefined ? undefined : rawJson(raw);
      break;
    }
    case V.WrappedList: {
      const items: unknown[] = [];
      const item = value.item!;
      while (r.pos < end) {
        const tag = r.tag();
        if (tag >>> 3 === value.n1) readRepeated(r, tag & 7, item, item.wire !== 2, items, depth + 1);
        else r.skip(tag);
      }
      out = items;
      break;
    }
    default:
      out = readSchemaUnion(r, end, value, depth + 1);
  }
  if (r.pos !== end) throw new WireFormatError('unexpected EOF');
  return out;
}

function readTime(r: WireReader, end: number, value: ValueReader): string | undefined {
  let seconds = 0;
  let nanos = 0;
  while (r.pos < end) {
    const tag = r.tag();
    const n = tag >>> 3;
    if (n === value.n1 && (tag & 7) === 0) {
      r.varint64();
      seconds = r.signed64();
    } else if (n === value.n2 && (tag & 7) === 0) {
      r.varint64();
      nanos = r.lo | 0;
    } else r.skip(tag);
  }
  return formatTimestamp(seconds, nanos, value.fraction);
}

function readIntOrString(r: WireReader, end: number, value: ValueReader): string | number {
  let type = 0;
  let intVal = 0;
  let strVal = '';
  while (r.pos < end) {
    const tag = r.tag();
    const n = tag >>> 3;
    const wt = tag & 7;
    if (n === value.n1 && wt === 0) {
      r.varint64();
      type = r.signed64();
    } else if (n === value.n2 && wt === 0) {
      r.varint64();
      intVal = r.lo | 0;
    } else if (n === value.n3 && wt === 2) strVal = r.string();
    else r.skip(tag);
  }
  return type === 1 ? strVal : intVal;
}

/** JSONSchemaPropsOrArray, OrBool and OrStringArray: the one of their forms the wire holds. */
function readSchemaUnion(r: WireReader, end: number, value: ValueReader, depth: number): unknown {
  const props = value.message!();
  let schema: Obj | undefined;
  let allows = false;
  const list: unknown[] = [];
  // n1/n2: schema and jSONSchemas (OrArray), allows and schema (OrBool), schema and property (OrStringArray).
  const schemaNumber = value.v === V.SchemaOrBool ? value.n2 : value.n1;
  while (r.pos < end) {
    const tag = r.tag();
    const n = tag >>> 3;
    const wt = tag & 7;
    if (n === schemaNumber && wt === 2) schema = readMessage(r, r.delimited(), props, depth);
    else if (value.v === V.SchemaOrBool && n === value.n1 && wt === 0) {
      r.varint64();
      allows = r.lo !== 0 || r.hi !== 0;
    } else if (value.v === V.SchemaOrArray && n === value.n2 && wt === 2) list.push(readMessage(r, r.delimited(), props, depth));
    else if (value.v === V.SchemaOrStringArray && n === value.n2 && wt === 2) list.push(r.string());
    else r.skip(tag);
  }
  if (value.v === V.SchemaOrBool) return schema ?? allows;
  return list.length > 0 ? list : schema;
}

/** Appends one occurrence of a repeated field to LIST: one element, or several packed ones. */
function readRepeated(r: WireReader, wt: number, value: ValueReader, packable: boolean, list: unknown[], depth: number): void {
  if (packable && wt === 2) {
    const end = r.delimited();
    while (r.pos < end) list.push(readScalar(r, value.v));
    if (r.pos !== end) throw new WireFormatError('unexpected EOF');
    return;
  }
  list.push(readValue(r, wt, value, depth) ?? null);
}

function readMapEntry(r: WireReader, wt: number, field: FieldReader, map: Obj, depth: number): void {
  expectWire(r, wt, 2);
  const end = r.delimited();
  let key: unknown = field.key === V.String ? '' : 0;
  let value: unknown;
  let hasValue = false;
  while (r.pos < end) {
    const tag = r.tag();
    const n = tag >>> 3;
    const t = tag & 7;
    if (n === 1) {
      expectWire(r, t, field.keyWire);
      key = readScalar(r, field.key);
    } else if (n === 2) {
      value = readValue(r, t, field.value, depth);
      hasValue = true;
    } else r.skip(tag);
  }
  if (r.pos !== end) throw new WireFormatError('unexpected EOF');
  const k = String(key);
  // Same rule as JSON bodies; assigning `__proto__` would also silently drop the entry.
  if (k === '__proto__' || k === 'constructor' || k === 'prototype') throw badRequest(`invalid field name "${k}"`);
  map[k] = (hasValue ? value : absentValue(field.value)) ?? null;
}

/** Reads the fields of message M from the reader up to END into one slot per field (of INTO, when given: a repeated occurrence of the message merges into it). */
function readSlots(r: WireReader, end: number, m: MessageReader, depth: number, into?: unknown[]): unknown[] {
  const slots: unknown[] = into ?? new Array(m.fields.length);
  const byNumber = m.byNumber;
  while (r.pos < end) {
    const tag = r.tag();
    const wt = tag & 7;
    const field = byNumber[tag >>> 3];
    if (field === undefined) {
      r.skip(tag);
      continue;
    }
    switch (field.f) {
      case F.Single:
        // The last occurrence wins; undefined (Go's null) is written as absence is: not at all.
        slots[field.slot] = readValue(r, wt, field.value, depth);
        break;
      case F.Repeated: {
        let list = slots[field.slot] as unknown[] | undefined;
        if (list === undefined) slots[field.slot] = list = [];
        readRepeated(r, wt, field.value, field.packable, list, depth);
        break;
      }
      case F.Map: {
        let map = slots[field.slot] as Obj | undefined;
        if (map === undefined) slots[field.slot] = map = {};
        readMapEntry(r, wt, field, map, depth);
        break;
      }
      case F.Message:
      case F.Inline: {
        expectWire(r, wt, 2);
        if (depth >= MAX_DEPTH) throw new WireFormatError('exceeded maximum recursion depth');
        const inner = r.delimited();
        // A second occurrence merges into the first.
        slots[field.slot] = readSlots(r, inner, field.inline!(), depth + 1, slots[field.slot] as unknown[] | undefined);
        break;
      }
    }
  }
  if (r.pos !== end) throw new WireFormatError('unexpected EOF');
  return slots;
}

function isEmpty(v: unknown): boolean {
  if (v === '' || v === 0 || v === false) return true;
  if (typeof v !== 'object' || v === null) return false;
  if (Array.isArray(v)) return v.length === 0;
  return Object.keys(v).length === 0;
}

/** Writes the members of message M's SLOTS into OUT in declaration order (inline structs into OUT too). */
function writeSlots(m: MessageReader, slots: unknown[], out: Obj): void {
  const fields = m.fields;
  for (let i = 0; i < fields.length; i++) {
    const s = slots[i];
    if (s === undefined) continue;
    const field = fields[i];
    switch (field.f) {
      case F.Inline:
        writeSlots(field.inline!(), s as unknown[], out);
        break;
      case F.Repeated:
        if ((s as unknown[]).length > 0) out[field.jsonName] = s;
        break;
      case F.Map:
        if (!isEmpty(s)) out[field.jsonName] = s;
        break;
      case F.Single:
        if (field.keepsZero || !isEmpty(s)) out[field.jsonName] = s;
        break;
      case F.Message: {
        const o: Obj = {};
        writeSlots(field.inline!(), s as unknown[], o);
        if (field.keepsZero || !isEmpty(o)) out[field.jsonName] = o;
        break;
      }
    }
  }
}

function readMessage(r: WireReader, end: number, m: MessageReader, depth: number): Obj {
  const out: Obj = {};
  writeSlots(m, readSlots(r, end, m, depth), out);
  return out;
}

/**
 * Decodes message bytes BODY (without envelope) of the message PLAN describes into kube's JSON form,
 * adding its members to OUT. Throws WireFormatError for malformed bytes, ProtobufContentError for
 * embedded JSON that does not parse, ApiError 400 for forbidden map keys.
 */
export function messageToJson(plan: MessagePlan, body: Uint8Array, out: Obj = {}): Obj {
  const buf = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.length);
  const r = new WireReader(buf, 0, buf.length);
  const m = compileReader(plan);
  writeSlots(m, readSlots(r, buf.length, m, 0), out);
  return out;
}
