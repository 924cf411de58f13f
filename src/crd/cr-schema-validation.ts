import { Ajv, type AnySchemaObject, type SchemaValidateFunction, type ErrorObject, type ValidateFunction } from 'ajv';
import type { DataValidationCxt } from 'ajv/dist/types/index.js';
import type { StatusCause } from '../api/errors.js';
import { isObject, type Obj } from '../api/object-util.js';
import { goJson, goQuote, invalidField, notSupportedField, requiredField, tooLongField, duplicateField, type BadValue } from '../validation/field-errors.js';
import { isRatcheted } from './cr-ratcheting.js';
import { patternError, re2Engine } from './cr-pattern.js';
import { numberInFormat, validInFormat } from './cr-formats.js';
import { isInt64 } from '../codec/int64-overflow.js';
import { additionalPropertiesOf, isEmbeddedResource, isIntOrString, isNullable, itemsOf, propertiesOf } from './cr-schema-nodes.js';
import { asNumber } from '../api/values.js';

/**
 * Validation of custom resources by their CRD version's `openAPIV3Schema`, as kube-apiserver's
 * kube-openapi validator does it, worded as kube words each finding. The schema is turned into an
 * ajv schema (structure and bounds are ajv's; type, format, enum, embedded resources and set lists
 * are keywords that word kube's findings) and compiled once per cache key.
 */

/** A finding of one of the kube keywords: where `%PATH%` in `detail` is the value's field path. */
interface KubeFinding {
  reason: 'FieldValueTypeInvalid' | 'FieldValueInvalid' | 'FieldValueRequired' | 'FieldValueNotSupported' | 'FieldValueDuplicate';
  value?: BadValue;
  detail?: string;
  /** Appended to the value's path (`.kind`, `[2]`). */
  suffix?: string;
  /** Replaces the path as the cause's field (kube's format checks of numbers say `<nil>`). */
  field?: string;
  supported?: string[];
  /** A cause already worded (findings of a combinator's alternatives). */
  cause?: StatusCause;
}

type Finding = Partial<ErrorObject> & { params: { finding: KubeFinding } };

function found(fn: SchemaValidateFunction, findings: KubeFinding[]): boolean {
  fn.errors = findings.map((finding): Finding => ({ keyword: 'kube', params: { finding } }));
  return findings.length === 0;
}

/**
 * kube-openapi's names of a decoded JSON value's type and format (Go decodes integral numbers as
 * int64); `int64` says whether a number is one (see int64-overflow.ts).
 */
function typeInfo(data: unknown, int64: boolean): [string, string] {
  if (typeof data === 'boolean') return ['boolean', ''];
  if (typeof data === 'string') return ['string', ''];
  if (typeof data === 'number') return int64 ? ['integer', 'int64'] : ['number', 'float64'];
  if (Array.isArray(data)) return ['array', ''];
  return ['object', ''];
}

interface TypeSchema {
  types: string[];
  format: string;
  nullable: boolean;
}

/**
 * kube-openapi's type validator, then its numeric range check: by the format, or for an `integer`
 * without one, int64 (a float or an overflowing integer fails both).
 */
