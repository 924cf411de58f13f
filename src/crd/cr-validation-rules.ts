/**
 * `x-kubernetes-validations` of custom resources, as kube-apiserver's CEL validator runs them: every
 * rule of every schema node with a value, `self` typed by the node's schema (the root gains
 * apiVersion, kind and metadata.name/generateName), transition rules (`oldSelf`) only on update when
 * the old value correlates (object properties by name, map-list items by their keys), or always
 * with `optionalOldSelf` (then `oldSelf` is an optional), `message` / `messageExpression` /
 * `reason` / `fieldPath`, kube's runtime cost budget, and ratcheting: a failing rule that does not
 * use `oldSelf` is not reported for a value equal to its old value. Findings are worded as kube's.
 */
import type { StatusCause } from '../api/errors.js';
import { isObject, type Obj } from '../api/object-util.js';
import type { Program } from '../cel/index.js';
import { PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET } from '../cel/limits.js';
import { cel } from '../cel/load.js';
import { typeFromSchema, type CelType } from '../cel/types.js';
import { goQuote, type BadValue } from '../validation/field-errors.js';
import { jsonEqual } from './cr-ratcheting.js';
import { additionalPropertiesOf, itemsOf, propertiesOf } from './cr-schema-nodes.js';

/** One entry of `x-kubernetes-validations`. */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

interface CompiledRule {
  rule: ValidationRule;
  program?: Program;
  messageProgram?: Program;
  usesOldSelf: boolean;
  /** A compile error, reported for every value the rule applies to (kube: "rule compile error"). */
  error?: string;
  /** `fieldPath` as a field path suffix (`.mode`, `[key]`). */
  pathSuffix: string;
}

/** The rules of one schema node and of the nodes below it. */
interface RuleNode {
  type: CelType;
  /** The schema's `type` (kube reports it as the value of some findings). */
  schemaType: string;
  listType?: string;
  listMapKeys?: string[];
  rules: CompiledRule[];
  properties: Map<string, RuleNode>;
  items?: RuleNode;
  additional?: RuleNode;
}

/** The rules of SCHEMA as declared, or undefined when the schema has none. */
export function rulesOf(schema: Obj): ValidationRule[] {
  const list = schema['x-kubernetes-validations'];
  return Array.isArray(list) ? list.filter(isObject).map((r) => r as unknown as ValidationRule) : [];
}

/** Whether any node of SCHEMA declares rules. */
export function hasRules(schema: Obj | undefined): boolean {
  if (schema === undefined) return false;
  if (rulesOf(schema).length > 0) return true;
  for (const sub of Object.values(propertiesOf(schema))) if (isObject(sub) && hasRules(sub)) return true;
  const items = itemsOf(schema);
  if (items !== undefined && hasRules(items)) return true;
  const additional = additionalPropertiesOf(schema);
  return additional !== undefined && hasRules(additional);
}

const OLD_SELF = /\boldSelf\b/;

/** `fieldPath` (`.a.b`, `['x.y']`) as the suffix kube appends to the rule's field path. */
export function fieldPathSuffix(fieldPath: string | undefined): string {
  if (fieldPath === undefined || fieldPath.trim() === '') return '';
  let out = '';
  for (const m of fieldPath.trim().matchAll(/\.([^.[\]]+)|\[\s*'((?:[^'\\]|\\.)*)'\s*\]/g)) {
    out += m[1] !== undefined ? `.${m[1]}` : `[${m[2].replace(/\\(.)/g, '$1')}]`;
  }
  return out;
}

function compileNode(schema: Obj, isRoot: boolean): RuleNode {
  const { compileExpression } = cel();
  const type = typeFromSchema(schema, 'self', isRoot);
  const optionalOld: CelType = { kind: 'optional_type', elem: type };
  const rules: CompiledRule[] = rulesOf(schema).map((rule) => {
    const usesOldSelf = OLD_SELF.test(rule.rule);
    const variables = { self: type, oldSelf: rule.optionalOldSelf === true ? optionalOld : type };
    const compiled = compileExpression(rule.rule, { variables });
    const out: CompiledRule = { rule, usesOldSelf, pathSuffix: fieldPathSuffix(rule.fieldPath) };
    if (!compiled.ok) out.error = `compilation failed: ${compiled.errors.join('\n')}`;
    else if (compiled.outputType !== undefined && compiled.outputType.kind !== 'bool' && compiled.outputType.kind !== 'dyn')
      out.error = 'cel expression must evaluate to a bool';
    else out.program = compiled.program;
    if (rule.messageExpression !== undefined && rule.messageExpression.trim() !== '') {
      const msg = compileExpression(rule.messageExpression, { variables: { self: type, oldSelf: type } });
      if (msg.ok) out.messageProgram = msg.program;
    }
    return out;
  });
  const properties = new Map<string, RuleNode>();
  for (const [name, sub] of Object.entries(propertiesOf(schema))) if (isObject(sub) && hasRules(sub)) properties.set(name, compileNode(sub, false));
  const itemsSchema = itemsOf(schema);
  const additionalSchema = additionalPropertiesOf(schema);
  const listMapKeys = schema['x-kubernetes-list-map-keys'];
  return {
    type,
    schemaType: typeof schema.type === 'string' ? schema.type : '',
    listType: typeof schema['x-kubernetes-list-type'] === 'string' ? schema['x-kubernetes-list-type'] : undefined,
    listMapKeys: Array.isArray(listMapKeys) ? listMapKeys.filter((k): k is string => typeof k === 'string') : undefined,
    rules,
    properties,
    items: itemsSchema !== undefined && hasRules(itemsSchema) ? compileNode(itemsSchema, false) : undefined,
    additional: additionalSchema !== undefined && hasRules(additionalSchema) ? compileNode(additionalSchema, false) : undefined,
  };
}

