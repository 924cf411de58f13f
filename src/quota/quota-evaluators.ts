/**
 * What an object costs in quota, as kube's quota evaluators (k8s.io/kubernetes/pkg/quota/v1/evaluator/core
 * and the generic object-count evaluator) count it: which quota resources each kind is charged for,
 * its usage, which quota scopes it falls in, which writes are charged, and the pod constraints
 * (`must specify limits.cpu for: c`).
 */
import type { Obj } from '../api/object-util.js';
import { compareQuantities, isWholeQuantity, quantityIntegerValue } from '../api/quantity.js';
import { podQosClass } from '../validation/pod-qos.js';
import { aggregateContainerLimits, aggregateContainerRequests } from '../validation/pod-resource-totals.js';
import { isPodLevelResource } from '../validation/pod-resources.js';
import { asObject } from '../api/values.js';
import { objects } from '../validation/value-access.js';
import { addLists, resourceListOf, type ResourceList } from './resource-list.js';

/** One term of a quota's scopes: `scopes` entries are `Exists` terms. */
export interface ScopeRequirement {
  scopeName: string;
  operator: string;
  values: string[];
}

export interface QuotaEvaluator {
  /** The quota resources among `names` this kind is charged for. */
  matchingResources(names: readonly string[]): string[];
  /** The object's usage. */
  usage(object: Obj, now: number): ResourceList;
  /** Whether the object falls in a scope (kinds without scopes: never). */
  matchesScope(scope: ScopeRequirement, object: Obj): boolean;
  /** Whether a write is charged at admission. */
  handles(operation: string, subresource: string, object: Obj | undefined, old: Obj | undefined): boolean;
  /** Why the object cannot be charged against quotas tracking `required` (pods only). */
  constraints(required: readonly string[], object: Obj): string | undefined;
}

/** The `count/<resource>[.<group>]` quota resource of a group and resource. */
export function objectCountName(group: string, resource: string): string {
  return group === '' ? `count/${resource}` : `count/${resource}.${group}`;
}

const one = (): string => '1';
const noScope = (): boolean => false;
const noConstraints = (): undefined => undefined;

/** The object-count evaluator: creates are charged 1 of `count/...` (and a legacy alias). */
function objectCounter(group: string, resource: string, alias?: string): QuotaEvaluator {
  const names = [objectCountName(group, resource), ...(alias === undefined ? [] : [alias])];
  return {
    matchingResources: (input) => input.filter((n) => names.includes(n)),
    usage: () => new Map(names.map((n) => [n, one()])),
    matchesScope: noScope,
    handles: (operation, subresource) => subresource === '' && operation === 'CREATE',
    constraints: noConstraints,
  };
}

const POD_RESOURCES = [
  'count/pods',
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
];
/** Resources the pod constraints apply to: a quota on them needs every container to say its amount. */
const CONSTRAINED = ['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'];

/** helper.IsNativeResource: no domain, or a kubernetes.io one. */
const isNativeResource = (name: string): boolean => !name.includes('/') || name.includes('kubernetes.io/');
/** resource.k8s.io's prefix of the implicit extended resource of a DeviceClass (`deviceclass.resource.kubernetes.io/<class>`). */
const DEVICE_CLASS_RESOURCE_PREFIX = 'deviceclass.resource.kubernetes.io/';
/** An extended resource a pod may request: a non-native name, or a DeviceClass's implicit one. */
const isExtendedResource = (name: string): boolean => !isNativeResource(name) || name.startsWith(DEVICE_CLASS_RESOURCE_PREFIX);
/** An extended resource charged as `requests.<name>`. */
const isExtendedQuotaResource = (name: string): boolean => name.startsWith('requests.') && isExtendedResource(name.slice('requests.'.length));

/** podComputeUsageHelper: a pod's (or one container's) requests and limits as quota resources. */
function computeUsage(requests: ResourceList, limits: ResourceList): ResourceList {
  const usage: ResourceList = new Map([['pods', '1']]);
  for (const name of ['cpu', 'memory', 'ephemeral-storage']) {
    const request = requests.get(name);
    if (request !== undefined) {
      usage.set(name, request);
      usage.set(`requests.${name}`, request);
    }
    const limit = limits.get(name);
    if (limit !== undefined) usage.set(`limits.${name}`, limit);
  }
  for (const [name, request] of requests) {
    if (name.startsWith('hugepages-')) {
      usage.set(name, request);
      usage.set(`requests.${name}`, request);
    } else if (isExtendedResource(name)) usage.set(`requests.${name}`, request);
  }
  return usage;
}

