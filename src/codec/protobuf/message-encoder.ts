import type protobuf from 'protobufjs';
import type { Obj } from '../../api/object-util.js';
import type { FieldPlan, MessagePlan, ValuePlan } from './message-plan.js';
import { durationForWire, parseTimestamp } from './wire-time.js';
import type { WireWriter } from './wire-writer.js';
import { isObject } from '../../api/values.js';
import { fieldNumber, messageTypeOf } from './wire-types.js';

/**
 * kube's JSON form straight to protobuf bytes: each message plan is compiled once into its fields in
 * field-number order with their tags precomputed, and a JSON object is then written field by field
 * into one WireWriter, with no proto-shaped copy of the object in between.
 *
 * What is written is what the JSON holds (as protobufjs wrote the proto-shaped objects before, byte
 * for byte): absent and null members stay absent on the wire (Go reads them as zero), members whose
 * JSON type does not fit the field are skipped, present zero values are written.
 */

const enum K {
  String,
  Bool,
  Bytes,
  Double,
  Float,
  Int32,
  Uint32,
  Sint32,
  Fixed32,
  Int64,
  Sint64,
  Fixed64,
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

/** How one value (a singular field, a list element, a map value) is written; the same shape for every kind. */
interface CompiledValue {
  k: K;
  /** Tags inside the value's own message (Time, IntOrString, the schema unions, a wrapped list). */
  t1: number;
  t2: number;
  t3: number;
  /** The list element of a wrapped list. */
  item: CompiledValue | undefined;
  /** The message of a Message value or the JSONSchemaProps of the schema unions. */
  message: (() => CompiledMessage) | undefined;
}

const enum F {
  Single,
  Repeated,
  Packed,
  Map,
  Inline,
}

interface CompiledField {
  f: F;
  jsonName: string;
  tag: number;
  value: CompiledValue;
  inline: CompiledMessage | undefined;
}

/** A message plan compiled for writing. */
export interface CompiledMessage {
  fields: CompiledField[];
}

const compiled = new WeakMap<MessagePlan, CompiledMessage>();

function tagOf(id: number, wireType: number): number {
  return ((id << 3) | wireType) >>> 0;
}

const SCALARS: Record<string, K> = {
  string: K.String,
  bytes: K.Bytes,
  bool: K.Bool,
  double: K.Double,
  float: K.Float,
  int32: K.Int32,
  uint32: K.Uint32,
  sint32: K.Sint32,
  fixed32: K.Fixed32,
  sfixed32: K.Fixed32,
  int64: K.Int64,
  uint64: K.Int64,
  sint64: K.Sint64,
  fixed64: K.Fixed64,
  sfixed64: K.Fixed64,
};

function value(k: K, t1 = 0, t2 = 0, t3 = 0, item?: CompiledValue, message?: () => CompiledMessage): CompiledValue {
  return { k, t1, t2, t3, item, message };
}

function lazy(get: () => MessagePlan): () => CompiledMessage {
  let c: CompiledMessage | undefined;
  return () => (c ??= compileMessage(get()));
}

/** The compiled VALUE of a field whose (element) wire type is WIRE (a message type) or the scalar SCALAR. */
function compileValue(plan: ValuePlan, wire: protobuf.Type | undefined): CompiledValue {
  switch (plan.kind) {
    case 'scalar': {
      const k = SCALARS[plan.type];
      if (k === undefined) throw new Error(`protobuf descriptor: unsupported scalar type ${plan.type}`);
      return value(k);
    }
    case 'time':
      return value(K.Time, tagOf(fieldNumber(wire, 'seconds'), 0), tagOf(fieldNumber(wire, 'nanos'), 0));
    case 'duration':
      return value(K.Duration, tagOf(fieldNumber(wire, 'duration'), 0));
    case 'quantity':
      return value(K.Quantity, tagOf(fieldNumber(wire, 'string'), 2));
    case 'intOrString':
      return value(K.IntOrString, tagOf(fieldNumber(wire, 'type'), 0), tagOf(fieldNumber(wire, 'intVal'), 0), tagOf(fieldNumber(wire, 'strVal'), 2));
    case 'rawJson':
      return value(K.RawJson, tagOf(fieldNumber(wire, plan.field), 2));
    case 'wrappedList': {
      const inner = wire?.fields[plan.field];
      if (inner === undefined) throw new Error(`protobuf descriptor: ${wire?.name ?? '?'} has no field ${plan.field}`);
      const innerType = messageTypeOf(inner);
      const item = compileValue(plan.item, innerType);
      return value(K.WrappedList, tagOf(inner.id, wireTypeOf(item)), 0, 0, item);
    }
    case 'schemaOrArray':
      return value(K.SchemaOrArray, tagOf(fieldNumber(wire, 'schema'), 2), tagOf(fieldNumber(wire, 'jSONSchemas'), 2), 0, undefined, lazy(plan.schema));
    case 'schemaOrBool':
      return value(K.SchemaOrBool, tagOf(fieldNumber(wire, 'allows'), 0), tagOf(fieldNumber(wire, 'schema'), 2), 0, undefined, lazy(plan.schema));
    case 'schemaOrStringArray':
      return value(K.SchemaOrStringArray, tagOf(fieldNumber(wire, 'schema'), 2), tagOf(fieldNumber(wire, 'property'), 2), 0, undefined, lazy(plan.schema));
    case 'message':
      return value(K.Message, 0, 0, 0, undefined, lazy(plan.plan));
  }
}

/** The wire type a value of V is written with. */
function wireTypeOf(v: CompiledValue): number {
  switch (v.k) {
    case K.Bool:
    case K.Int32:
    case K.Uint32:
    case K.Sint32:
    case K.Int64:
    case K.Sint64:
      return 0;
    case K.Double:
    case K.Fixed64:
      return 1;
    case K.Float:
    case K.Fixed32:
      return 5;
    default:
      return 2;
  }
}

function compileField(plan: FieldPlan, field: protobuf.Field): CompiledField {
  const wire = messageTypeOf(field);
  const v = compileValue(plan.value, wire);
  if (plan.inline) return { f: F.Inline, jsonName: plan.jsonName, tag: tagOf(field.id, 2), value: v, inline: compileMessage(plan.inline) };
  if (plan.map) return { f: F.Map, jsonName: plan.jsonName, tag: tagOf(field.id, 2), value: v, inline: undefined };
  const wt = wireTypeOf(v);
  if (plan.repeated) {
    const packed = field.packed && wt !== 2;
    return { f: packed ? F.Packed : F.Repeated, jsonName: plan.jsonName, tag: tagOf(field.id, packed ? 2 : wt), value: v, inline: undefined };
  }
  return { f: F.Single, jsonName: plan.jsonName, tag: tagOf(field.id, wt), value: v, inline: undefined };
}

/** The compiled form of PLAN, built once per plan. */
export function compileMessage(plan: MessagePlan): CompiledMessage {
  let c = compiled.get(plan);
  if (c !== undefined) return c;
  c = { fields: [] };
  // Registered before its fields are compiled so that recursive messages terminate.
  compiled.set(plan, c);
  const byName = plan.type.fields;
  const ordered: { id: number; field: CompiledField }[] = [];
  for (const fp of plan.fields) {
    const field = byName[fp.protoName];
    if (field !== undefined) ordered.push({ id: field.id, field: compileField(fp, field) });
  }
  // Known fields are written in field-number order, as protobuf encoders do.
  ordered.sort((a, b) => a.id - b.id);
  c.fields = ordered.map((o) => o.field);
  return c;
}

/**
 * Writes the fields of OBJ under message M (without tag or length). Returns true when some field
 * had a value of a fitting JSON type (an inline struct with none is not written at all).
 */
export function writeMessage(w: WireWriter, m: CompiledMessage, obj: Obj): boolean {
  let any = false;
  const fields = m.fields;
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i];
    if (field === undefined) continue;
    if (field.f === F.Inline) {
      const inline = field.inline;
      if (inline === undefined) continue;
      const at = w.here();
      w.uint32(field.tag);
      const len = w.begin();
      if (writeMessage(w, inline, obj)) {
        w.end(len);
        any = true;
      } else w.rewind(at);
      continue;
    }
    const v = obj[field.jsonName];
    if (v === undefined || v === null) continue;
    switch (field.f) {
      case F.Single:
        if (writeValue(w, field.value, field.tag, v)) any = true;
        break;
      case F.Repeated:
        if (Array.isArray(v)) {
          any = true;
          for (let j = 0; j < v.length; j++) {
            const e: unknown = v[j];
            if (e !== null && e !== undefined) writeValue(w, field.value, field.tag, e);
          }
        }
        break;
      case F.Packed:
        if (Array.isArray(v)) {
          any = true;
          writePacked(w, field, v);
        }
        break;
      case F.Map:
        if (isObject(v)) {
          any = true;
          writeMap(w, field, v);
        }
        break;
      default:
        break;
    }
  }
  return any;
}

