import type { ResourceInfo } from '../registry/resource-types.js';
import { isObject, type Obj } from '../handlers/object-util.js';

/**
 * kube-apiserver 1.36's defaulting (the `SetDefaults_*` functions of its scheme) for the types listed
 * in {@link DEFAULTERS}: applied to every object written through the main resource, before the
 * strategy, as kube applies them when it decodes a request body. Each function fills exactly what
 * kube's fills, nested types included; a type missing here is stored without defaults (issue 9).
 *
 * The oracle is test/golden/defaulting/ (kube's own defaulting run over test/fixtures/defaulting/ by
 * tools/goldens; `npm run gen:goldens`), which test/e2e/defaulting.test.ts compares with.
 */

type Defaulter = (obj: Obj) => void;

function objectAt(parent: Obj, key: string): Obj | undefined {
  const v = parent[key];
  return isObject(v) ? v : undefined;
}

function objectsAt(parent: Obj | undefined, key: string): Obj[] {
  const v = parent?.[key];
  return Array.isArray(v) ? v.filter(isObject) : [];
}

/** Sets `obj[key] = value` when the field is absent or null (a Go nil pointer). */
function defaultPointer(obj: Obj, key: string, value: unknown): void {
  if (obj[key] === undefined || obj[key] === null) obj[key] = value;
}

/** Sets `obj[key] = value` when the field is absent, null or "" (a Go string's zero value). */
function defaultString(obj: Obj, key: string, value: string): void {
  if (obj[key] === undefined || obj[key] === null || obj[key] === '') obj[key] = value;
}

/**
 * Session affinity None (ClientIP gets a 3-hour timeout), type ClusterIP, ports TCP with the target
 * port equal to the port when unset (0 or ""), traffic policies Cluster where the type has them, and
 * load balancers allocate node ports and report VIP ingress.
 */
function defaultService(svc: Obj): void {
  const spec = objectAt(svc, 'spec') ?? {};
  svc.spec = spec;
  defaultString(spec, 'sessionAffinity', 'None');
  if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
  if (spec.sessionAffinity === 'ClientIP') {
    const config = objectAt(spec, 'sessionAffinityConfig');
    const clientIP = config === undefined ? undefined : objectAt(config, 'clientIP');
    if (clientIP === undefined || clientIP.timeoutSeconds === undefined || clientIP.timeoutSeconds === null) {
      spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 10800 } };
    }
  }
  defaultString(spec, 'type', 'ClusterIP');
  for (const port of objectsAt(spec, 'ports')) {
    defaultString(port, 'protocol', 'TCP');
    if (port.targetPort === undefined || port.targetPort === null || port.targetPort === 0 || port.targetPort === '') {
      port.targetPort = typeof port.port === 'number' ? port.port : 0;
    }
  }
  const externalIPs = Array.isArray(spec.externalIPs) ? spec.externalIPs : [];
  const externallyAccessible = spec.type === 'LoadBalancer' || spec.type === 'NodePort' || (spec.type === 'ClusterIP' && externalIPs.length > 0);
  if (externallyAccessible) defaultString(spec, 'externalTrafficPolicy', 'Cluster');
  if (spec.type === 'NodePort' || spec.type === 'LoadBalancer' || spec.type === 'ClusterIP') defaultPointer(spec, 'internalTrafficPolicy', 'Cluster');
  if (spec.type === 'LoadBalancer') {
    defaultPointer(spec, 'allocateLoadBalancerNodePorts', true);
    const status = objectAt(svc, 'status');
    const loadBalancer = status === undefined ? undefined : objectAt(status, 'loadBalancer');
    for (const ingress of objectsAt(loadBalancer, 'ingress')) {
      if (typeof ingress.ip === 'string' && ingress.ip !== '') defaultPointer(ingress, 'ipMode', 'VIP');
    }
  }
}

function defaultEndpoints(endpoints: Obj): void {
  for (const subset of objectsAt(endpoints, 'subsets')) {
    for (const port of objectsAt(subset, 'ports')) defaultString(port, 'protocol', 'TCP');
  }
}

function defaultPersistentVolumeClaimSpec(spec: Obj): void {
  defaultPointer(spec, 'volumeMode', 'Filesystem');
}

function defaultPersistentVolumeClaim(pvc: Obj): void {
  const spec = objectAt(pvc, 'spec') ?? {};
  pvc.spec = spec;
  defaultPersistentVolumeClaimSpec(spec);
  const status = objectAt(pvc, 'status') ?? {};
  pvc.status = status;
  defaultString(status, 'phase', 'Pending');
}

function defaultPriorityClass(pc: Obj): void {
  defaultPointer(pc, 'preemptionPolicy', 'PreemptLowerPriority');
}

function defaultStorageClass(sc: Obj): void {
  defaultPointer(sc, 'reclaimPolicy', 'Delete');
  defaultPointer(sc, 'volumeBindingMode', 'Immediate');
}

function defaultNetworkPolicy(np: Obj): void {
  const spec = objectAt(np, 'spec') ?? {};
  np.spec = spec;
  for (const rule of [...objectsAt(spec, 'ingress'), ...objectsAt(spec, 'egress')]) {
    for (const port of objectsAt(rule, 'ports')) defaultPointer(port, 'protocol', 'TCP');
  }
  const policyTypes = Array.isArray(spec.policyTypes) ? spec.policyTypes : [];
  if (policyTypes.length === 0) {
    const egress = Array.isArray(spec.egress) ? spec.egress : [];
    spec.policyTypes = egress.length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
  }
}

function defaultIngressClass(ic: Obj): void {
  const parameters = objectAt(objectAt(ic, 'spec') ?? {}, 'parameters');
  if (parameters !== undefined) defaultPointer(parameters, 'scope', 'Cluster');
}

function defaultSecret(secret: Obj): void {
  defaultString(secret, 'type', 'Opaque');
}

/** Defaulting functions by `group/resource` (the core group is empty). */
const DEFAULTERS: Record<string, Defaulter> = {
  '/services': defaultService,
  '/endpoints': defaultEndpoints,
  '/persistentvolumeclaims': defaultPersistentVolumeClaim,
  '/secrets': defaultSecret,
  'scheduling.k8s.io/priorityclasses': defaultPriorityClass,
  'storage.k8s.io/storageclasses': defaultStorageClass,
  'networking.k8s.io/networkpolicies': defaultNetworkPolicy,
  'networking.k8s.io/ingressclasses': defaultIngressClass,
};

/** Whether Capstan applies kube's defaulting to objects of this resource. */
export function hasDefaults(info: Pick<ResourceInfo, 'group' | 'resource'>): boolean {
  return `${info.group}/${info.resource}` in DEFAULTERS;
}

/** Applies kube's defaults for the object's type in place (nothing for types without defaults). */
export function applyDefaults(info: Pick<ResourceInfo, 'group' | 'resource'>, obj: Obj): void {
  DEFAULTERS[`${info.group}/${info.resource}`]?.(obj);
}