const kubeType: SchemaValidateFunction = function kubeType(
  this: unknown,
  schema: unknown,
  data: unknown,
  _parent?: AnySchemaObject,
  cxt?: DataValidationCxt,
): boolean {
  const s = schema as TypeSchema;
  const findings: KubeFinding[] = [];
  const typeError = (expected: string, actual: string): KubeFinding => ({
    reason: 'FieldValueTypeInvalid',
    value: actual,
    detail: `%PATH% in body must be of type ${expected}: ${goQuote(actual)}`,
  });
  if (data === null) {
    if (s.types.length > 0 && !s.nullable) findings.push(typeError(s.types.join(','), 'null'));
    return found(kubeType, findings);
  }
  const int64 = typeof data === 'number' && isInt64(data, cxt?.parentData, cxt?.parentDataProperty);
  const [schType, format] = typeInfo(data, int64);
  const flat = typeof data !== 'string' && !Array.isArray(data);
  const numeric = s.types.includes('number') || s.types.includes('integer');
  const isIntFloat = schType === 'integer' && s.types.includes('number');
  if (flat && s.format !== '' && !(s.types.includes(schType) || format === s.format || isIntFloat)) findings.push(typeError(s.format, format));
  else if (!(!numeric && s.format !== '' && !flat) && s.types.length > 0 && !(s.types.includes(schType) || isIntFloat)) {
    findings.push(typeError(s.types.join(','), schType));
  }
  if (typeof data === 'number' && numeric && s.format !== '' && !(s.format === 'int64' ? int64 : numberInFormat(s.format, data))) {
    const kind = s.types.includes('integer') ? 'integer' : 'number';
    findings.push({
      reason: 'FieldValueInvalid',
      field: '<nil>',
      value: '',
      detail: `Checked value must be of type ${kind} with format ${s.format} in %PATH%`,
    });
  } else if (typeof data === 'number' && s.format === '' && s.types.length === 1 && s.types[0] === 'integer' && !int64) {
    findings.push({ reason: 'FieldValueInvalid', field: '<nil>', value: '', detail: 'Checked value must be of type integer (default format) in %PATH%' });
  }
  return found(kubeType, findings);
};

const kubeFormat: SchemaValidateFunction = function kubeFormat(this: unknown, schema: unknown, data: unknown): boolean {
  const format = schema as string;
  if (typeof data !== 'string' || validInFormat(format, data)) return found(kubeFormat, []);
  return found(kubeFormat, [{ reason: 'FieldValueTypeInvalid', value: data, detail: `%PATH% in body must be of type ${format}: ${goQuote(data)}` }]);
};

function badValue(data: unknown): BadValue {
  if (data === null || typeof data === 'string' || typeof data === 'number' || typeof data === 'boolean') return data;
  return goJson(data);
}

/** Go's %v of a decoded JSON value, as kube lists supported values. */
function goValue(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null) return '<nil>';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

const kubeEnum: SchemaValidateFunction = function kubeEnum(this: unknown, schema: unknown, data: unknown): boolean {
  const values = schema as unknown[];
  if (data === null || values.some((v) => JSON.stringify(v) === JSON.stringify(data))) return found(kubeEnum, []);
  return found(kubeEnum, [{ reason: 'FieldValueNotSupported', value: badValue(data), supported: values.map(goValue) }]);
};

const kubeEmbedded: SchemaValidateFunction = function kubeEmbedded(this: unknown, _schema: unknown, data: unknown): boolean {
  const findings: KubeFinding[] = [];
  if (isObject(data)) {
    for (const key of ['apiVersion', 'kind']) if (data[key] === undefined) findings.push({ reason: 'FieldValueRequired', suffix: `.${key}` });
  }
  return found(kubeEmbedded, findings);
};

/** Set lists (`x-kubernetes-list-type: set`, the schema is true) and map lists (the schema is the key names): duplicates. */
const kubeListUnique: SchemaValidateFunction = function kubeListUnique(this: unknown, schema: unknown, data: unknown): boolean {
  const findings: KubeFinding[] = [];
  const keys = Array.isArray(schema) ? schema.filter((k): k is string => typeof k === 'string') : undefined;
  if (Array.isArray(data)) {
    const seen = new Set<string>();
    data.forEach((item, i) => {
      let identity: unknown = item;
      if (keys !== undefined) {
        if (!isObject(item)) return;
        identity = Object.fromEntries(keys.filter((k) => item[k] !== undefined).map((k) => [k, item[k]]));
      }
      const key = JSON.stringify(identity);
      if (seen.has(key)) findings.push({ reason: 'FieldValueDuplicate', value: badValue(identity), suffix: `[${i}]` });
      seen.add(key);
    });
  }
  return found(kubeListUnique, findings);
};

/** Sub-schemas of combinators, compiled once each. */
const subValidators = new WeakMap<object, ValidateFunction>();

function subValidator(schema: AnySchemaObject): ValidateFunction {
  let fn = subValidators.get(schema);
  if (fn === undefined) {
    fn = instance().compile(schema);
    subValidators.set(schema, fn);
  }
  return fn;
}