function writePacked(w: WireWriter, field: CompiledField, list: unknown[]): void {
  const at = w.here();
  w.uint32(field.tag);
  const len = w.begin();
  let n = 0;
  for (const e of list) if (e !== null && e !== undefined && writeScalar(w, field.value.k, e)) n++;
  if (n > 0) w.end(len);
  else w.rewind(at);
}

function writeMap(w: WireWriter, field: CompiledField, map: Obj): void {
  const vt = tagOf(2, wireTypeOf(field.value));
  for (const key in map) {
    if (!Object.prototype.hasOwnProperty.call(map, key)) continue;
    const e = map[key];
    if (e === null || e === undefined) continue;
    const at = w.here();
    w.uint32(field.tag);
    const len = w.begin();
    w.byte(0x0a);
    w.string(key);
    if (writeValue(w, field.value, vt, e)) w.end(len);
    else w.rewind(at);
  }
}

/** Writes V's scalar payload (no tag); false, writing nothing, when its JSON type does not fit. */
function writeScalar(w: WireWriter, k: K, v: unknown): boolean {
  switch (k) {
    case K.String:
      if (typeof v !== 'string') return false;
      w.string(v);
      return true;
    case K.Bool:
      if (typeof v !== 'boolean') return false;
      w.byte(v ? 1 : 0);
      return true;
    case K.Bytes:
      if (typeof v !== 'string') return false;
      w.bytes(Buffer.from(v, 'base64'));
      return true;
    case K.Double:
    case K.Float:
      if (typeof v !== 'number') return false;
      if (k === K.Double) w.double(v);
      else w.float(v);
      return true;
    default:
      break;
  }
  if (typeof v !== 'number' || !Number.isFinite(v)) return false;
  const n = Math.trunc(v);
  switch (k) {
    case K.Int32:
      w.int32(n);
      return true;
    case K.Uint32:
      w.uint32(n);
      return true;
    case K.Sint32:
      w.sint32(n);
      return true;
    case K.Fixed32:
      w.fixed32(n);
      return true;
    case K.Int64:
      w.int64(n);
      return true;
    case K.Sint64:
      w.sint64(n);
      return true;
    case K.Fixed64:
      w.fixed64(n);
      return true;
    default:
      return false;
  }
}

