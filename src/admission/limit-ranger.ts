import type { ResourceInfo } from '../api/resource-info.js';
import { forbidden } from '../api/errors.js';
import type { Obj } from '../api/object-util.js';
import { canonicalQuantity, milliValueOf, quantityIntegerValue } from '../api/quantity.js';
import type { Storage } from '../storage/storage.js';
import { aggregateContainerLimits, aggregateContainerRequests } from '../validation/pod-resource-totals.js';
import type { ResourceTotals } from '../validation/quantity-sum.js';
import { asObject } from '../api/values.js';
import { objects, stringEntries } from '../validation/value-access.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';

/** The annotation naming the defaults LimitRanger filled in. */
const LIMIT_RANGER_ANNOTATION = 'kubernetes.io/limit-ranger';
/** Quantity.MaxMilliValue: above it kube compares whole values instead of milli-values. */
const MAX_MILLI_VALUE = (2n ** 63n - 1n) / 1000n;
/** Pod-level resources that override the containers' totals for `Pod` limits. */
const POD_LEVEL = new Set(['cpu', 'memory']);

/**
 * kube's LimitRanger plugin. Every LimitRange of the namespace applies, in turn, to Pod creates and
 * PersistentVolumeClaim creates and updates (and to pod `resize` updates):
 * - mutating: containers without a request or limit get the `Container` limits' `defaultRequest` and
 *   `default`, recorded in the `kubernetes.io/limit-ranger` annotation;
 * - validating: `min`, `max` and `maxLimitRequestRatio` of `Container`, `Pod` and
 *   `PersistentVolumeClaim` limits, refused with 403 and kube's messages
 *   (`pods "p" is forbidden: maximum cpu usage per Container is 1, but limit is 2`), several as
 *   `[a, b]`. Objects being deleted are left alone.
 */
export class LimitRanger implements AdmissionPlugin {
  readonly name = 'LimitRanger';

  constructor(private readonly storage: Storage) {}

  /** Pods and claims only. */
  handles(_operation: AdmissionAttributes['operation'], info: ResourceInfo, _subresource: string): boolean {
    return info.group === '' && (info.resource === 'pods' || info.resource === 'persistentvolumeclaims');
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (!applies(a) || a.info.resource !== 'pods') return;
    const pod = a.object as Obj;
    for (const range of await this.limitRanges(a.namespace)) mergeDefaults(pod, range);
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!applies(a)) return;
    const object = a.object as Obj;
    for (const range of await this.limitRanges(a.namespace)) {
      const problems = a.info.resource === 'pods' ? podProblems(range, object) : claimProblems(range, object);
      if (problems.length > 0) throw forbidden({ group: '', resource: a.info.resource }, a.name, aggregate(problems));
    }
  }

  private async limitRanges(namespace: string): Promise<Obj[]> {
    const listed = await this.storage.list('limitranges', { namespace });
    return listed.items.map((item) => JSON.parse(item.json) as Obj);
  }
}

/** SupportsAttributes: Pod creates and resizes, PersistentVolumeClaim writes, never objects being deleted. */
function applies(a: AdmissionAttributes): boolean {
  if (a.info.group !== '' || a.object === undefined) return false;
  if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return false;
  const resource = a.info.resource;
  const supported =
    a.subresource === 'resize'
      ? resource === 'pods' && a.operation === 'UPDATE'
      : a.subresource === '' && (resource === 'persistentvolumeclaims' || (resource === 'pods' && a.operation === 'CREATE'));
  if (!supported) return false;
  return asObject(a.oldObject?.metadata).deletionTimestamp == null;
}

function limitsOf(range: Obj): Obj[] {
  return objects(asObject(range.spec).limits);
}

function resourceList(value: unknown): ResourceTotals {
  return new Map(stringEntries(asObject(value)));
}