/** The worded findings of SCHEMA for DATA, which sits at CXT's path. */
function alternativeCauses(schema: AnySchemaObject, data: unknown, cxt: DataValidationCxt | undefined): StatusCause[] {
  const fn = subValidator(schema);
  if (fn(data)) return [];
  const base = cxt?.instancePath ?? '';
  const root: unknown = cxt?.rootData ?? data;
  const out: StatusCause[] = [];
  for (const e of fn.errors ?? []) {
    const c = causeOf(root, { ...e, instancePath: `${base}${e.instancePath}` });
    if (c !== undefined) out.push(c);
  }
  return out;
}

function combinatorFinding(detail: string): KubeFinding {
  return { reason: 'FieldValueInvalid', field: '<nil>', value: '', detail: `"%PATH%" ${detail}` };
}

/** The failures of the alternative with the fewest (the first on a tie), as kube-openapi reports them. */
function bestFailure(failures: StatusCause[][]): KubeFinding[] {
  let best: StatusCause[] | undefined;
  for (const f of failures) if (best === undefined || f.length < best.length) best = f;
  return (best ?? []).map((cause) => ({ reason: 'FieldValueInvalid', cause }));
}

/** kube-openapi's combinators: `anyOf`, `oneOf`, `allOf` and `not`, each worded as kube words it. */
const kubeCombinator: SchemaValidateFunction = function kubeCombinator(
  this: unknown,
  schema: unknown,
  data: unknown,
  _p?: AnySchemaObject,
  cxt?: DataValidationCxt,
): boolean {
  const { op, schemas } = schema as { op: 'anyOf' | 'oneOf' | 'allOf' | 'not'; schemas: AnySchemaObject[] };
  if (data === null) return found(kubeCombinator, []);
  const results = schemas.map((s) => alternativeCauses(s, data, cxt));
  const valid = results.filter((r) => r.length === 0).length;
  const findings: KubeFinding[] = [];
  if (op === 'anyOf' && valid === 0) findings.push(combinatorFinding('must validate at least one schema (anyOf)'), ...bestFailure(results));
  if (op === 'oneOf' && valid === 0)
    findings.push(combinatorFinding('must validate one and only one schema (oneOf). Found none valid'), ...bestFailure(results));
  if (op === 'oneOf' && valid > 1) findings.push(combinatorFinding(`must validate one and only one schema (oneOf). Found ${valid} valid alternatives`));
  if (op === 'allOf' && valid < results.length) {
    for (const r of results) for (const cause of r) findings.push({ reason: 'FieldValueInvalid', cause });
    findings.push(combinatorFinding('must validate all the schemas (allOf)'));
  }
  if (op === 'not' && valid === 1) findings.push(combinatorFinding('must not validate the schema (not)'));
  return found(kubeCombinator, findings);
};

/** Whether P is a pattern Go's regexp compiles (others are refused with the CRD, so never checked). */
function validPattern(p: unknown): p is string {
  return typeof p === 'string' && patternError(p) === undefined;
}

const COPIED = ['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties', 'multipleOf'] as const;

