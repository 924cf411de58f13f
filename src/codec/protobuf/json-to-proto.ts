import { durationForWire, parseTimestamp } from './wire-time.js';
import { int64ForWire } from './wire-int64.js';
import type { MessagePlan, ValuePlan } from './message-plan.js';
import type { Obj } from '../../api/object-util.js';

/**
 * kube's JSON form -> plain objects shaped like the proto messages, ready for protobufjs `encode`.
 * Writes what is present: absent and null members stay absent on the wire (Go reads them as zero), and
 * members whose JSON type does not fit the field are skipped rather than written as garbage.
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
export function valueToWire(plan: ValuePlan, v: unknown): unknown {
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
export function jsonToMessage(plan: MessagePlan, obj: Obj): Obj {
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