/** Writes TAG and the value V under C; false, writing nothing, when V's JSON type does not fit. */
function writeValue(w: WireWriter, c: CompiledValue, tag: number, v: unknown): boolean {
  switch (c.k) {
    case K.Time: {
      if (typeof v !== 'string') return false;
      const t = parseTimestamp(v);
      if (t === undefined) return false;
      w.uint32(tag);
      const len = w.begin();
      w.uint32(c.t1);
      w.int64(t.seconds);
      w.uint32(c.t2);
      w.int32(t.nanos);
      w.end(len);
      return true;
    }
    case K.Duration: {
      const ns = typeof v === 'string' ? durationForWire(v) : undefined;
      if (ns === undefined) return false;
      w.uint32(tag);
      const len = w.begin();
      w.uint32(c.t1);
      w.int64(ns);
      w.end(len);
      return true;
    }
    case K.Quantity: {
      if (typeof v !== 'string' && typeof v !== 'number') return false;
      w.uint32(tag);
      const len = w.begin();
      w.uint32(c.t1);
      w.string(String(v));
      w.end(len);
      return true;
    }
    case K.IntOrString: {
      if (typeof v !== 'number' && typeof v !== 'string') return false;
      w.uint32(tag);
      const len = w.begin();
      w.uint32(c.t1);
      if (typeof v === 'number') {
        w.byte(0);
        w.uint32(c.t2);
        w.int32(Math.trunc(v));
      } else {
        w.byte(1);
        w.uint32(c.t3);
        w.string(v);
      }
      w.end(len);
      return true;
    }
    case K.RawJson: {
      w.uint32(tag);
      const len = w.begin();
      w.uint32(c.t1);
      // The bytes field holds the JSON text's UTF-8, which is how a string is written: no Buffer in between.
      w.string(JSON.stringify(v));
      w.end(len);
      return true;
    }
    case K.WrappedList: {
      const item = c.item;
      if (!Array.isArray(v) || item === undefined) return false;
      w.uint32(tag);
      const len = w.begin();
      for (const e of v) if (e !== null && e !== undefined) writeValue(w, item, c.t1, e);
      w.end(len);
      return true;
    }
    case K.SchemaOrArray:
      return writeSchemaOrArray(w, c, tag, v);
    case K.SchemaOrBool:
      return writeSchemaOrBool(w, c, tag, v);
    case K.SchemaOrStringArray:
      return writeSchemaOrStringArray(w, c, tag, v);
    case K.Message: {
      if (!isObject(v) || c.message === undefined) return false;
      w.uint32(tag);
      const len = w.begin();
      writeMessage(w, c.message(), v);
      w.end(len);
      return true;
    }
    default: {
      const at = w.here();
      w.uint32(tag);
      if (writeScalar(w, c.k, v)) return true;
      w.rewind(at);
      return false;
    }
  }
}

