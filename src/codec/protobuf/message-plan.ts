import type protobuf from 'protobufjs';
import type { SchemaNode } from '../../schema/openapi-schema.js';
import { fieldPresence, type FieldPresence } from './field-presence.js';
import { schemaForMessage } from './openapi-definitions.js';
import { fullName, protobufModule } from './proto-runtime.js';
import { messageTypeOf } from './wire-types.js';

/**
 * Conversion plans: for one proto message (and the OpenAPI definition of its JSON form), how each proto
 * field maps to a JSON member. Built once per message and definition, then shared by both directions.
 *
 * Shape differences handled here, all derived from the descriptor and the OpenAPI document:
 * - JSON names: the proto field name when it is an OpenAPI property, else the property equal to it
 *   ignoring case and punctuation (`Webhooks` -> `webhooks`, `uID` -> `uid`, `ref` -> `$ref`,
 *   `xKubernetesListType` -> `x-kubernetes-list-type`); without a definition, the name with its first
 *   letter lowered (Go JSON names are lowerCamel).
 * - Inline structs: a message field that is no property but whose own fields are (Volume.volumeSource,
 *   Probe.handler, ...) is flattened into its parent's JSON object.
 * - Custom wire types (Time, MicroTime, Duration, Quantity, IntOrString, RawExtension, FieldsV1,
 *   apiextensions JSON and JSONSchemaPropsOr*) and named string slices wrapped in a message
 *   (`ExtraValue`, `Verbs`: {items}) become their JSON scalar, array or union forms.
 */

/** How one value (a singular field, a list element or a map value) converts. */
export type ValuePlan =
  | { kind: 'scalar'; type: string }
  | { kind: 'time'; fraction: 0 | 6 }
  | { kind: 'duration' }
  | { kind: 'quantity' }
  | { kind: 'intOrString' }
  | { kind: 'rawJson'; field: string }
  | { kind: 'wrappedList'; field: string; item: ValuePlan }
  | { kind: 'schemaOrArray'; schema: () => MessagePlan }
  | { kind: 'schemaOrBool'; schema: () => MessagePlan }
  | { kind: 'schemaOrStringArray'; schema: () => MessagePlan }
  | { kind: 'message'; plan: () => MessagePlan };

/** One proto field of a message plan. */
export interface FieldPlan {
  protoName: string;
  /** JSON member name; empty for an inline field. */
  jsonName: string;
  /** For an inline (embedded) struct: the plan of its message, read from and written to the parent object. */
  inline: MessagePlan | undefined;
  repeated: boolean;
  map: boolean;
  value: ValuePlan;
  presence: FieldPresence;
  /** Listed in the OpenAPI definition's `required`: kept in JSON even when zero. */
  required: boolean;
}

/** The conversion plan of one message. Fields are in descriptor order, which is Go's struct order. */
export interface MessagePlan {
  name: string;
  type: protobuf.Type;
  fields: FieldPlan[];
}

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1.';
const APIEXT = /^k8s\.io\.apiextensions_apiserver\.pkg\.apis\.apiextensions\.v1(beta1)?\./;

const plans = new Map<string, MessagePlan>();

/**
 * `get` called once, its result kept: a plan's nested plans are looked up on every value converted,
 * and planFor's key (the message's full name) is costly to build each time.
 */
function once<T>(get: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= get());
}

/** The plan of TYPE whose JSON form SCHEMA describes (defaults to the definition named after the message). */
export function planFor(type: protobuf.Type, schema?: SchemaNode): MessagePlan {
  const name = fullName(type);
  const s = schema ?? schemaForMessage(name);
  const key = `${name}|${s?.definition ?? ''}`;
  let plan = plans.get(key);
  if (plan === undefined) {
    plan = { name, type, fields: [] };
    // Registered before its fields are built so that recursive types (JSONSchemaProps) terminate.
    plans.set(key, plan);
    plan.fields = buildFields(type, s);
  }
  return plan;
}

