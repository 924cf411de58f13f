/**
 * kube-apiserver's checks of a CRD's `x-kubernetes-validations` rules at create and update: the
 * well-formedness of each rule (rule, message, messageExpression, reason, fieldPath), then, when
 * those hold, the compilation of rule and messageExpression against the node's type, the rule's
 * estimated cost (times the number of values the node can have) against the per-rule limit and the
 * CRD's total, and the use of `oldSelf` (not where values do not correlate; `optionalOldSelf` only
 * with it). Findings carry kube's field paths and words.
 */
import type { StatusCause } from '../api/errors.js';
import { isObject, type Obj } from '../api/object-util.js';
import { cel } from '../cel/load.js';
import { schemaSizes, unboundedCardinality } from '../cel/schema-sizes.js';
import { typeFromSchema, type CelType } from '../cel/types.js';
import { forbiddenField, goJson, invalidField, notSupportedField, requiredField } from '../validation/field-errors.js';
import { additionalPropertiesOf, itemsOf, propertiesOf } from './cr-schema-nodes.js';
import { jsonEqual } from './cr-ratcheting.js';
import { rulesOf, type ValidationRule } from './cr-validation-rules.js';

/** kube's largest estimated cost of one rule (StaticEstimatedCostLimit). */
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
/** kube's largest estimated cost of all the rules of a CRD (StaticEstimatedCRDCostLimit). */
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;
const RULE_LIMIT = BigInt(STATIC_ESTIMATED_COST_LIMIT);
const CRD_LIMIT = BigInt(STATIC_ESTIMATED_CRD_COST_LIMIT);
const MAX_U64 = (1n << 64n) - 1n;
const saturatingProduct = (a: bigint, b: bigint): bigint => (a * b > MAX_U64 ? MAX_U64 : a * b);
const saturatingSum = (a: bigint, b: bigint): bigint => (a + b > MAX_U64 ? MAX_U64 : a + b);

const REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];