/** A nested JSONSchemaProps under TAG. */
function writeSchema(w: WireWriter, c: CompiledValue, tag: number, v: Obj): void {
  if (c.message === undefined) return;
  w.uint32(tag);
  const len = w.begin();
  writeMessage(w, c.message(), v);
  w.end(len);
}

function writeSchemaOrArray(w: WireWriter, c: CompiledValue, tag: number, v: unknown): boolean {
  if (!Array.isArray(v) && !isObject(v)) return false;
  w.uint32(tag);
  const len = w.begin();
  if (Array.isArray(v)) {
    for (const e of v) if (isObject(e)) writeSchema(w, c, c.t2, e);
  } else writeSchema(w, c, c.t1, v);
  w.end(len);
  return true;
}

function writeSchemaOrBool(w: WireWriter, c: CompiledValue, tag: number, v: unknown): boolean {
  if (typeof v !== 'boolean' && !isObject(v)) return false;
  w.uint32(tag);
  const len = w.begin();
  w.uint32(c.t1);
  if (typeof v === 'boolean') w.byte(v ? 1 : 0);
  else {
    w.byte(1);
    writeSchema(w, c, c.t2, v);
  }
  w.end(len);
  return true;
}

function writeSchemaOrStringArray(w: WireWriter, c: CompiledValue, tag: number, v: unknown): boolean {
  if (!Array.isArray(v) && !isObject(v)) return false;
  w.uint32(tag);
  const len = w.begin();
  if (Array.isArray(v)) {
    for (const e of v) {
      if (typeof e !== 'string') continue;
      w.uint32(c.t2);
      w.string(e);
    }
  } else writeSchema(w, c, c.t1, v);
  w.end(len);
  return true;
}

/** Writes TAG and OBJ as a nested message of PLAN; false, writing nothing, when OBJ is not an object. */
export function writeNestedMessage(w: WireWriter, plan: CompiledMessage, tag: number, obj: unknown): boolean {
  if (!isObject(obj)) return false;
  w.uint32(tag);
  const len = w.begin();
  writeMessage(w, plan, obj);
  w.end(len);
  return true;
}