/** The pod with the first-listed defaults of `range`'s Container limits filled into each container. */
function mergeDefaults(pod: Obj, range: Obj): void {
  const requests = new Map<string, unknown>();
  const limits = new Map<string, unknown>();
  for (const limit of limitsOf(range)) {
    if (limit.type !== 'Container') continue;
    for (const [k, v] of Object.entries(asObject(limit.defaultRequest))) requests.set(k, v);
    for (const [k, v] of Object.entries(asObject(limit.default))) limits.set(k, v);
  }
  const spec = asObject(pod.spec);
  const notes = [
    ...objects(spec.containers).flatMap((c) => mergeContainer(c, requests, limits, 'container')),
    ...objects(spec.initContainers).flatMap((c) => mergeContainer(c, requests, limits, 'init container')),
  ];
  if (notes.length === 0) return;
  const metadata = asObject(pod.metadata);
  pod.metadata = metadata;
  metadata.annotations = { ...asObject(metadata.annotations), [LIMIT_RANGER_ANNOTATION]: `LimitRanger plugin set: ${notes.join('; ')}` };
}

function mergeContainer(container: Obj, requests: Map<string, unknown>, limits: Map<string, unknown>, label: string): string[] {
  const resources = asObject(container.resources);
  container.resources = resources;
  const fill = (key: 'requests' | 'limits', defaults: Map<string, unknown>): string[] => {
    const current = asObject(resources[key]);
    const set = [...defaults.keys()].filter((name) => !(name in current));
    for (const name of set) current[name] = defaults.get(name);
    if (Object.keys(current).length > 0) resources[key] = current;
    return set.sort();
  };
  const setLimits = fill('limits', limits);
  const setRequests = fill('requests', requests);
  const notes: string[] = [];
  if (setRequests.length > 0) notes.push(`${setRequests.join(', ')} request for ${label} ${String(container.name)}`);
  if (setLimits.length > 0) notes.push(`${setLimits.join(', ')} limit for ${label} ${String(container.name)}`);
  return notes;
}

/** Values compared at a common precision: milli-values unless one is too large for them. */
function comparable(...quantities: (string | undefined)[]): bigint[] {
  const whole = quantities.map((q) => (q === undefined ? 0n : (quantityIntegerValue(q) ?? 0n)));
  if (whole.some((v) => v > MAX_MILLI_VALUE)) return whole;
  return quantities.map((q) => (q === undefined ? 0n : (milliValueOf(q) ?? 0n)));
}

const shown = (q: string | undefined): string => canonicalQuantity(q ?? '0');

type Constraint = (type: string, name: string, enforced: string, request: ResourceTotals, limit: ResourceTotals) => string | undefined;

const minConstraint: Constraint = (type, name, enforced, request, limit) => {
  const req = request.get(name);
  const lim = limit.get(name);
  const [r, l, e] = comparable(req, lim, enforced);
  if (req === undefined) return `minimum ${name} usage per ${type} is ${shown(enforced)}.  No request is specified`;
  if (r < e) return `minimum ${name} usage per ${type} is ${shown(enforced)}, but request is ${shown(req)}`;
  if (lim !== undefined && l < e) return `minimum ${name} usage per ${type} is ${shown(enforced)}, but limit is ${shown(lim)}`;
  return undefined;
};

const maxConstraint: Constraint = (type, name, enforced, request, limit) => {
  const req = request.get(name);
  const lim = limit.get(name);
  const [r, l, e] = comparable(req, lim, enforced);
  if (lim === undefined) return `maximum ${name} usage per ${type} is ${shown(enforced)}.  No limit is specified`;
  if (l > e) return `maximum ${name} usage per ${type} is ${shown(enforced)}, but limit is ${shown(lim)}`;
  if (req !== undefined && r > e) return `maximum ${name} usage per ${type} is ${shown(enforced)}, but request is ${shown(req)}`;
  return undefined;
};