/** The ajv schema of one node of a CRD schema. */
export function ajvSchemaOf(node: Obj): AnySchemaObject {
  const out: AnySchemaObject = {};
  const types = isIntOrString(node) ? ['integer', 'string'] : typeof node.type === 'string' && node.type !== '' ? [node.type] : [];
  const format = typeof node.format === 'string' ? node.format : '';
  if (types.length > 0 || isNullable(node)) out.kubeType = { types, format, nullable: isNullable(node) };
  if (format !== '' && (types.length === 0 || types.includes('string'))) out.kubeFormat = format;
  if (Array.isArray(node.enum) && node.enum.length > 0) out.kubeEnum = node.enum;
  if (typeof node.maximum === 'number') out[node.exclusiveMaximum === true ? 'exclusiveMaximum' : 'maximum'] = node.maximum;
  if (typeof node.minimum === 'number') out[node.exclusiveMinimum === true ? 'exclusiveMinimum' : 'minimum'] = node.minimum;
  for (const k of COPIED) if (typeof node[k] === 'number') out[k] = node[k];
  if (validPattern(node.pattern)) out.pattern = node.pattern;
  if (Array.isArray(node.required)) out.required = node.required.filter((r): r is string => typeof r === 'string');
  const properties = propertiesOf(node);
  const keys = Object.keys(properties).sort();
  if (keys.length > 0) out.properties = Object.fromEntries(keys.map((k) => [k, ajvSchemaOf(properties[k] ?? {})]));
  const additional = additionalPropertiesOf(node);
  if (additional !== undefined && Object.keys(additional).length > 0) out.additionalProperties = ajvSchemaOf(additional);
  const items = itemsOf(node);
  if (items !== undefined) out.items = ajvSchemaOf(items);
  if (isEmbeddedResource(node)) out.kubeEmbedded = true;
  const combinators: { op: string; schemas: AnySchemaObject[] }[] = [];
  for (const op of ['allOf', 'anyOf', 'oneOf'] as const) {
    const list = node[op];
    if (Array.isArray(list) && list.length > 0) combinators.push({ op, schemas: list.filter(isObject).map(ajvSchemaOf) });
  }
  if (isObject(node.not)) combinators.push({ op: 'not', schemas: [ajvSchemaOf(node.not)] });
  if (combinators.length > 0) out.allOf = combinators.map((c) => ({ kubeCombinator: c }));
  if (node['x-kubernetes-list-type'] === 'set') out.kubeListUnique = true;
  if (node['x-kubernetes-list-type'] === 'map' && Array.isArray(node['x-kubernetes-list-map-keys'])) out.kubeListUnique = node['x-kubernetes-list-map-keys'];
  return out;
}

let ajv: Ajv | undefined;

function instance(): Ajv {
  if (ajv !== undefined) return ajv;
  const created = new Ajv({
    strict: false,
    allErrors: true,
    verbose: true,
    messages: false,
    validateSchema: false,
    ownProperties: true,
    code: { regExp: re2Engine },
  });
  created.addKeyword({ keyword: 'kubeType', schemaType: 'object', errors: true, validate: kubeType });
  created.addKeyword({ keyword: 'kubeFormat', schemaType: 'string', errors: true, validate: kubeFormat });
  created.addKeyword({ keyword: 'kubeEnum', schemaType: 'array', errors: true, validate: kubeEnum });
  created.addKeyword({ keyword: 'kubeEmbedded', schemaType: 'boolean', errors: true, validate: kubeEmbedded });
  created.addKeyword({ keyword: 'kubeCombinator', schemaType: 'object', errors: true, validate: kubeCombinator });
  created.addKeyword({ keyword: 'kubeListUnique', schemaType: ['boolean', 'array'], errors: true, validate: kubeListUnique });
  ajv = created;
  return created;
}

/** How many compiled schemas are kept (CRD versions change rarely; old keys are dropped first). */
const CACHE_SIZE = 256;
const compiled = new Map<string, ValidateFunction>();

/** The validator of SCHEMA under CACHEKEY, compiled on first use and kept while the key is current. */
export function compiledValidator(cacheKey: string, schema: Obj): ValidateFunction {
  const hit = compiled.get(cacheKey);
  if (hit !== undefined) return hit;
  const fn = instance().compile(ajvSchemaOf(schema));
  if (compiled.size >= CACHE_SIZE) {
    const oldest = compiled.keys().next().value;
    if (oldest !== undefined) compiled.delete(oldest);
  }
  compiled.set(cacheKey, fn);
  return fn;
}

/** The field path (`spec.items[0].name`) of ajv's INSTANCEPATH in ROOT. */
function fieldPath(root: unknown, instancePath: string): string {
  if (instancePath === '') return '';
  let out = '';
  let cur: unknown = root;
  for (const raw of instancePath.slice(1).split('/')) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(cur)) {
      out += `[${seg}]`;
      cur = cur[Number(seg)];
    } else {
      out += out === '' ? seg : `.${seg}`;
      cur = isObject(cur) ? cur[seg] : undefined;
    }
  }
  return out;
}

function countOf(data: unknown): number {
  if (Array.isArray(data)) return data.length;
  return isObject(data) ? Object.keys(data).length : 0;
}