/** PodRequests: the containers' aggregate, pod-level requests over it, plus the pod's overhead. */
function podRequests(spec: Obj): ResourceList {
  const requests = aggregateContainerRequests(spec);
  for (const [name, q] of resourceListOf(asObject(spec.resources).requests)) if (isPodLevelResource(name)) requests.set(name, q);
  return addLists(requests, resourceListOf(spec.overhead));
}

/** PodLimits: as requests, the overhead added only to resources that have a limit. */
function podLimits(spec: Obj): ResourceList {
  const limits = aggregateContainerLimits(spec);
  for (const [name, q] of resourceListOf(asObject(spec.resources).limits)) if (isPodLevelResource(name)) limits.set(name, q);
  const overhead = new Map([...resourceListOf(spec.overhead)].filter(([name]) => limits.has(name)));
  return addLists(limits, overhead);
}

/** QuotaV1Pod: terminal pods, and pods past their deletion grace period, use no compute quota. */
function chargedPod(pod: Obj, now: number): boolean {
  const phase = asObject(pod.status).phase;
  if (phase === 'Failed' || phase === 'Succeeded') return false;
  const meta = asObject(pod.metadata);
  if (typeof meta.deletionTimestamp === 'string' && typeof meta.deletionGracePeriodSeconds === 'number') {
    if (now > Date.parse(meta.deletionTimestamp) + meta.deletionGracePeriodSeconds * 1000) return false;
  }
  return true;
}

/** A pod whose `activeDeadlineSeconds` ends it: the Terminating scope. */
const isTerminating = (pod: Obj): boolean =>
  typeof asObject(pod.spec).activeDeadlineSeconds === 'number' && (asObject(pod.spec).activeDeadlineSeconds as number) >= 0;

function usesCrossNamespaceAffinity(pod: Obj): boolean {
  const affinity = asObject(asObject(pod.spec).affinity);
  const crosses = (term: Obj): boolean =>
    (Array.isArray(term.namespaces) && term.namespaces.length > 0) || (term.namespaceSelector !== undefined && term.namespaceSelector !== null);
  for (const kind of [affinity.podAffinity, affinity.podAntiAffinity]) {
    const k = asObject(kind);
    if (objects(k.requiredDuringSchedulingIgnoredDuringExecution).some(crosses)) return true;
    if (objects(k.preferredDuringSchedulingIgnoredDuringExecution).some((w) => crosses(asObject(w.podAffinityTerm)))) return true;
  }
  return false;
}

/** ScopedResourceSelectorRequirementsAsSelector over `{scopeName: value}` (value absent when undefined). */
function selectorMatches(scope: ScopeRequirement, value: string | undefined): boolean {
  switch (scope.operator) {
    case 'In':
      return value !== undefined && scope.values.includes(value);
    case 'NotIn':
      return value === undefined || !scope.values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    default:
      return false;
  }
}

const podEvaluator: QuotaEvaluator = {
  matchingResources: (input) =>
    input.filter((n) => POD_RESOURCES.includes(n) || n.startsWith('hugepages-') || n.startsWith('requests.hugepages-') || isExtendedQuotaResource(n)),
  usage: (pod, now) => {
    const usage: ResourceList = new Map([['count/pods', '1']]);
    if (!chargedPod(pod, now)) return usage;
    const spec = asObject(pod.spec);
    return addLists(usage, computeUsage(podRequests(spec), podLimits(spec)));
  },
  matchesScope: (scope, pod) => {
    const spec = asObject(pod.spec);
    switch (scope.scopeName) {
      case 'Terminating':
        return isTerminating(pod);
      case 'NotTerminating':
        return !isTerminating(pod);
      case 'BestEffort':
        return podQosClass(pod) === 'BestEffort';
      case 'NotBestEffort':
        return podQosClass(pod) !== 'BestEffort';
      case 'PriorityClass': {
        const priorityClass = typeof spec.priorityClassName === 'string' && spec.priorityClassName !== '' ? spec.priorityClassName : undefined;
        return scope.operator === 'Exists' ? priorityClass !== undefined : selectorMatches(scope, priorityClass);
      }
      case 'CrossNamespacePodAffinity':
        return usesCrossNamespaceAffinity(pod);
      default:
        return false;
    }
  },
  handles: (operation, subresource, pod, old) => {
    if (subresource === 'resize') return operation === 'UPDATE';
    if (subresource !== '') return false;
    if (operation === 'UPDATE' && pod !== undefined && old !== undefined && isTerminating(pod) !== isTerminating(old)) return true;
    return operation === 'CREATE';
  },
  constraints: (required, pod) => {
    const spec = asObject(pod.spec);
    const podLevel = asObject(spec.resources);
    if (Object.keys(asObject(podLevel.requests)).length > 0 || Object.keys(asObject(podLevel.limits)).length > 0) return undefined;
    const wanted = required.filter((r) => CONSTRAINED.includes(r));
    const missing = new Map<string, Set<string>>();
    for (const c of [...objects(spec.containers), ...objects(spec.initContainers)]) {
      const resources = asObject(c.resources);
      const has = computeUsage(resourceListOf(resources.requests), resourceListOf(resources.limits));
      for (const r of wanted) {
        if (has.has(r)) continue;
        const names = missing.get(r) ?? new Set<string>();
        names.add(String(c.name));
        missing.set(r, names);
      }
    }
    if (missing.size === 0) return undefined;
    const sorted = (items: Iterable<string>): string[] => [...items].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return `must specify ${sorted(missing.keys())
      .map((r) => `${r} for: ${sorted(missing.get(r) as Set<string>).join(',')}`)
      .join('; ')}`;
  },
};

