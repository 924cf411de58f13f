/**
 * kube-apiserver 1.36's ResourceQuota validation beyond metadata, checked against
 * test/golden/validation/: hard limits (resource names known to quota, quantities non-negative and
 * whole for counted resources), scopes (known, fitting every hard resource, not contradicting each
 * other) and the scope selector (known scopes, operators and values), and on update unchanged scopes.
 * Create drops status and update keeps the stored one; status writes check status.hard and
 * status.used as spec.hard is checked.
 */
import type { StatusCause } from '../api/errors.js';
import { FIELD_IMMUTABLE } from './object-meta.js';
import { goJson, invalidField, requiredField } from './field-errors.js';
import { isStandardQuotaResource, validateQuotaResourceName, validateResourceQuantity } from './resource-names.js';
import { asArray, asObject, asString, type Obj, objectOrUndefined } from '../api/values.js';
import { objects } from './value-access.js';

const SCOPES = new Set(['Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort', 'PriorityClass', 'VolumeAttributesClass', 'CrossNamespacePodAffinity']);
/** Scopes that only exist or not: a selector may only ask whether they apply. */
const EXISTS_ONLY_SCOPES = new Set(['BestEffort', 'NotBestEffort', 'Terminating', 'NotTerminating', 'CrossNamespacePodAffinity']);
const CONFLICTING_SCOPES = [
  ['BestEffort', 'NotBestEffort'],
  ['Terminating', 'NotTerminating'],
];
const POD_COMPUTE = new Set(['cpu', 'memory', 'limits.cpu', 'limits.memory', 'requests.cpu', 'requests.memory']);

/** IsResourceQuotaScopeValidForResource. */
function scopeFitsResource(scope: string, resource: string): boolean {
  switch (scope) {
    case 'Terminating':
    case 'NotTerminating':
    case 'NotBestEffort':
    case 'PriorityClass':
    case 'CrossNamespacePodAffinity':
      return resource === 'pods' || POD_COMPUTE.has(resource);
    case 'BestEffort':
      return resource === 'pods';
    case 'VolumeAttributesClass':
      return resource === 'persistentvolumeclaims' || resource === 'requests.storage';
    default:
      return true;
  }
}

/** The standard quota resources among the hard limits that `scope` does not apply to (one cause each, in name order). */
function misfits(scope: string, hard: readonly string[]): number {
  return hard.filter((k) => isStandardQuotaResource(k) && !scopeFitsResource(scope, k)).length;
}

/** The scopes as kube prints them in a field error (null when unset). */
function scopesValue(spec: Obj): ReturnType<typeof goJson> {
  return goJson(Array.isArray(spec.scopes) ? spec.scopes : null);
}

/** The internal ScopeSelector as Go's JSON prints it (no JSON tags: Go field names). */
function scopeSelectorValue(selector: Obj): ReturnType<typeof goJson> {
  const expressions = objects(selector.matchExpressions).map((e) => ({
    ScopeName: asString(e.scopeName),
    Operator: asString(e.operator),
    Values: Array.isArray(e.values) ? e.values : null,
  }));
  return goJson({ MatchExpressions: Array.isArray(selector.matchExpressions) ? expressions : null });
}

function conflictCauses(scopes: Set<string>, field: string, value: ReturnType<typeof goJson>): StatusCause[] {
  return CONFLICTING_SCOPES.filter((pair) => pair.every((s) => scopes.has(s))).map(() => invalidField(field, value, 'conflicting scopes'));
}

/** validateResourceQuotaScopes. */
function validateScopes(spec: Obj, hard: readonly string[]): StatusCause[] {
  const scopes = asArray(spec.scopes).map(asString);
  if (scopes.length === 0) return [];
  const value = scopesValue(spec);
  const causes: StatusCause[] = [];
  for (const scope of scopes) {
    if (!SCOPES.has(scope)) causes.push(invalidField('spec.scopes', value, 'unsupported scope'));
    for (let i = misfits(scope, hard); i > 0; i--) causes.push(invalidField('spec.scopes', value, 'unsupported scope applied to resource'));
  }
  return [...causes, ...conflictCauses(new Set(scopes), 'spec.scopes', value)];
}

/** validateScopedResourceSelectorRequirement (nothing to check without a selector). */
function validateScopeSelector(spec: Obj, hard: readonly string[]): StatusCause[] {
  const selector = objectOrUndefined(spec.scopeSelector);
  if (selector === undefined) return [];
  const field = 'spec.scopeSelector.matchExpressions';
  const causes: StatusCause[] = [];
  const scopes = new Set<string>();
  for (const e of objects(selector.matchExpressions)) {
    const scope = asString(e.scopeName);
    const operator = asString(e.operator);
    const values = asArray(e.values);
    if (!SCOPES.has(scope)) causes.push(invalidField(`${field}.scopeName`, goJson(scope), 'unsupported scope'));
    for (let i = misfits(scope, hard); i > 0; i--) causes.push(invalidField(field, scopeSelectorValue(selector), 'unsupported scope applied to resource'));
    if (EXISTS_ONLY_SCOPES.has(scope) && operator !== 'Exists') {
      causes.push(
        invalidField(
          `${field}.operator`,
          goJson(operator),
          "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
        ),
      );
    }
    if (operator === 'In' || operator === 'NotIn') {
      if (values.length === 0)
        causes.push(requiredField(`${field}.values`, "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"));
    } else if (operator === 'Exists' || operator === 'DoesNotExist') {
      if (values.length > 0)
        causes.push(invalidField(`${field}.values`, goJson(values), "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"));
    } else {
      causes.push(invalidField(`${field}.operator`, goJson(operator), 'not a valid selector operator'));
    }
    scopes.add(scope);
  }
  // kube prints spec.scopes here, not the selector.
  return [...causes, ...conflictCauses(scopes, field, scopesValue(spec))];
}

/** ValidateResourceQuotaSpec, plus (on update) ValidateResourceQuotaUpdate's unchanged scopes. */
export function validateResourceQuota(rq: Obj, old?: Obj): StatusCause[] {
  const spec = asObject(rq.spec);
  const hard = Object.keys(asObject(spec.hard)).sort();
  const causes = resourceListCauses(spec.hard, 'spec.hard');
  causes.push(...validateScopes(spec, hard), ...validateScopeSelector(spec, hard));
  if (old !== undefined) {
    const next = new Set(asArray(spec.scopes).map(asString));
    const prev = new Set(asArray(asObject(old.spec).scopes).map(asString));
    const same = next.size === prev.size && [...next].every((s) => prev.has(s));
    if (!same) causes.push(invalidField('spec.scopes', scopesValue(spec), FIELD_IMMUTABLE));
  }
  return causes;
}

/** The resource names and quantities of one resource list at `field`. */
function resourceListCauses(resources: unknown, field: string): StatusCause[] {
  const quantities = asObject(resources);
  return Object.keys(quantities)
    .sort()
    .flatMap((k) => [...validateQuotaResourceName(k, `${field}[${k}]`), ...validateResourceQuantity(k, quantities[k], `${field}[${k}]`)]);
}

/** ValidateResourceQuotaStatusUpdate: status.hard and status.used (the resourceVersion is always set here). */
export function validateResourceQuotaStatus(rq: Obj): StatusCause[] {
  const status = asObject(rq.status);
  return [...resourceListCauses(status.hard, 'status.hard'), ...resourceListCauses(status.used, 'status.used')];
}