/** One ajv finding as kube's field error. */
function causeOf(root: unknown, e: ErrorObject): StatusCause | undefined {
  const path = fieldPath(root, e.instancePath);
  const data: unknown = e.data;
  const params = e.params as Record<string, unknown>;
  const limit = asNumber(params.limit);
  switch (e.keyword) {
    case 'kube': {
      const f = (params as { finding: KubeFinding }).finding;
      if (f.cause !== undefined) return f.cause;
      const field = f.field ?? `${path}${f.suffix ?? ''}`;
      const detail = f.detail?.replace('%PATH%', path) ?? '';
      if (f.reason === 'FieldValueRequired') return requiredField(field);
      if (f.reason === 'FieldValueNotSupported') return notSupportedField(field, f.value ?? null, f.supported ?? []);
      if (f.reason === 'FieldValueDuplicate') return duplicateField(field, f.value ?? null);
      const cause = invalidField(field, f.value ?? null, detail);
      return { ...cause, reason: f.reason };
    }
    case 'required': {
      const missing = typeof params.missingProperty === 'string' ? params.missingProperty : '';
      return requiredField(path === '' ? missing : `${path}.${missing}`);
    }
    case 'maximum':
      return invalidField(path, badValue(data), `${path} in body should be less than or equal to ${limit}`);
    case 'exclusiveMaximum':
      return invalidField(path, badValue(data), `${path} in body should be less than ${limit}`);
    case 'minimum':
      return invalidField(path, badValue(data), `${path} in body should be greater than or equal to ${limit}`);
    case 'exclusiveMinimum':
      return invalidField(path, badValue(data), `${path} in body should be greater than ${limit}`);
    case 'multipleOf':
      return invalidField(path, badValue(data), `${path} in body should be a multiple of ${asNumber(params.multipleOf)}`);
    case 'minLength':
      return invalidField(path, badValue(data), `${path} in body should be at least ${limit} chars long`);
    case 'maxLength':
      return tooLongField(path, limit);
    case 'pattern':
      return invalidField(path, badValue(data), `${path} in body should match '${String(params.pattern)}'`);
    case 'minItems':
      return invalidField(path, countOf(data), `${path} in body should have at least ${limit} items`);
    case 'minProperties':
      return invalidField(path, countOf(data), `${path} in body should have at least ${limit} properties`);
    case 'maxItems':
    case 'maxProperties':
      return { reason: 'FieldValueTooMany', field: path, message: `Too many: ${countOf(data)}: must have at most ${limit} items` };
    default:
      return undefined;
  }
}

const STRING_KEYWORDS = new Set(['maxLength', 'minLength', 'pattern']);

/**
 * kube's schema findings for OBJ (the whole custom resource) under SCHEMA, in kube's words. On update
 * (OLD given), findings on values that did not change are dropped, as kube's validation ratcheting does.
 */
export function validateBySchema(obj: Obj, cacheKey: string, schema: Obj, old?: Obj): StatusCause[] {
  return findingsOf(compiledValidator(cacheKey, schema), obj, schema, old);
}

/**
 * kube's schema findings for VALUE (any JSON value, e.g. a schema node's default) under SCHEMA, with
 * paths relative to VALUE. The validator is compiled for this call only (CRD validation is rare).
 */
export function validateValueBySchema(value: unknown, schema: Obj): StatusCause[] {
  const ajvSchema = ajvSchemaOf(schema);
  const validate = instance().compile(ajvSchema);
  try {
    return findingsOf(validate, value, schema);
  } finally {
    instance().removeSchema(ajvSchema);
  }
}

function findingsOf(validate: ValidateFunction, obj: unknown, schema: Obj, old?: Obj): StatusCause[] {
  if (validate(obj)) return [];
  const causes: StatusCause[] = [];
  // kube-openapi's string validator reports only the first of maxLength, minLength and pattern.
  const stringFailed = new Set<string>();
  for (const e of validate.errors ?? []) {
    if (old !== undefined && isObject(obj) && isRatcheted(schema, obj, old, e.instancePath)) continue;
    if (STRING_KEYWORDS.has(e.keyword)) {
      if (stringFailed.has(e.instancePath)) continue;
      stringFailed.add(e.instancePath);
    }
    const c = causeOf(obj, e);
    if (c !== undefined) causes.push(c);
  }
  return causes;
}
