import { badRequest } from '../../api/errors.js';
import { DEFAULT_LIMITS } from '../../api/limits.js';
import { ForbiddenKeyError, JsonSyntaxError, readJson } from '../json-text.js';
import { formatDuration, formatTimestamp } from './wire-time.js';
import { int64ToNumber } from './wire-int64.js';
import type { FieldPlan, MessagePlan, ValuePlan } from './message-plan.js';
import type { Obj } from '../../api/object-util.js';

/**
 * Decoded protobufjs messages -> kube's JSON form, mimicking Go's JSON encoder: a zero value read from
 * the wire is dropped unless the Go field is a pointer, has no `omitempty`, or is `required`; the zero
 * Time is dropped (Go writes `null`); lists and maps keep every element.
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

// A decoded message field: bytes fields decode as Uint8Array, which is an object but not a message.
function isMessageObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

const INT64 = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

function isEmpty(v: unknown): boolean {
  if (v === '' || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isMessageObject(v)) return Object.keys(v).length === 0;
  return false;
}

function rawJson(bytes: unknown): unknown {
  if (!(bytes instanceof Uint8Array) || bytes.length === 0) return undefined;
  if (bytes.length >= 4 && bytes[0] === 0x6b && bytes[1] === 0x38 && bytes[2] === 0x73 && bytes[3] === 0x00 && embedded) {
    return embedded(bytes);
  }
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8');
  try {
    return readJson(text, { maxDepth: DEFAULT_LIMITS.maxNestingDepth }).value;
  } catch (err) {
    if (err instanceof JsonSyntaxError) throw new ProtobufContentError(`embedded raw data is not valid JSON: ${err.message}`);
    if (err instanceof ForbiddenKeyError) throw badRequest(err.message);
    throw err;
  }
}

/** The JSON form of one wire value; undefined when Go's JSON would write null (zero Time, empty raw). */
function valueToJson(plan: ValuePlan, v: unknown): unknown {
  switch (plan.kind) {
    case 'scalar':
      if (plan.type === 'bytes') {
        return v instanceof Uint8Array ? Buffer.from(v.buffer, v.byteOffset, v.length).toString('base64') : '';
      }
      if (INT64.has(plan.type)) return int64ToNumber(v);
      return v;
    case 'time':
      return isMessageObject(v) ? formatTimestamp(v.seconds, v.nanos, plan.fraction) : undefined;
    case 'duration':
      return isMessageObject(v) ? formatDuration(v.duration) : undefined;
    case 'quantity':
      return isMessageObject(v) && typeof v.string === 'string' ? v.string : '';
    case 'intOrString':
      if (!isMessageObject(v)) return 0;
      return int64ToNumber(v.type) === 1 ? (typeof v.strVal === 'string' ? v.strVal : '') : typeof v.intVal === 'number' ? v.intVal : 0;
    case 'rawJson':
      return isMessageObject(v) ? rawJson(v[plan.field]) : undefined;
    case 'wrappedList': {
      const items = isMessageObject(v) ? v[plan.field] : undefined;
      return Array.isArray(items) ? items.map((e) => valueToJson(plan.item, e) ?? null) : [];
    }
    case 'schemaOrArray': {
      if (!isMessageObject(v)) return undefined;
      const list = v.jSONSchemas;
      if (Array.isArray(list) && list.length > 0) return list.map((e) => (isMessageObject(e) ? messageToJson(plan.schema(), e) : null));
      return hasOwn(v, 'schema') && isMessageObject(v.schema) ? messageToJson(plan.schema(), v.schema) : undefined;
    }
    case 'schemaOrBool':
      if (!isMessageObject(v)) return undefined;
      if (hasOwn(v, 'schema') && isMessageObject(v.schema)) return messageToJson(plan.schema(), v.schema);
      return v.allows === true;
    case 'schemaOrStringArray': {
      if (!isMessageObject(v)) return undefined;
      const list = v.property;
      if (Array.isArray(list) && list.length > 0) return list;
      return hasOwn(v, 'schema') && isMessageObject(v.schema) ? messageToJson(plan.schema(), v.schema) : undefined;
    }
    case 'message':
      return isMessageObject(v) ? messageToJson(plan.plan(), v) : {};
  }
}

function keepsZero(field: FieldPlan): boolean {
  return field.presence === 'pointer' || field.presence === 'always' || field.required;
}

/** Converts decoded message MSG into JSON members, added to OUT (the parent object for inline fields). */
export function messageToJson(plan: MessagePlan, msg: Obj, out: Obj = {}): Obj {
  for (const field of plan.fields) {
    if (!hasOwn(msg, field.protoName)) continue;
    const v = msg[field.protoName];
    if (field.inline) {
      if (isMessageObject(v)) messageToJson(field.inline, v, out);
      continue;
    }
    if (field.repeated) {
      if (!Array.isArray(v) || v.length === 0) continue;
      out[field.jsonName] = v.map((e) => valueToJson(field.value, e) ?? null);
      continue;
    }
    if (field.map) {
      if (!isMessageObject(v)) continue;
      const entries = Object.entries(v);
      if (entries.length === 0) continue;
      const m: Obj = {};
      for (const [k, e] of entries) {
        // Same rule as JSON bodies; assigning `__proto__` would also silently drop the entry.
        if (k === '__proto__' || k === 'constructor' || k === 'prototype') throw badRequest(`invalid field name "${k}"`);
        m[k] = valueToJson(field.value, e) ?? null;
      }
      out[field.jsonName] = m;
      continue;
    }
    const j = valueToJson(field.value, v);
    if (j === undefined) continue;
    if (!keepsZero(field) && isEmpty(j)) continue;
    out[field.jsonName] = j;
  }
  return out;
}