const CACHE_SIZE = 256;
const compiledTrees = new Map<string, RuleNode | null>();

function ruleTree(cacheKey: string, schema: Obj): RuleNode | undefined {
  let tree = compiledTrees.get(cacheKey);
  if (tree === undefined) {
    tree = hasRules(schema) ? compileNode(schema, true) : null;
    if (compiledTrees.size >= CACHE_SIZE) {
      const oldest = compiledTrees.keys().next().value;
      if (oldest !== undefined) compiledTrees.delete(oldest);
    }
    compiledTrees.set(cacheKey, tree);
  }
  return tree ?? undefined;
}

function ruleErrorString(rule: ValidationRule): string {
  return (rule.message ?? '').trim() !== '' ? (rule.message ?? '').trim() : rule.rule.trim();
}

function valueText(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** kube's field error for a failed rule (objects and lists are not printed as values). */
function ruleCause(field: string, value: unknown, omitValue: boolean, detail: string, reason: string | undefined): StatusCause {
  const shown = omitValue ? '' : `${valueText(value)}: `;
  switch (reason) {
    case 'FieldValueForbidden':
      return { reason, field, message: detail === '' ? 'Forbidden' : `Forbidden: ${detail}` };
    case 'FieldValueRequired':
      return { reason, field, message: detail === '' ? 'Required value' : `Required value: ${detail}` };
    case 'FieldValueDuplicate':
      return { reason, field, message: omitValue ? 'Duplicate value' : `Duplicate value: ${valueText(value)}` };
    default:
      return { reason: 'FieldValueInvalid', field, message: `Invalid value: ${shown}${detail}` };
  }
}

function invalid(field: string, value: BadValue | undefined, detail: string): StatusCause {
  return { reason: 'FieldValueInvalid', field, message: `Invalid value: ${valueText(value ?? null)}: ${detail}` };
}

interface Walk {
  causes: StatusCause[];
  budget: number;
  stopped: boolean;
}

/** kube's message for a messageExpression's result; undefined falls back to the rule's message. */
function messageOf(program: Program, activation: Record<string, unknown>, walk: Walk): string | undefined | null {
  const { evaluate, fromCel } = cel();
  const r = evaluate(program, activation, { costBudget: Math.min(PER_CALL_LIMIT, walk.budget) });
  walk.budget -= r.cost;
  if (r.error !== undefined) return r.exceeded === true ? null : undefined;
  const v = fromCel(r.value);
  if (typeof v !== 'string') return undefined;
  const trimmed = v.trim();
  if (trimmed === '' || /\n/.test(trimmed) || trimmed.length > 5000) return undefined;
  return trimmed;
}

function validateNode(node: RuleNode, field: string, value: unknown, old: unknown, hasOld: boolean, walk: Walk): void {
  if (walk.stopped || value === undefined || value === null) return;
  if (node.rules.length > 0) {
    const { evaluate, optionalValue, toCelInput } = cel();
    const typeField = field === '' ? '<nil>' : field;
    const self = toCelInput(value, node.type);
    const oldSelf = hasOld ? toCelInput(old, node.type) : undefined;
    const unchanged = hasOld && jsonEqual(value, old);
    for (const compiled of node.rules) {
      if (walk.stopped) return;
      const { rule } = compiled;
      if (compiled.error !== undefined) {
        walk.causes.push(invalid(typeField, node.schemaType, `rule compile error: ${compiled.error}`));
        continue;
      }
      if (compiled.program === undefined) continue;
      const optionalOld = rule.optionalOldSelf === true;
      if (compiled.usesOldSelf && !hasOld && !optionalOld) continue;
      if (walk.budget <= 0) {
        walk.causes.push(invalid(typeField, node.schemaType, 'validation failed due to running out of cost budget, no further validation rules will be run'));
        walk.stopped = true;
        return;
      }
      const activation = { self, oldSelf: optionalOld ? optionalValue(hasOld ? (toCelInput(old, node.type) as never) : undefined) : oldSelf };
      const r = evaluate(compiled.program, activation, { costBudget: Math.min(PER_CALL_LIMIT, walk.budget) });
      if (r.exceeded === true) {
        if (walk.budget < PER_CALL_LIMIT) {
          walk.causes.push(invalid(typeField, node.schemaType, 'validation failed due to running out of cost budget, no further validation rules will be run'));
        } else {
          walk.causes.push(
            invalid(
              typeField,
              node.schemaType,
              `'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleErrorString(rule)}`,
            ),
          );
        }
        walk.stopped = true;
        return;
      }
      walk.budget -= r.cost;
      if (r.error !== undefined) {
        const detail = r.error.startsWith('no such overload')
          ? `'${r.error}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(rule)}`
          : `${r.error} evaluating rule: ${ruleErrorString(rule)}`;
        walk.causes.push(invalid(typeField, node.schemaType, detail));
        continue;
      }
      if (r.value === true) continue;
      if (!compiled.usesOldSelf && unchanged) continue;
      let detail: string | undefined;
      if (compiled.messageProgram !== undefined) {
        const m = messageOf(compiled.messageProgram, { self, oldSelf }, walk);
        if (m === null) {
          walk.causes.push(
            invalid(
              typeField,
              node.schemaType,
              `no further validation rules will be run due to call cost exceeds limit for messageExpression: ${goQuote(rule.messageExpression ?? '')}`,
            ),
          );
          walk.stopped = true;
          return;
        }
        detail = m;
      }
      detail ??= (rule.message ?? '').trim() !== '' ? (rule.message ?? '').trim() : `failed rule: ${ruleErrorString(rule)}`;
      const path = compiled.pathSuffix === '' ? typeField : `${field}${compiled.pathSuffix}`.replace(/^\./, '');
      const omit = node.schemaType === 'object' || node.schemaType === 'array';
      walk.causes.push(ruleCause(path, value, omit, detail, rule.reason));
    }
  }
  if (Array.isArray(value) && node.items !== undefined) {
    const oldList = hasOld && Array.isArray(old) ? old : [];
    value.forEach((item, i) => {
      let oldItem: unknown;
      if (node.listType === 'map' && node.listMapKeys !== undefined && isObject(item)) {
        const keys = node.listMapKeys;
        oldItem = oldList.find((o) => isObject(o) && keys.every((k) => jsonEqual(o[k], item[k])));
      }
      validateNode(node.items!, `${field}[${i}]`, item, oldItem, oldItem !== undefined, walk);
    });
  } else if (isObject(value) && !Array.isArray(value)) {
    const oldObj = hasOld && isObject(old) ? old : undefined;
    for (const [k, v] of Object.entries(value)) {
      const sub = node.properties.get(k);
      const child = sub ?? (node.properties.size === 0 ? node.additional : undefined);
      if (child === undefined) continue;
      const path = sub !== undefined ? (field === '' ? k : `${field}.${k}`) : `${field}[${k}]`;
      const o = oldObj?.[k];
      validateNode(child, path, v, o, o !== undefined, walk);
    }
  }
}

/** Reasons of schema findings after which kube does not run the rules. */
const BLOCKING = new Set(['FieldValueNotSupported', 'FieldValueRequired', 'FieldValueTooLong', 'FieldValueTooMany', 'FieldValueTypeInvalid']);

/**
 * The findings of the CEL rules of SCHEMA (cached under CACHEKEY) for OBJ, OLD on update; SCHEMACAUSES
 * are the schema validation's findings (rules are not run after a blocking one, as kube does).
 */
export function validateByRules(obj: Obj, old: Obj | undefined, cacheKey: string, schema: Obj, schemaCauses: StatusCause[]): StatusCause[] {
  const tree = ruleTree(cacheKey, schema);
  if (tree === undefined) return [];
  if (schemaCauses.some((c) => BLOCKING.has(c.reason ?? ''))) {
    return [
      {
        reason: 'FieldValueInvalid',
        field: '<nil>',
        message:
          'Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
      },
    ];
  }
  const walk: Walk = { causes: [], budget: RUNTIME_CEL_COST_BUDGET, stopped: false };
  validateNode(tree, '', obj, old, old !== undefined, walk);
  return walk.causes;
}