function costMessage(name: string, cost: bigint, limit: bigint): string {
  const factor = Number(cost) / Number(limit);
  const text = factor > 100 ? 'more than 100x' : factor < 1.5 ? `${factor.toFixed(6)}x` : `${factor.toFixed(1)}x`;
  return `${name} exceeds budget by factor of ${text} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

/** The rule as kube prints an apiextensions.ValidationRule value (Go field names, json.Marshal). */
function ruleDump(r: ValidationRule): { goSyntax: string } {
  return goJson({
    Rule: r.rule ?? '',
    Message: r.message ?? '',
    MessageExpression: r.messageExpression ?? '',
    Reason: r.reason ?? null,
    FieldPath: r.fieldPath ?? '',
    OptionalOldSelf: r.optionalOldSelf ?? null,
  });
}

/** kube's ValidFieldPath: `.a`, `['a.b']`, chained; each step a declared property or a map key. */
export function validFieldPath(path: string, schema: Obj): boolean {
  let node: Obj | undefined = schema;
  const tokens = path.trim().match(/\.[^.[\]]*|\[\s*'(?:[^'\\]|\\.)*'\s*\]|./g) ?? [];
  if (tokens.length === 0) return false;
  for (const t of tokens) {
    let name: string;
    if (t.startsWith('.') && t.length > 1) name = t.slice(1);
    else if (t.startsWith('[') && t.length > 1) name = t.replace(/^\[\s*'|'\s*\]$/g, '').replace(/\\(.)/g, '$1');
    else return false;
    if (node === undefined) return false;
    const props = propertiesOf(node);
    if (Object.keys(props).length > 0) {
      const sub = props[name];
      if (!isObject(sub)) return false;
      node = sub;
    } else {
      const additional = additionalPropertiesOf(node);
      if (additional === undefined) return false;
      node = additional;
    }
  }
  return true;
}

interface Total {
  total: bigint;
  mostExpensive: { path: string; cost: bigint }[];
}

function observe(total: Total, path: string, cost: bigint): void {
  total.total = saturatingSum(total.total, cost);
  if (cost < CRD_LIMIT / 100n) return;
  total.mostExpensive.push({ path, cost });
  total.mostExpensive.sort((a, b) => (b.cost > a.cost ? 1 : b.cost < a.cost ? -1 : 0));
  total.mostExpensive.length = Math.min(4, total.mostExpensive.length);
}

const OLD_SELF = /\boldSelf\b/;

/**
 * By how much a node multiplies the number of values under it (kube's extractMaxElements): a
 * list's maxItems, a map's maxProperties, 1 for other nodes; undefined when a list or map has no bound.
 */
function maxElements(schema: Obj): bigint | undefined {
  const bound = (v: unknown): bigint | undefined => (typeof v === 'number' ? BigInt(Math.max(0, v)) : undefined);
  if (schema.type === 'object') return schema.additionalProperties !== undefined ? bound(schema.maxProperties) : 1n;
  if (schema.type === 'array') return bound(schema.maxItems);
  return 1n;
}

/**
 * Checks the rules of SCHEMA and below. CARDINALITY is how many values the node can have when
 * every list and map above it is bounded (the product of their bounds), undefined otherwise: then
 * a rule counts as often as the node's smallest values fit in a request.
 */
function checkNode(
  schema: Obj,
  path: string,
  cardinality: bigint | undefined,
  uncorrelatable: string | undefined,
  isRoot: boolean,
  total: Total,
  out: StatusCause[],
): boolean {
  let schemaErrors = false;
  const factor = maxElements(schema);
  const childCardinality = cardinality === undefined || factor === undefined ? undefined : saturatingProduct(cardinality, factor);
  for (const [name, sub] of Object.entries(propertiesOf(schema)))
    if (isObject(sub)) schemaErrors = checkNode(sub, `${path}.properties[${name}]`, childCardinality, uncorrelatable, false, total, out) || schemaErrors;
  const type = typeFromSchema(schema, 'self', isRoot, true);
  const items = itemsOf(schema);
  if (items !== undefined) {
    const correlates = schema['x-kubernetes-list-type'] === 'map';
    schemaErrors = checkNode(items, `${path}.items`, childCardinality, uncorrelatable ?? (correlates ? undefined : path), false, total, out) || schemaErrors;
  }
  const additional = additionalPropertiesOf(schema);
  if (additional !== undefined) {
    schemaErrors = checkNode(additional, `${path}.additionalProperties`, childCardinality, uncorrelatable, false, total, out) || schemaErrors;
  }
  const rules = rulesOf(schema);
  if (rules.length === 0) return schemaErrors;
  const at = (i: number, f: string): string => `${path}.x-kubernetes-validations[${i}].${f}`;
  const before = out.length;
  rules.forEach((r, i) => {
    const rule = typeof r.rule === 'string' ? r.rule.trim() : '';
    const message = typeof r.message === 'string' ? r.message : '';
    if (rule === '') out.push(requiredField(at(i, 'rule'), 'rule is not specified'));
    else if (message.length > 0 && message.trim() === '') out.push(invalidField(at(i, 'message'), message, 'must be non-empty if specified'));
    else if (/[\n\r]/.test(message.trim())) out.push(invalidField(at(i, 'message'), message, 'must not contain line breaks'));
    else if (/[\n\r]/.test(rule) && message.trim() === '') out.push(requiredField(at(i, 'message'), 'message must be specified if rule contains line breaks'));
    if (typeof r.messageExpression === 'string' && r.messageExpression.length > 0 && r.messageExpression.trim() === '')
      out.push(requiredField(at(i, 'messageExpression'), 'messageExpression must be non-empty if specified'));
    if (r.reason !== undefined && !REASONS.includes(r.reason)) out.push(notSupportedField(at(i, 'reason'), r.reason, REASONS));
    const fieldPath = typeof r.fieldPath === 'string' ? r.fieldPath : '';
    if (fieldPath.length > 0 && fieldPath.trim() === '') out.push(invalidField(at(i, 'fieldPath'), fieldPath, 'must be non-empty if specified'));
    if (/[\n\r]/.test(fieldPath)) out.push(invalidField(at(i, 'fieldPath'), fieldPath, 'must not contain line breaks'));
    if (fieldPath.length > 0 && !validFieldPath(fieldPath, schema)) out.push(invalidField(at(i, 'fieldPath'), fieldPath, 'must be a valid path'));
  });
  if (out.length > before || schemaErrors) return true;
  const optionalOld: CelType = { kind: 'optional_type', elem: type };
  const resource = isRoot || schema['x-kubernetes-embedded-resource'] === true;
  const sizes = schemaSizes(schema, resource);
  const times = cardinality ?? BigInt(unboundedCardinality(schema, resource));
  rules.forEach((r, i) => {
    const usesOldSelf = OLD_SELF.test(r.rule);
    const oldSelf = r.optionalOldSelf === true ? optionalOld : type;
    const compiled = cel().compileExpression(r.rule, { variables: { self: type, oldSelf }, sizes });
    const failed = !compiled.ok || (compiled.outputType !== undefined && !['bool', 'dyn'].includes(compiled.outputType.kind));
    const ruleCost = failed || compiled.estimatedCost === undefined ? 0n : saturatingProduct(compiled.estimatedCost.exact.max, times);
    if (ruleCost > RULE_LIMIT) out.push(forbiddenField(at(i, 'rule'), costMessage('estimated rule cost', ruleCost, RULE_LIMIT)));
    observe(total, at(i, 'rule'), ruleCost);
    if (!compiled.ok) out.push(invalidField(at(i, 'rule'), ruleDump(r), `compilation failed: ${compiled.errors.join('\n')}`));
    else if (failed) out.push(invalidField(at(i, 'rule'), ruleDump(r), 'cel expression must evaluate to a bool'));
    // kube compiles the messageExpression of a rule that compiled; its cost is not multiplied.
    if (!failed && typeof r.messageExpression === 'string' && r.messageExpression !== '') {
      const msg = cel().compileExpression(r.messageExpression, { variables: { self: type, oldSelf }, sizes });
      if (!msg.ok) out.push(invalidField(at(i, 'messageExpression'), ruleDump(r), `messageExpression compilation failed: ${msg.errors.join('\n')}`));
      else if (msg.outputType !== undefined && !['string', 'dyn'].includes(msg.outputType.kind))
        out.push(invalidField(at(i, 'messageExpression'), ruleDump(r), 'messageExpression must evaluate to a string'));
      else {
        const msgCost = msg.estimatedCost?.exact.max ?? 0n;
        if (msgCost > RULE_LIMIT) out.push(forbiddenField(at(i, 'messageExpression'), costMessage('estimated messageExpression cost', msgCost, RULE_LIMIT)));
        observe(total, at(i, 'messageExpression'), msgCost);
      }
    }
    if (usesOldSelf) {
      if (uncorrelatable !== undefined)
        out.push(invalidField(at(i, 'rule'), r.rule, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${uncorrelatable}`));
    } else if (r.optionalOldSelf !== undefined && r.optionalOldSelf !== null) {
      out.push(invalidField(at(i, 'optionalOldSelf'), r.optionalOldSelf, 'may not be set if oldSelf is not used in rule'));
    }
  });
  return schemaErrors;
}

