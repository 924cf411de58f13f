/**
 * kube-apiserver 1.36's Node validation beyond metadata (checked against test/golden/validation/):
 * taints (qualified-name keys, label values, a supported effect, unique by key and effect — kube
 * reports them under `metadata.taints`), status capacity and allocatable quantities (allocatable
 * defaults to capacity, as kube's defaulting does), a positive swap capacity (reported under
 * `metadata.nodeSwapStatus`), and pod CIDRs (valid, at most one per IP family). On update the pod
 * CIDRs and provider ID may only be set once, externalID never changes, and duplicate status
 * addresses are refused; the status itself is the stored one (PUT does not change it).
 * Not checked yet: taints and avoid-pods given in node annotations, status.declaredFeatures, and
 * spec.configSource (kube drops it unless the stored node already has one).
 */
import type { StatusCause } from '../api/errors.js';
import { duplicateField, forbiddenField, goJson, invalidField, notSupportedField, requiredField } from './field-errors.js';
import { asIPv4, legacyCIDRProblems, parseCIDR } from './ip-formats.js';
import { validateResourceQuantity } from './resource-names.js';
import { isLabelKey, isLabelValue } from './string-formats.js';
import { asArray, asObject, asString, type Obj, objectOrUndefined } from '../api/values.js';
import { objects } from './value-access.js';

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** The Go JSON of an internal core.Taint (no JSON tags: Go's field names), as a duplicate-taint error prints it. */
function goTaint(t: Obj): unknown {
  return { Key: asString(t.key), Value: asString(t.value), Effect: asString(t.effect), TimeAdded: typeof t.timeAdded === 'string' ? t.timeAdded : null };
}

function taintsCauses(taints: Obj[]): StatusCause[] {
  const causes: StatusCause[] = [];
  const seen = new Map<string, Set<string>>();
  taints.forEach((taint, i) => {
    const at = `metadata.taints[${i}]`;
    const key = asString(taint.key);
    causes.push(...isLabelKey(key).map((m) => invalidField(`${at}.key`, key, m)));
    const value = asString(taint.value);
    const valueErrs = isLabelValue(value);
    if (valueErrs.length > 0) causes.push(invalidField(`${at}.value`, value, valueErrs.join(';')));
    const effect = asString(taint.effect);
    if (effect === '') causes.push(requiredField(`${at}.effect`));
    else if (!TAINT_EFFECTS.includes(effect)) causes.push(notSupportedField(`${at}.effect`, effect, TAINT_EFFECTS));
    const keys = seen.get(effect) ?? new Set<string>();
    if (keys.has(key)) {
      const dup = duplicateField(at, goJson(goTaint(taint)));
      causes.push({ ...dup, message: `${dup.message ?? ''}: taints must be unique by key and effect pair` });
      return;
    }
    keys.add(key);
    seen.set(effect, keys);
  });
  return causes;
}

function resourceCauses(status: Obj): StatusCause[] {
  const causes: StatusCause[] = [];
  const capacity = objectOrUndefined(status.capacity);
  const allocatable = objectOrUndefined(status.allocatable) ?? capacity;
  for (const [name, quantities] of [
    ['capacity', capacity],
    ['allocatable', allocatable],
  ] as const) {
    for (const [resource, q] of Object.entries(quantities ?? {})) {
      if (typeof q === 'string') causes.push(...validateResourceQuantity(resource, q, `status.${name}.${resource}`));
    }
  }
  return causes;
}

function podCIDRsCauses(cidrs: string[]): StatusCause[] {
  if (cidrs.length === 0) return [];
  const causes: StatusCause[] = [];
  cidrs.forEach((c, i) => causes.push(...legacyCIDRProblems(c).map((m) => invalidField(`spec.podCIDRs[${i}]`, c, m))));
  if (cidrs.length > 1) {
    const families = cidrs.map((c) => {
      const parsed = parseCIDR(c);
      return parsed === undefined ? undefined : asIPv4(parsed.network) !== undefined;
    });
    const unparsable = families.indexOf(undefined);
    if (unparsable >= 0) {
      causes.push({
        reason: 'InternalError',
        field: 'spec.podCIDRs',
        message: `Internal error: invalid PodCIDRs. failed to check with dual stack with error:invalid CIDR[${unparsable}]: <nil> (invalid CIDR address: ${cidrs[unparsable] ?? ''})`,
      });
    }
    const dualStack = cidrs.length === 2 && families[0] !== undefined && families[1] !== undefined && families[0] !== families[1];
    if (!dualStack || cidrs.length > 2) causes.push(invalidField('spec.podCIDRs', goJson(cidrs), 'may specify no more than one CIDR for each IP family'));
  }
  return causes;
}

/** spec.podCIDRs as kube's v1 conversion reads them: podCIDR wins when it is set and differs. */
function podCIDRsOf(spec: Obj): string[] {
  const cidrs = asArray(spec.podCIDRs).map(asString);
  const cidr = asString(spec.podCIDR);
  if (cidr !== '' && (cidrs.length === 0 || cidrs[0] !== cidr)) return [cidr];
  return cidrs;
}

function nodeCauses(node: Obj): StatusCause[] {
  const spec = asObject(node.spec);
  const status = asObject(node.status);
  const causes = taintsCauses(objects(spec.taints));
  causes.push(...resourceCauses(status));
  const swap = asObject(asObject(status.nodeInfo).swap).capacity;
  if (typeof swap === 'number' && swap <= 0) causes.push(invalidField('metadata.nodeSwapStatus.capacity', swap, 'must be greater than zero'));
  causes.push(...podCIDRsCauses(podCIDRsOf(spec)));
  return causes;
}

function updateCauses(node: Obj, old: Obj): StatusCause[] {
  const spec = asObject(node.spec);
  const oldSpec = asObject(old.spec);
  const status = asObject(node.status);
  const causes = resourceCauses(status);
  const seen = new Set<string>();
  objects(status.addresses).forEach((a, i) => {
    const key = JSON.stringify([asString(a.type), asString(a.address)]);
    if (seen.has(key)) causes.push(duplicateField(`status.addresses[${i}]`, goJson({ type: asString(a.type), address: asString(a.address) })));
    seen.add(key);
  });
  const cidrs = podCIDRsOf(spec);
  const oldCidrs = podCIDRsOf(oldSpec);
  const cidrMessage = 'node updates may not change podCIDR except from "" to valid';
  if (oldCidrs.length > 0) {
    if (oldCidrs.length !== cidrs.length) causes.push(forbiddenField('spec.podCIDRs', cidrMessage));
    else
      oldCidrs.forEach((c, i) => {
        if (c !== cidrs[i]) causes.push(forbiddenField('spec.podCIDRs', cidrMessage));
      });
  }
  const oldProvider = asString(oldSpec.providerID);
  if (oldProvider !== '' && oldProvider !== asString(spec.providerID)) {
    causes.push(forbiddenField('spec.providerID', 'node updates may not change providerID except from "" to valid'));
  }
  causes.push(...taintsCauses(objects(spec.taints)));
  if (asString(spec.externalID) !== asString(oldSpec.externalID)) causes.push(forbiddenField('spec.externalID', 'may not be updated'));
  return causes;
}

/** A Node's own checks (create, or update given the stored node, whose status the update keeps). */
export function validateNode(node: Obj, old?: Obj): StatusCause[] {
  if (old === undefined) return nodeCauses(node);
  const updated = { ...node, status: old.status };
  return [...nodeCauses(updated), ...updateCauses(updated, old)];
}
