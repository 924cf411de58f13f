import { isObject, metadataOf, type Obj } from '../api/object-util.js';
import { defaultPointer, defaultString, objectAt, objectsAt, unset, unsetOrEmpty } from '../api/field-defaults.js';
import { defaultClaimSpec, defaultPodTemplateSpec, roundResourceList } from './pod-defaults.js';

/**
 * kube-apiserver 1.36's defaulting (the `SetDefaults_*` functions of its scheme), one function per
 * kind; each kind's strategy (src/strategy/kinds/) names its defaulter, applied to every object written
 * through the main resource before the rest of the strategy, as kube applies them when it decodes a
 * request body. Each function fills exactly what kube's fills, nested types included.
 *
 * The oracle is test/golden/defaulting/ (kube's own defaulting run over test/fixtures/defaulting/ by
 * tools/goldens; `npm run gen:goldens`), which test/e2e/defaulting.test.ts compares with.
 */

/**
 * Session affinity None (ClientIP gets a 3-hour timeout), type ClusterIP, ports TCP with the target
 * port equal to the port when unset (0 or ""), traffic policies Cluster where the type has them, and
 * load balancers allocate node ports and report VIP ingress.
 */
export function defaultService(svc: Obj): void {
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

export function defaultEndpoints(endpoints: Obj): void {
  for (const subset of objectsAt(endpoints, 'subsets')) {
    for (const port of objectsAt(subset, 'ports')) defaultString(port, 'protocol', 'TCP');
  }
}

/** A PVC (also a StatefulSet's claim template): spec defaults, status phase Pending; Go writes both structs. */
export function defaultPersistentVolumeClaim(pvc: Obj): void {
  const spec = objectAt(pvc, 'spec') ?? {};
  pvc.spec = spec;
  defaultClaimSpec(spec);
  const status = objectAt(pvc, 'status') ?? {};
  pvc.status = status;
  defaultString(status, 'phase', 'Pending');
}

/** The `spec` of a workload, created when absent (Go writes the struct). */
function specOf(obj: Obj): Obj {
  const spec = objectAt(obj, 'spec') ?? {};
  obj.spec = spec;
  return spec;
}

/** The pod template at `spec.template`, defaulted (Go writes the struct even when absent). */
function defaultTemplateAt(spec: Obj): Obj {
  const template = objectAt(spec, 'template') ?? {};
  spec.template = template;
  defaultPodTemplateSpec(template);
  return template;
}

function labelsOf(obj: Obj | undefined): Obj | undefined {
  const labels = obj === undefined ? undefined : objectAt(obj, 'metadata')?.labels;
  return isObject(labels) ? labels : undefined;
}

function isEmptyMap(v: unknown): boolean {
  return !isObject(v) || Object.keys(v).length === 0;
}

/**
 * A Deployment's or DaemonSet's update strategy at `spec[key]`: RollingUpdate unless set, and a
 * rolling update gets its maxUnavailable and maxSurge defaults.
 */
function defaultRollingUpdate(spec: Obj, key: string, maxUnavailable: string | number, maxSurge: string | number): void {
  const strategy = objectAt(spec, key) ?? {};
  spec[key] = strategy;
  defaultString(strategy, 'type', 'RollingUpdate');
  if (strategy.type !== 'RollingUpdate') return;
  const rollingUpdate = objectAt(strategy, 'rollingUpdate') ?? {};
  strategy.rollingUpdate = rollingUpdate;
  defaultPointer(rollingUpdate, 'maxUnavailable', maxUnavailable);
  defaultPointer(rollingUpdate, 'maxSurge', maxSurge);
}

export function defaultDeployment(d: Obj): void {
  const spec = specOf(d);
  defaultPointer(spec, 'replicas', 1);
  defaultRollingUpdate(spec, 'strategy', '25%', '25%');
  defaultPointer(spec, 'revisionHistoryLimit', 10);
  defaultPointer(spec, 'progressDeadlineSeconds', 600);
  defaultTemplateAt(spec);
}

export function defaultReplicaSet(rs: Obj): void {
  const spec = specOf(rs);
  defaultPointer(spec, 'replicas', 1);
  defaultTemplateAt(spec);
}

export function defaultDaemonSet(ds: Obj): void {
  const spec = specOf(ds);
  defaultRollingUpdate(spec, 'updateStrategy', 1, 0);
  defaultPointer(spec, 'revisionHistoryLimit', 10);
  defaultTemplateAt(spec);
}

/** StatefulSet defaults (MaxUnavailableStatefulSet is off in 1.36: no maxUnavailable), its template and claim templates. */
export function defaultStatefulSet(ss: Obj): void {
  const spec = specOf(ss);
  defaultString(spec, 'podManagementPolicy', 'OrderedReady');
  const strategy = objectAt(spec, 'updateStrategy') ?? {};
  spec.updateStrategy = strategy;
  if (unsetOrEmpty(strategy.type)) {
    strategy.type = 'RollingUpdate';
    if (objectAt(strategy, 'rollingUpdate') === undefined) strategy.rollingUpdate = {};
  }
  const rollingUpdate = objectAt(strategy, 'rollingUpdate');
  if (strategy.type === 'RollingUpdate' && rollingUpdate !== undefined) defaultPointer(rollingUpdate, 'partition', 0);
  const retention = objectAt(spec, 'persistentVolumeClaimRetentionPolicy') ?? {};
  spec.persistentVolumeClaimRetentionPolicy = retention;
  defaultString(retention, 'whenDeleted', 'Retain');
  defaultString(retention, 'whenScaled', 'Retain');
  defaultPointer(spec, 'replicas', 1);
  defaultPointer(spec, 'revisionHistoryLimit', 10);
  defaultTemplateAt(spec);
  for (const claim of objectsAt(spec, 'volumeClaimTemplates')) {
    defaultPersistentVolumeClaim(claim);
  }
}

/** A pod failure policy's pod-condition patterns match status True by default. */
function defaultPodFailurePolicy(jobSpec: Obj): void {
  for (const rule of objectsAt(objectAt(jobSpec, 'podFailurePolicy'), 'rules')) {
    for (const pattern of objectsAt(rule, 'onPodConditions')) defaultString(pattern, 'status', 'True');
  }
}

/** Job defaults (JobPodReplacementPolicy is on in 1.36); the Job takes its template's labels when it has none. */
export function defaultJob(job: Obj): void {
  const spec = specOf(job);
  if (unsetOrEmpty(spec.completions) && unsetOrEmpty(spec.parallelism)) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  defaultPointer(spec, 'parallelism', 1);
  if (unsetOrEmpty(spec.backoffLimit)) spec.backoffLimit = unsetOrEmpty(spec.backoffLimitPerIndex) ? 6 : 2147483647;
  const templateLabels = labelsOf(objectAt(spec, 'template'));
  const meta = metadataOf(job);
  // kube assigns the template's map itself, so the selector labels the Job strategy adds to the template
  // on create (job-selector.ts) appear on the Job too; sharing the object here does the same.
  if (templateLabels !== undefined && isEmptyMap(meta.labels)) meta.labels = templateLabels;
  defaultPointer(spec, 'completionMode', 'NonIndexed');
  defaultPointer(spec, 'suspend', false);
  defaultPointer(spec, 'podReplacementPolicy', unsetOrEmpty(spec.podFailurePolicy) ? 'TerminatingOrFailed' : 'Failed');
  defaultPointer(spec, 'manualSelector', false);
  defaultPodFailurePolicy(spec);
  defaultTemplateAt(spec);
}

/** CronJob defaults; its job template gets only pod-spec defaults. */
export function defaultCronJob(cj: Obj): void {
  const spec = specOf(cj);
  defaultString(spec, 'concurrencyPolicy', 'Allow');
  defaultPointer(spec, 'suspend', false);
  defaultPointer(spec, 'successfulJobsHistoryLimit', 3);
  defaultPointer(spec, 'failedJobsHistoryLimit', 1);
  const jobTemplate = objectAt(spec, 'jobTemplate') ?? {};
  spec.jobTemplate = jobTemplate;
  const jobSpec = objectAt(jobTemplate, 'spec') ?? {};
  jobTemplate.spec = jobSpec;
  defaultPodFailurePolicy(jobSpec);
  defaultTemplateAt(jobSpec);
}

/** A ReplicationController takes selector and labels from its template when it has none; replicas 1. */
export function defaultReplicationController(rc: Obj): void {
  const spec = specOf(rc);
  const template = objectAt(spec, 'template');
  const labels = labelsOf(template);
  if (labels !== undefined) {
    if (isEmptyMap(spec.selector)) spec.selector = { ...labels };
    const meta = metadataOf(rc);
    if (isEmptyMap(meta.labels)) meta.labels = { ...labels };
  }
  defaultPointer(spec, 'replicas', 1);
  if (template !== undefined) defaultPodTemplateSpec(template);
}

/** Container limit items: the default limit is the max, the default request the default limit, else the min. */
export function defaultLimitRange(lr: Obj): void {
  for (const item of objectsAt(objectAt(lr, 'spec'), 'limits')) {
    if (item.type !== 'Container') continue;
    const fallback = (target: string, ...sources: string[]): void => {
      const out = objectAt(item, target) ?? {};
      for (const source of sources) {
        for (const [name, quantity] of Object.entries(objectAt(item, source) ?? {})) if (!(name in out)) out[name] = quantity;
      }
      // Go makes the maps; an empty one is dropped when written (omitempty).
      if (Object.keys(out).length > 0) item[target] = out;
    };
    fallback('default', 'max');
    fallback('defaultRequest', 'default', 'min');
  }
  for (const item of objectsAt(objectAt(lr, 'spec'), 'limits')) {
    for (const list of ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio']) roundResourceList(item[list]);
  }
}

/** Every quantity of a quota rounded up to a multiple of 1m. */
export function defaultResourceQuota(rq: Obj): void {
  roundResourceList(objectAt(rq, 'spec')?.hard);
  const status = objectAt(rq, 'status');
  roundResourceList(status?.hard);
  roundResourceList(status?.used);
}

/** A binding's role reference is in the RBAC group unless it says otherwise; users and groups too. */
export function defaultRoleBinding(binding: Obj): void {
  const roleRef = objectAt(binding, 'roleRef') ?? {};
  binding.roleRef = roleRef;
  defaultString(roleRef, 'apiGroup', 'rbac.authorization.k8s.io');
  for (const subject of objectsAt(binding, 'subjects')) {
    if (subject.kind === 'User' || subject.kind === 'Group') defaultString(subject, 'apiGroup', 'rbac.authorization.k8s.io');
  }
}

export function defaultPodTemplate(pt: Obj): void {
  const template = objectAt(pt, 'template') ?? {};
  pt.template = template;
  defaultPodTemplateSpec(template);
}

export function defaultPriorityClass(pc: Obj): void {
  defaultPointer(pc, 'preemptionPolicy', 'PreemptLowerPriority');
}

export function defaultStorageClass(sc: Obj): void {
  defaultPointer(sc, 'reclaimPolicy', 'Delete');
  defaultPointer(sc, 'volumeBindingMode', 'Immediate');
}

export function defaultNetworkPolicy(np: Obj): void {
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

/**
 * Reclaim policy Retain, volume mode Filesystem, status phase Pending (Go writes the struct), capacity
 * rounded up to 1m, and the defaults of the in-tree sources (hostPath type "", RBD pool, user and
 * keyring, iSCSI interface, Azure disk caching, fsType, readOnly and kind, ScaleIO mode and fsType).
 */
export function defaultPersistentVolume(pv: Obj): void {
  const spec = specOf(pv);
  const status = objectAt(pv, 'status') ?? {};
  pv.status = status;
  defaultString(status, 'phase', 'Pending');
  defaultString(spec, 'persistentVolumeReclaimPolicy', 'Retain');
  defaultPointer(spec, 'volumeMode', 'Filesystem');
  roundResourceList(spec.capacity);
  const hostPath = objectAt(spec, 'hostPath');
  if (hostPath !== undefined) defaultPointer(hostPath, 'type', '');
  const rbd = objectAt(spec, 'rbd');
  if (rbd !== undefined) {
    defaultString(rbd, 'pool', 'rbd');
    defaultString(rbd, 'user', 'admin');
    defaultString(rbd, 'keyring', '/etc/ceph/keyring');
  }
  const iscsi = objectAt(spec, 'iscsi');
  if (iscsi !== undefined) defaultString(iscsi, 'iscsiInterface', 'default');
  const azureDisk = objectAt(spec, 'azureDisk');
  if (azureDisk !== undefined) {
    defaultPointer(azureDisk, 'cachingMode', 'ReadWrite');
    defaultPointer(azureDisk, 'fsType', 'ext4');
    defaultPointer(azureDisk, 'readOnly', false);
    defaultPointer(azureDisk, 'kind', 'Shared');
  }
  const scaleIO = objectAt(spec, 'scaleIO');
  if (scaleIO !== undefined) {
    defaultString(scaleIO, 'storageMode', 'ThinProvisioned');
    defaultString(scaleIO, 'fsType', 'xfs');
  }
}

/** SetDefaults_CSIDriver: attach required, no pod info, persistent volumes, fsGroup by fs type, no capacity tracking. */
export function defaultCSIDriver(driver: Obj): void {
  const spec = specOf(driver);
  defaultPointer(spec, 'attachRequired', true);
  defaultPointer(spec, 'podInfoOnMount', false);
  defaultPointer(spec, 'storageCapacity', false);
  defaultPointer(spec, 'fsGroupPolicy', 'ReadWriteOnceWithFSType');
  if (unsetOrEmpty(spec.volumeLifecycleModes)) spec.volumeLifecycleModes = ['Persistent'];
  defaultPointer(spec, 'requiresRepublish', false);
  defaultPointer(spec, 'seLinuxMount', false);
}

/**
 * SetDefaults_ValidatingWebhook / MutatingWebhook: fail closed, equivalent-version matching, selectors
 * matching everything, a 10 s timeout, service port 443, rules for all scopes; mutating webhooks are
 * not re-invoked.
 */
export function defaultWebhooks(config: Obj, mutating: boolean): void {
  for (const hook of objectsAt(config, 'webhooks')) {
    defaultPointer(hook, 'failurePolicy', 'Fail');
    defaultPointer(hook, 'matchPolicy', 'Equivalent');
    defaultPointer(hook, 'namespaceSelector', {});
    defaultPointer(hook, 'objectSelector', {});
    defaultPointer(hook, 'timeoutSeconds', 10);
    if (mutating) defaultPointer(hook, 'reinvocationPolicy', 'Never');
    const service = objectAt(objectAt(hook, 'clientConfig') ?? {}, 'service');
    if (service !== undefined) defaultPointer(service, 'port', 443);
    for (const rule of objectsAt(hook, 'rules')) defaultPointer(rule, 'scope', '*');
  }
}

/** Every port of an EndpointSlice is named ("" when unnamed) and TCP unless it says otherwise. */
export function defaultEndpointSlice(slice: Obj): void {
  for (const port of objectsAt(slice, 'ports')) {
    defaultPointer(port, 'name', '');
    defaultPointer(port, 'protocol', 'TCP');
  }
}

/** A node's allocatable resources are its capacity unless reported; both rounded up to 1m. */
export function defaultNode(node: Obj): void {
  const status = objectAt(node, 'status');
  if (status === undefined) return;
  if (unset(status.allocatable) && isObject(status.capacity)) status.allocatable = { ...status.capacity };
  roundResourceList(status.capacity);
  roundResourceList(status.allocatable);
}

export function defaultSecret(secret: Obj): void {
  defaultString(secret, 'type', 'Opaque');
}