const SERVICE_RESOURCES = ['count/services', 'services', 'services.nodeports', 'services.loadbalancers'];

const serviceEvaluator: QuotaEvaluator = {
  matchingResources: (input) => input.filter((n) => SERVICE_RESOURCES.includes(n)),
  usage: (service) => {
    const spec = asObject(service.spec);
    const ports = objects(spec.ports);
    const usage: ResourceList = new Map([
      ['count/services', '1'],
      ['services', '1'],
      ['services.loadbalancers', '0'],
      ['services.nodeports', '0'],
    ]);
    if (spec.type === 'NodePort') usage.set('services.nodeports', String(ports.length));
    if (spec.type === 'LoadBalancer') {
      const withNodePorts =
        spec.allocateLoadBalancerNodePorts === false ? ports.filter((p) => typeof p.nodePort === 'number' && p.nodePort !== 0).length : ports.length;
      usage.set('services.nodeports', String(withNodePorts));
      usage.set('services.loadbalancers', '1');
    }
    return usage;
  },
  matchesScope: noScope,
  handles: (operation, subresource) => subresource === '' && (operation === 'CREATE' || operation === 'UPDATE'),
  constraints: noConstraints,
};

const STORAGE_CLASS_SUFFIX = '.storageclass.storage.k8s.io/';
const BETA_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

/** GetPersistentVolumeClaimClass: the beta annotation, else `storageClassName`. */
function claimClass(claim: Obj): string {
  const annotation = asObject(asObject(claim.metadata).annotations)[BETA_CLASS_ANNOTATION];
  if (typeof annotation === 'string') return annotation;
  const name = asObject(claim.spec).storageClassName;
  return typeof name === 'string' ? name : '';
}

/** A storage quantity rounded up to a whole number of bytes (Quantity.RoundUp(0)). */
function roundedUp(q: string): string {
  return isWholeQuantity(q) ? q : String(quantityIntegerValue(q) ?? 0n);
}

const claimEvaluator: QuotaEvaluator = {
  matchingResources: (input) =>
    input.filter(
      (n) =>
        n === 'count/persistentvolumeclaims' ||
        n === 'persistentvolumeclaims' ||
        n === 'requests.storage' ||
        n.endsWith(`${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`) ||
        n.endsWith(`${STORAGE_CLASS_SUFFIX}requests.storage`),
    ),
  usage: (claim) => {
    const usage: ResourceList = new Map([
      ['persistentvolumeclaims', '1'],
      ['count/persistentvolumeclaims', '1'],
    ]);
    const className = claimClass(claim);
    if (className !== '') usage.set(`${className}${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`, '1');
    let storage = resourceListOf(asObject(asObject(claim.spec).resources).requests).get('storage');
    if (storage !== undefined) {
      storage = roundedUp(storage);
      const allocated = resourceListOf(asObject(claim.status).allocatedResources).get('storage');
      if (allocated !== undefined && compareQuantities(allocated, storage) === 1) storage = roundedUp(allocated);
      usage.set('requests.storage', storage);
      if (className !== '') usage.set(`${className}${STORAGE_CLASS_SUFFIX}requests.storage`, storage);
    }
    return usage;
  },
  matchesScope: (scope, claim) => {
    if (scope.scopeName !== 'VolumeAttributesClass') return false;
    const names = new Set(
      [
        asObject(claim.spec).volumeAttributesClassName,
        asObject(claim.status).currentVolumeAttributesClassName,
        asObject(asObject(claim.status).modifyVolumeStatus).targetVolumeAttributesClassName,
      ].filter((n): n is string => typeof n === 'string' && n !== ''),
    );
    if (scope.operator === 'Exists') return names.size > 0;
    if (names.size === 0) return selectorMatches(scope, undefined);
    return [...names].some((n) => selectorMatches(scope, n));
  },
  handles: (operation, subresource, claim, old) => {
    if (subresource === '') return operation === 'CREATE' || operation === 'UPDATE';
    if (subresource !== 'status' || claim === undefined || old === undefined) return false;
    return (
      JSON.stringify(asObject(asObject(claim.status).allocatedResources).storage) !== JSON.stringify(asObject(asObject(old.status).allocatedResources).storage)
    );
  },
  constraints: noConstraints,
};