/** The max of a claim's storage is held against its request only. */
const maxRequestConstraint: Constraint = (type, name, enforced, request) => {
  const req = request.get(name);
  const [r, , e] = comparable(req, undefined, enforced);
  if (req === undefined) return `maximum ${name} usage per ${type} is ${shown(enforced)}.  No request is specified`;
  if (r > e) return `maximum ${name} usage per ${type} is ${shown(enforced)}, but request is ${shown(req)}`;
  return undefined;
};

const ratioConstraint: Constraint = (type, name, enforced, request, limit) => {
  const req = request.get(name);
  const lim = limit.get(name);
  const [r, l] = comparable(req, lim, enforced);
  if (req === undefined || r === 0n) {
    return `${name} max limit to request ratio per ${type} is ${shown(enforced)}, but no request is specified or request is 0`;
  }
  if (lim === undefined || l === 0n) {
    return `${name} max limit to request ratio per ${type} is ${shown(enforced)}, but no limit is specified or limit is 0`;
  }
  const displayed = Number(l) / Number(r);
  const whole = quantityIntegerValue(enforced) ?? 0n;
  const [observed, allowed] = whole <= MAX_MILLI_VALUE ? [displayed * 1000, Number(milliValueOf(enforced) ?? 0n)] : [displayed, Number(whole)];
  if (observed > allowed) return `${name} max limit to request ratio per ${type} is ${shown(enforced)}, but provided ratio is ${displayed.toFixed(6)}`;
  return undefined;
};

/** Every constraint of one limit against one set of requests and limits. */
function check(limit: Obj, request: ResourceTotals, limits: ResourceTotals, constraints: [string, Constraint][]): string[] {
  const type = String(limit.type);
  const problems: string[] = [];
  for (const [field, constraint] of constraints) {
    for (const [name, enforced] of stringEntries(asObject(limit[field]))) {
      const problem = constraint(type, name, enforced, request, limits);
      if (problem !== undefined) problems.push(problem);
    }
  }
  return problems;
}

const POD_CONSTRAINTS: [string, Constraint][] = [
  ['min', minConstraint],
  ['max', maxConstraint],
  ['maxLimitRequestRatio', ratioConstraint],
];

function podProblems(range: Obj, pod: Obj): string[] {
  const spec = asObject(pod.spec);
  const problems: string[] = [];
  for (const limit of limitsOf(range)) {
    if (limit.type === 'Container') {
      for (const c of [...objects(spec.containers), ...objects(spec.initContainers)]) {
        const resources = asObject(c.resources);
        problems.push(...check(limit, resourceList(resources.requests), resourceList(resources.limits), POD_CONSTRAINTS));
      }
    }
    if (limit.type === 'Pod') {
      const requests = aggregateContainerRequests(spec);
      const limits = aggregateContainerLimits(spec);
      const podLevel = asObject(spec.resources);
      for (const [name, q] of stringEntries(asObject(podLevel.requests))) if (POD_LEVEL.has(name)) requests.set(name, q);
      for (const [name, q] of stringEntries(asObject(podLevel.limits))) if (POD_LEVEL.has(name)) limits.set(name, q);
      problems.push(...check(limit, requests, limits, POD_CONSTRAINTS));
    }
  }
  return problems;
}

function claimProblems(range: Obj, claim: Obj): string[] {
  const requests = resourceList(asObject(asObject(claim.spec).resources).requests);
  return limitsOf(range)
    .filter((limit) => limit.type === 'PersistentVolumeClaim')
    .flatMap((limit) =>
      check(limit, requests, new Map(), [
        ['min', minConstraint],
        ['max', maxRequestConstraint],
      ]),
    );
}

/** utilerrors.NewAggregate(...).Error(): one message alone, several (repeats dropped) as `[a, b]`. */
function aggregate(messages: string[]): string {
  if (messages.length === 1) return messages[0];
  const unique = [...new Set(messages)];
  return unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`;
}