/** The path kube reports a version's schema under: lifted to spec.validation when every version has the same one. */
function schemaPaths(spec: Obj): { path: string; schema: Obj }[] {
  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isObject) : [];
  const schemas = versions.map((v) => (isObject(v.schema) && isObject(v.schema.openAPIV3Schema) ? v.schema.openAPIV3Schema : undefined));
  const first = schemas[0];
  if (first !== undefined && schemas.every((s) => s !== undefined && jsonEqual(s, first))) return [{ path: 'spec.validation.openAPIV3Schema', schema: first }];
  return schemas.flatMap((s, i) => (s === undefined ? [] : [{ path: `spec.versions[${i}].schema.openAPIV3Schema`, schema: s }]));
}

/** kube's findings for the `x-kubernetes-validations` of every schema of the CRD OBJ. */
export function validateCrdValidationRules(obj: Obj): StatusCause[] {
  const spec = isObject(obj.spec) ? obj.spec : {};
  const out: StatusCause[] = [];
  for (const { path, schema } of schemaPaths(spec)) {
    const total: Total = { total: 0n, mostExpensive: [] };
    checkNode(schema, path, 1n, undefined, true, total, out);
    if (total.total > CRD_LIMIT) {
      for (const e of total.mostExpensive)
        out.push(forbiddenField(e.path, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'));
      out.push(forbiddenField(path, costMessage('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', total.total, CRD_LIMIT)));
    }
  }
  return out;
}
