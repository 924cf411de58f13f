import { durationForWire, parseTimestamp } from '../../src/codec/protobuf/wire-time.js';
import { int64ForWire } from '../../src/codec/protobuf/wire-int64.js';
import { planFor, type MessagePlan, type ValuePlan } from '../../src/codec/protobuf/message-plan.js';
import { messageNameForKind } from '../../src/codec/protobuf/kind-messages.js';
import { lookupMessage, requireMessage } from '../../src/codec/protobuf/proto-runtime.js';
import { PROTOBUF_MAGIC } from '../../src/codec/protobuf/envelope.js';
import type { Obj } from '../../src/api/object-util.js';

/**
 * The protobuf encoder Capstan used before its direct wire writer, kept as a test oracle: kube's JSON
 * form -> plain objects shaped like the proto messages -> protobufjs `encode`. The direct encoder must
 * write the same bytes. Absent and null members stay absent on the wire, members whose JSON type does
 * not fit the field are skipped.
 */

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const INT64 = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const NUMBER = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);

function scalarToWire(type: string, v: unknown): unknown {
  if (type === 'string') return typeof v === 'string' ? v : undefined;
  if (type === 'bool') return typeof v === 'boolean' ? v : undefined;
  if (type === 'bytes') return typeof v === 'string' ? Buffer.from(v, 'base64') : undefined;
  if (type === 'double' || type === 'float') return typeof v === 'number' ? v : undefined;
  if (INT64.has(type)) return typeof v === 'number' && Number.isFinite(v) ? int64ForWire(v) : undefined;
  if (NUMBER.has(type)) return typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : undefined;
  return undefined;
}

/** The proto-shaped value of one JSON value under PLAN; undefined when its JSON type does not fit. */
function valueToWire(plan: ValuePlan, v: unknown): unknown {
  switch (plan.kind) {
    case 'scalar':
      return scalarToWire(plan.type, v);
    case 'time':
      return typeof v === 'string' ? parseTimestamp(v) : undefined;
    case 'duration': {
      const ns = typeof v === 'string' ? durationForWire(v) : undefined;
      return ns === undefined ? undefined : { duration: ns };
    }
    case 'quantity':
      return typeof v === 'string' || typeof v === 'number' ? { string: String(v) } : undefined;
    case 'intOrString':
      if (typeof v === 'number') return { type: 0, intVal: Math.trunc(v) };
      return typeof v === 'string' ? { type: 1, strVal: v } : undefined;
    case 'rawJson':
      return { [plan.field]: Buffer.from(JSON.stringify(v), 'utf8') };
    case 'wrappedList':
      return Array.isArray(v) ? { [plan.field]: listToWire(plan.item, v) } : undefined;
    case 'schemaOrArray':
      if (Array.isArray(v)) return { jSONSchemas: v.filter(isObj).map((e) => jsonToMessage(plan.schema(), e)) };
      return isObj(v) ? { schema: jsonToMessage(plan.schema(), v) } : undefined;
    case 'schemaOrBool':
      if (typeof v === 'boolean') return { allows: v };
      return isObj(v) ? { allows: true, schema: jsonToMessage(plan.schema(), v) } : undefined;
    case 'schemaOrStringArray':
      if (Array.isArray(v)) return { property: v.filter((e): e is string => typeof e === 'string') };
      return isObj(v) ? { schema: jsonToMessage(plan.schema(), v) } : undefined;
    case 'message':
      return isObj(v) ? jsonToMessage(plan.plan(), v) : undefined;
  }
}

function listToWire(plan: ValuePlan, list: unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const e of list) {
    if (e === null || e === undefined) continue;
    const w = valueToWire(plan, e);
    if (w !== undefined) out.push(w);
  }
  return out;
}

/** The proto-shaped object for JSON object OBJ under PLAN. */
function jsonToMessage(plan: MessagePlan, obj: Obj): Obj {
  const out: Obj = {};
  for (const field of plan.fields) {
    if (field.inline) {
      const sub = jsonToMessage(field.inline, obj);
      if (Object.keys(sub).length > 0) out[field.protoName] = sub;
      continue;
    }
    const v = obj[field.jsonName];
    if (v === undefined || v === null) continue;
    if (field.repeated) {
      if (Array.isArray(v)) out[field.protoName] = listToWire(field.value, v);
      continue;
    }
    if (field.map) {
      if (!isObj(v)) continue;
      const m: Obj = {};
      for (const [k, e] of Object.entries(v)) {
        if (e === null || e === undefined) continue;
        const w = valueToWire(field.value, e);
        if (w !== undefined) m[k] = w;
      }
      out[field.protoName] = m;
      continue;
    }
    const w = valueToWire(field.value, v);
    if (w !== undefined) out[field.protoName] = w;
  }
  return out;
}

function encodeMessage(apiVersion: string, kind: string, obj: Obj): Uint8Array {
  const name = messageNameForKind(apiVersion, kind);
  const type = name === undefined ? undefined : lookupMessage(name);
  if (type === undefined) throw new Error(`no message for ${apiVersion}/${kind}`);
  return type.encode(jsonToMessage(planFor(type), obj)).finish();
}

function wrapEnvelope(apiVersion: string, kind: string, raw: Uint8Array): Buffer {
  const unknown = requireMessage('k8s.io.apimachinery.pkg.runtime.Unknown');
  const body = unknown.encode({ typeMeta: { apiVersion, kind }, raw, contentEncoding: '', contentType: '' }).finish();
  return Buffer.concat([PROTOBUF_MAGIC, body]);
}

/** The protobufjs-built body of OBJ (magic + Unknown envelope). */
export function oracleObject(obj: Obj): Buffer {
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const kind = typeof obj.kind === 'string' ? obj.kind : '';
  return wrapEnvelope(apiVersion, kind, encodeMessage(apiVersion, kind, obj));
}

/** The protobufjs-built body of a list. */
export function oracleList(listKind: string, apiVersion: string, metadata: Obj, items: Obj[]): Buffer {
  return wrapEnvelope(apiVersion, listKind, encodeMessage(apiVersion, listKind, { metadata, items }));
}

/** The protobufjs-built watch frame (4-byte big-endian length + WatchEvent). */
export function oracleWatchFrame(type: string, obj: Obj): Buffer {
  const event = requireMessage('k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent')
    .encode({ type, object: { raw: oracleObject(obj) } })
    .finish();
  const header = Buffer.alloc(4);
  header.writeUInt32BE(event.length, 0);
  return Buffer.concat([header, event]);
}