/** `<class>.deviceclass.resource.k8s.io/devices`: the devices a namespace's claims request of one DeviceClass. */
export const DEVICES_PER_CLASS_SUFFIX = '.deviceclass.resource.k8s.io/devices';
const CLAIM_COUNT = objectCountName('resource.k8s.io', 'resourceclaims');
/** resource.k8s.io's AllocationResultsMaxSize: what an `All` request is charged (its worst case). */
const ALLOCATION_RESULTS_MAX_SIZE = 32;

/** The devices one exact request (or subrequest) may be allocated; unknown modes count nothing. */
function requestedDevices(request: Obj): number {
  const mode = request.allocationMode ?? 'ExactCount';
  if (mode === 'All') return ALLOCATION_RESULTS_MAX_SIZE;
  if (mode !== 'ExactCount') return 0;
  return typeof request.count === 'number' ? request.count : 1;
}

/** What the claim evaluator knows of the cluster's DeviceClasses (kube's extended resource cache). */
export interface DeviceClassIndex {
  /** Names of the DeviceClasses that exist. */
  names: ReadonlySet<string>;
  /** `spec.extendedResourceName` of the classes that set it, by class name. */
  extendedResources: ReadonlyMap<string, string>;
}

/** The index of a list of DeviceClass objects. */
export function deviceClassIndex(classes: readonly Obj[]): DeviceClassIndex {
  const names = new Set<string>();
  const extendedResources = new Map<string, string>();
  for (const c of classes) {
    const name = String(asObject(c.metadata).name);
    names.add(name);
    const extended = asObject(c.spec).extendedResourceName;
    if (typeof extended === 'string' && extended !== '') extendedResources.set(name, extended);
  }
  return { names, extendedResources };
}

const NO_DEVICE_CLASSES: DeviceClassIndex = { names: new Set(), extendedResources: new Map() };

/** The DeviceClass an extended resource name stands for: its implicit name, or one's `extendedResourceName`. */
function classOfExtendedResource(classes: DeviceClassIndex, resourceName: string): string | undefined {
  if (resourceName.startsWith(DEVICE_CLASS_RESOURCE_PREFIX)) {
    const className = resourceName.slice(DEVICE_CLASS_RESOURCE_PREFIX.length);
    if (classes.names.has(className)) return className;
  }
  for (const [className, extended] of classes.extendedResources) if (extended === resourceName) return className;
  return undefined;
}

/**
 * kube's ResourceClaim evaluator: a claim is charged 1 of `count/resourceclaims.resource.k8s.io`
 * and, per DeviceClass, the devices its requests ask for (`firstAvailable` charges the largest
 * count each class might get among the subrequests, `All` the most an allocation holds). With
 * DRAExtendedResource (on in 1.36) those devices also count as `requests.` the class's implicit
 * extended resource and its `extendedResourceName`, names tracked once such a class exists.
 * Not done: kube exempts what the owning pod already paid for scheduler-made claims.
 */