function normalize(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** The JSON property of S that proto field PROTO_NAME stands for, if any. */
function matchProperty(protoName: string, s: SchemaNode | undefined): string | undefined {
  if (!s) return undefined;
  const props = s.propertyNames();
  if (props.includes(protoName)) return protoName;
  const wanted = normalize(protoName);
  return props.find((p) => normalize(p) === wanted);
}

/** True when message TYPE is a custom wire type with a scalar, list or union JSON form. */
function isSpecial(type: protobuf.Type): boolean {
  return specialValue(type) !== undefined;
}

function specialValue(type: protobuf.Type): ValuePlan | undefined {
  const name = fullName(type);
  switch (name) {
    case `${META}Time`:
      return { kind: 'time', fraction: 0 };
    case `${META}MicroTime`:
      return { kind: 'time', fraction: 6 };
    case `${META}Duration`:
      return { kind: 'duration' };
    case `${META}FieldsV1`:
      return { kind: 'rawJson', field: 'Raw' };
    case 'k8s.io.apimachinery.pkg.api.resource.Quantity':
      return { kind: 'quantity' };
    case 'k8s.io.apimachinery.pkg.api.resource.QuantityValue':
      return { kind: 'quantity' };
    case 'k8s.io.apimachinery.pkg.util.intstr.IntOrString':
      return { kind: 'intOrString' };
    case 'k8s.io.apimachinery.pkg.runtime.RawExtension':
      return { kind: 'rawJson', field: 'raw' };
    default:
      break;
  }
  if (APIEXT.test(name)) {
    const simple = type.name;
    const props = once((): MessagePlan => {
      const p = type.parent?.lookup('JSONSchemaProps');
      if (!(p instanceof protobufModule().Type)) throw new Error(`no JSONSchemaProps next to ${name}`);
      return planFor(p);
    });
    if (simple === 'JSON') return { kind: 'rawJson', field: 'raw' };
    if (simple === 'JSONSchemaPropsOrArray') return { kind: 'schemaOrArray', schema: props };
    if (simple === 'JSONSchemaPropsOrBool') return { kind: 'schemaOrBool', schema: props };
    if (simple === 'JSONSchemaPropsOrStringArray') return { kind: 'schemaOrStringArray', schema: props };
  }
  // A Go named slice (`type ExtraValue []string`) is a message holding one repeated `items` field,
  // with no OpenAPI definition of its own; a struct of one `items` list (DownwardAPIProjection) has one.
  const only = type.fieldsArray.length === 1 ? type.fieldsArray[0] : undefined;
  if (only && only.name === 'items' && only.repeated && !type.name.endsWith('List') && schemaForMessage(name) === undefined) {
    return { kind: 'wrappedList', field: 'items', item: valuePlan(only, undefined) };
  }
  return undefined;
}

function valuePlan(field: protobuf.Field, node: SchemaNode | undefined): ValuePlan {
  const type = messageTypeOf(field);
  if (type === undefined) return { kind: 'scalar', type: field.resolvedType ? 'int32' : field.type };
  const special = specialValue(type);
  if (special) return special;
  const def = node?.definition;
  return { kind: 'message', plan: once(() => planFor(type, def !== undefined ? node : undefined)) };
}

/** How many of message TYPE's fields are properties of S, directly or through nested inline structs. */
function inlineMatches(type: protobuf.Type, s: SchemaNode, depth: number): number {
  let matched = 0;
  for (const f of type.fieldsArray) {
    if (matchProperty(f.name, s) !== undefined) matched++;
    else {
      const t = messageTypeOf(f);
      if (t && depth < 3 && !f.repeated && !f.map && !isSpecial(t) && inlineMatches(t, s, depth + 1) === t.fieldsArray.length) matched++;
    }
  }
  return matched;
}

/**
 * True when FIELD (a message field that is no property of S) is a Go struct embedded inline: all its
 * message's fields are properties of S, or most are and the field is named after its type as Go
 * embedding names it (`volumeSource` for VolumeSource). Without a definition nothing is inline: the
 * only such case in 1.36 is extensions/v1beta1 IngressRule, a version no longer served.
 */
function isInline(field: protobuf.Field, sub: protobuf.Type, s: SchemaNode | undefined): boolean {
  if (!s || field.repeated || field.map || isSpecial(sub)) return false;
  const namedAfterType = field.name === sub.name.charAt(0).toLowerCase() + sub.name.slice(1);
  const total = sub.fieldsArray.length;
  const matched = inlineMatches(sub, s, 0);
  return matched > 0 && (matched === total || (namedAfterType && matched * 2 > total));
}

function buildFields(type: protobuf.Type, s: SchemaNode | undefined): FieldPlan[] {
  const message = fullName(type);
  const required = new Set(s?.required() ?? []);
  const out: FieldPlan[] = [];
  for (const field of type.fieldsArray) {
    const repeated = field.repeated;
    const map = field.map;
    const presence = fieldPresence(message, field.name);
    const jsonName = matchProperty(field.name, s);
    const sub = messageTypeOf(field);
    if (jsonName === undefined && sub && isInline(field, sub, s)) {
      out.push({
        protoName: field.name,
        jsonName: '',
        inline: planFor(sub, s),
        repeated,
        map,
        value: { kind: 'message', plan: once(() => planFor(sub, s)) },
        presence,
        required: false,
      });
      continue;
    }
    const name = jsonName ?? field.name.charAt(0).toLowerCase() + field.name.slice(1);
    const prop = s?.property(name);
    const node = repeated ? prop?.items() : map ? prop?.additionalProperties() : prop;
    out.push({
      protoName: field.name,
      jsonName: name,
      inline: undefined,
      repeated,
      map,
      value: valuePlan(field, node),
      presence,
      required: required.has(name),
    });
  }
  return out;
}