function resourceClaimEvaluator(classes: DeviceClassIndex): QuotaEvaluator {
  return {
    matchingResources: (input) =>
      input.filter((n) => {
        if (n === CLAIM_COUNT || n.endsWith(DEVICES_PER_CLASS_SUFFIX)) return true;
        if (!isExtendedQuotaResource(n)) return false;
        return classOfExtendedResource(classes, n.slice('requests.'.length)) !== undefined;
      }),
    usage: (claim) => {
      const devices = new Map<string, number>();
      const charge = (className: unknown, count: number): void => {
        const name = `${typeof className === 'string' ? className : ''}${DEVICES_PER_CLASS_SUFFIX}`;
        devices.set(name, (devices.get(name) ?? 0) + count);
      };
      for (const request of objects(asObject(asObject(claim.spec).devices).requests)) {
        const subrequests = objects(request.firstAvailable);
        if (subrequests.length > 0) {
          const worst = new Map<unknown, number>();
          for (const sub of subrequests) worst.set(sub.deviceClassName, Math.max(worst.get(sub.deviceClassName) ?? 0, requestedDevices(sub)));
          for (const [className, count] of worst) charge(className, count);
        } else if (request.exactly !== undefined && request.exactly !== null) {
          const exactly = asObject(request.exactly);
          charge(exactly.deviceClassName, requestedDevices(exactly));
        }
      }
      const usage: ResourceList = new Map([[CLAIM_COUNT, '1']]);
      for (const [name, count] of devices) {
        usage.set(name, String(count));
        const className = name.slice(0, -DEVICES_PER_CLASS_SUFFIX.length);
        if (className === '' || count <= 0) continue;
        usage.set(`requests.${DEVICE_CLASS_RESOURCE_PREFIX}${className}`, String(count));
        const extended = classes.extendedResources.get(className);
        if (extended !== undefined) usage.set(`requests.${extended}`, String(count));
      }
      return usage;
    },
    matchesScope: noScope,
    handles: (operation, subresource) => subresource === '' && (operation === 'CREATE' || operation === 'UPDATE'),
    constraints: noConstraints,
  };
}

/** Kinds counted under a legacy name besides `count/...`. */
const LEGACY_ALIASES: Record<string, string> = {
  configmaps: 'configmaps',
  resourcequotas: 'resourcequotas',
  replicationcontrollers: 'replicationcontrollers',
  secrets: 'secrets',
};

/** Resources quota never charges (virtual, or events). */
const IGNORED = new Set([
  '/bindings',
  '/componentstatuses',
  'authentication.k8s.io/tokenreviews',
  'authentication.k8s.io/selfsubjectreviews',
  'authorization.k8s.io/subjectaccessreviews',
  'authorization.k8s.io/selfsubjectaccessreviews',
  'authorization.k8s.io/localsubjectaccessreviews',
  'authorization.k8s.io/selfsubjectrulesreviews',
  '/events',
  'events.k8s.io/events',
]);

/**
 * The evaluator of a group and resource; undefined for resources quota ignores. ResourceClaims
 * need the cluster's DeviceClasses (`deviceClasses`, see `needsDeviceClasses`).
 */
export function evaluatorFor(group: string, resource: string, deviceClasses: DeviceClassIndex = NO_DEVICE_CLASSES): QuotaEvaluator | undefined {
  if (IGNORED.has(`${group}/${resource}`)) return undefined;
  if (group === '') {
    if (resource === 'pods') return podEvaluator;
    if (resource === 'services') return serviceEvaluator;
    if (resource === 'persistentvolumeclaims') return claimEvaluator;
    return objectCounter(group, resource, LEGACY_ALIASES[resource]);
  }
  if (needsDeviceClasses(group, resource)) return resourceClaimEvaluator(deviceClasses);
  return objectCounter(group, resource);
}

/** Whether the evaluator of a group and resource depends on the cluster's DeviceClasses. */
export const needsDeviceClasses = (group: string, resource: string): boolean => group === 'resource.k8s.io' && resource === 'resourceclaims';

/** The storage type of DeviceClasses. */
export const DEVICE_CLASSES = 'deviceclasses.resource.k8s.io';

/** The scope terms of a quota: its `scopes` (as `Exists`) and its scope selector's expressions. */
export function quotaScopes(quota: Obj): ScopeRequirement[] {
  const spec = asObject(quota.spec);
  const scopes = (Array.isArray(spec.scopes) ? spec.scopes : []).map((s) => ({ scopeName: String(s), operator: 'Exists', values: [] }));
  const expressions = objects(asObject(spec.scopeSelector).matchExpressions).map((e) => ({
    scopeName: String(e.scopeName),
    operator: String(e.operator),
    values: Array.isArray(e.values) ? e.values.map(String) : [],
  }));
  return [...scopes, ...expressions];
}

/** generic.Matches: the quota limits one of the kind's resources and the object is in every scope. */
export function quotaMatches(evaluator: QuotaEvaluator, quota: Obj, object: Obj): boolean {
  const hard = [...resourceListOf(asObject(quota.status).hard).keys()];
  if (evaluator.matchingResources(hard).length === 0) return false;
  return quotaScopes(quota).every((scope) => evaluator.matchesScope(scope, object));
}
