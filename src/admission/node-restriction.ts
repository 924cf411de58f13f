import { x509 } from '../certificates/x509-module.js';
import { type ApiError, forbidden, notFound } from '../api/errors.js';
import { isObject, jsonEqual, metadataOf, objectKey, stringField, type Obj } from '../api/object-util.js';
import type { Authorizer } from '../auth/authorizer.js';
import { nodeNameOf } from '../auth/node/node-identity.js';
import { isMirrorPod, podReferences } from '../auth/node/pod-references.js';
import type { Storage } from '../storage/storage.js';
import { asObject, asString } from '../api/values.js';
import { objects } from '../validation/value-access.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';

/** Label prefixes only the control plane may set on Nodes. */
const NODE_RESTRICTION_LABEL_NAMESPACE = 'node-restriction.kubernetes.io';
/** kube's kubelet labels (k8s.io/kubelet/pkg/apis): kubernetes.io labels a node may still set on itself. */
const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
]);
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];
/** Signers whose CSRs a node may create only for itself. */
const KUBELET_SIGNERS = new Set(['kubernetes.io/kubelet-serving', 'kubernetes.io/kube-apiserver-client-kubelet']);

function labelNamespace(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? '' : key.slice(0, slash);
}

function inDomain(namespace: string, domain: string): boolean {
  return namespace === domain || namespace.endsWith(`.${domain}`);
}

/** kube's getForbiddenLabels: node-restriction labels, and kubernetes.io / k8s.io labels that are not kubelet labels; sorted. */
function forbiddenLabels(modified: Set<string>): string[] {
  const out = [...modified].filter((key) => {
    const ns = labelNamespace(key);
    if (inDomain(ns, NODE_RESTRICTION_LABEL_NAMESPACE)) return true;
    const kubernetes = inDomain(ns, 'kubernetes.io') || inDomain(ns, 'k8s.io');
    const kubelet = KUBELET_LABELS.has(key) || KUBELET_LABEL_NAMESPACES.some((d) => inDomain(ns, d));
    return kubernetes && !kubelet;
  });
  return out.sort();
}

function labelsOf(o: Obj | undefined): Record<string, string> {
  const labels = o === undefined ? undefined : metadataOf(o).labels;
  const out: Record<string, string> = {};
  if (isObject(labels)) for (const [k, v] of Object.entries(labels)) if (typeof v === 'string') out[k] = v;
  return out;
}

function modifiedLabels(a: Record<string, string>, b: Record<string, string>): Set<string> {
  const out = new Set<string>();
  for (const [k, v] of Object.entries(a)) if (b[k] !== v) out.add(k);
  for (const [k, v] of Object.entries(b)) if (a[k] !== v) out.add(k);
  return out;
}

/** kube's semantic equality for the optional lists and objects compared here: absent, null and empty are equal. */
function semanticEqual(a: unknown, b: unknown): boolean {
  const empty = (v: unknown): boolean => v === undefined || v === null || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);
  if (empty(a) && empty(b)) return true;
  return jsonEqual(a, b);
}

/** kube's PodResourceClaimStatus comparison: the same names and claim names, in order. */
function claimStatusesEqual(a: unknown, b: unknown): boolean {
  const x = objects(a);
  const y = objects(b);
  return x.length === y.length && x.every((s, i) => s.name === y[i].name && (s.resourceClaimName ?? null) === (y[i].resourceClaimName ?? null));
}

/** Whether a pod spec names API objects a mirror pod may not use, and which (kube's HasAPIObjectReference). */
function apiObjectReference(pod: Obj): string | undefined {
  const spec = asObject(pod.spec);
  if (asString(spec.serviceAccountName) !== '') return 'serviceaccounts';
  const refs = podReferences(pod);
  if (refs.secrets.length > 0) return 'secrets';
  if (refs.configMaps.length > 0) return 'configmaps';
  if (objects(spec.resourceClaims).length > 0) return 'resourceclaims';
  for (const v of objects(spec.volumes)) {
    if (isObject(v.configMap)) return 'configmaps (via configmap volumes)';
    if (isObject(v.secret)) return 'secrets (via secret volumes)';
    if (isObject(v.csi)) return 'csidrivers (via CSI volumes)';
    if (isObject(v.glusterfs)) return 'endpoints (via glusterFS volumes)';
    if (isObject(v.persistentVolumeClaim)) return 'persistentvolumeclaims';
    if (isObject(v.ephemeral)) return 'persistentvolumeclaims (via ephemeral volumes)';
    if (isObject(v.azureFile)) return 'secrets (via azureFile volumes)';
    if (isObject(v.projected)) {
      for (const s of objects(v.projected.sources)) {
        if (isObject(s.configMap)) return 'configmaps (via projected volumes)';
        if (isObject(s.secret)) return 'secrets (via projected volumes)';
        if (isObject(s.serviceAccountToken)) return 'serviceaccounts (via projected volumes)';
        if (isObject(s.clusterTrustBundle)) return 'clustertrustbundles';
        if (isObject(s.podCertificate)) return 'podcertificates';
      }
    }
  }
  return undefined;
}

/** The common name of a PEM (base64 in the object) certificate request, or an error text. */
function csrCommonName(request: string): string | Error {
  try {
    const pem = Buffer.from(request, 'base64').toString('latin1');
    const csr = new (x509().Pkcs10CertificateRequest)(pem);
    return csr.subjectName.getField('CN')[0] ?? '';
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/**
 * kube's NodeRestriction admission plugin: a node (`system:node:NAME` in `system:nodes`) may create
 * and delete only its own mirror pods, update the status of pods bound to it (not their labels or
 * claim statuses), evict pods bound to it, change only the capacity and conditions of a claim's
 * status, write only its own Node (no taints, owner references or config source changes, no
 * restricted labels), its own Lease and CSINode, ResourceSlices of its own, CSRs for itself, and
 * tokens only for pods bound to it (for audiences those pods use, unless authorized). Other users
 * pass untouched. Refusals are 403 with kube's messages.
 */
export class NodeRestriction implements AdmissionPlugin {
  readonly name = 'NodeRestriction';

  constructor(
    private readonly storage: Storage,
    private readonly authorizer: Authorizer | undefined,
  ) {}

  async admit(a: AdmissionAttributes): Promise<void> {
    const user = a.request?.user;
    if (user === undefined || a.operation === 'CONNECT') return;
    const node = nodeNameOf(user);
    if (node === undefined) return;
    if (node === '') throw this.refuse(a, `could not determine node from user ${JSON.stringify(user.name)}`);
    switch (`${a.info.group}/${a.info.resource}`) {
      case '/pods':
        if (a.subresource === '') return this.pod(node, a);
        if (a.subresource === 'status') return this.podStatus(node, a);
        if (a.subresource === 'eviction') return this.eviction(node, a);
        throw this.refuse(a, `unexpected pod subresource ${JSON.stringify(a.subresource)}, only 'status' and 'eviction' are allowed`);
      case '/nodes':
        return this.nodeObject(node, a);
      case '/persistentvolumeclaims':
        if (a.subresource !== 'status') throw this.refuse(a, 'may only update PVC status');
        return this.claimStatus(node, a);
      case '/serviceaccounts':
        return this.serviceAccountToken(node, a);
      case 'certificates.k8s.io/podcertificaterequests':
        throw this.refuse(a, 'PodCertificateRequest feature gate is disabled');
      case 'coordination.k8s.io/leases':
        if (a.namespace !== 'kube-node-lease') throw this.refuse(a, 'can only access leases in the "kube-node-lease" system namespace');
        if (this.targetName(a) !== node) throw this.refuse(a, 'can only access node lease with the same name as the requesting node');
        return;
      case 'storage.k8s.io/csinodes':
        if (this.targetName(a) !== node) throw this.refuse(a, 'can only access CSINode with the same name as the requesting node');
        return;
      case 'resource.k8s.io/resourceslices':
        return this.resourceSlice(node, a);
      case 'certificates.k8s.io/certificatesigningrequests':
        return this.certificateRequest(node, a);
      default:
        return;
    }
  }

  /** kube's admission.NewForbidden: the request's name, else the object's name or generateName, else "Unknown". */
  private refuse(a: AdmissionAttributes, detail: string): ApiError {
    let name = a.name;
    if (name === '') {
      const meta = a.object === undefined ? undefined : metadataOf(a.object);
      name = meta === undefined ? 'Unknown' : stringField(meta, 'name') || stringField(meta, 'generateName') || 'Unknown';
    }
    return forbidden({ group: a.info.group, resource: a.info.resource }, name, detail);
  }

  /** The object a create names, or the request's name for other operations. */
  private targetName(a: AdmissionAttributes): string {
    if (a.operation === 'CREATE' && a.object !== undefined) return stringField(metadataOf(a.object), 'name');
    return a.name;
  }

  private async get(type: string, namespace: string, name: string): Promise<Obj | undefined> {
    const stored = await this.storage.get(type, objectKey(namespace, name));
    return stored === undefined ? undefined : (JSON.parse(stored.json) as Obj);
  }

  private async pod(node: string, a: AdmissionAttributes): Promise<void> {
    if (a.operation === 'CREATE') return this.mirrorPodCreate(node, a);
    if (a.operation === 'DELETE') {
      const existing = a.oldObject ?? (await this.get('pods', a.namespace, a.name));
      if (existing === undefined) throw listerNotFound('pod', a.name);
      if (stringField(asObject(existing.spec), 'nodeName') !== node)
        throw this.refuse(a, `node ${JSON.stringify(node)} can only delete pods with spec.nodeName set to itself`);
      return;
    }
    throw this.refuse(a, `unexpected operation ${JSON.stringify(a.operation)}, node ${JSON.stringify(node)} can only create and delete mirror pods`);
  }

  private async mirrorPodCreate(node: string, a: AdmissionAttributes): Promise<void> {
    const pod = a.object ?? {};
    const q = JSON.stringify(node);
    if (!isMirrorPod(pod)) throw this.refuse(a, `pod does not have "kubernetes.io/config.mirror" annotation, node ${q} can only create mirror pods`);
    if (stringField(asObject(pod.spec), 'nodeName') !== node) throw this.refuse(a, `node ${q} can only create pods with spec.nodeName set to itself`);
    const owners = objects(metadataOf(pod).ownerReferences);
    if (owners.length > 1) throw this.refuse(a, `node ${q} can only create pods with a single owner reference set to itself`);
    if (owners.length === 0) throw this.refuse(a, `node ${q} can only create pods with an owner reference set to itself`);
    const owner = owners[0];
    if (owner.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== node) {
      throw this.refuse(a, `node ${q} can only create pods with an owner reference set to itself`);
    }
    if (owner.controller !== true) throw this.refuse(a, `node ${q} can only create pods with a controller owner reference set to itself`);
    if (owner.blockOwnerDeletion === true) throw this.refuse(a, `node ${q} must not set blockOwnerDeletion on an owner reference`);
    const nodeObj = await this.get('nodes', '', node);
    if (nodeObj === undefined) throw listerNotFound('node', node);
    const uid = stringField(metadataOf(nodeObj), 'uid');
    if (asString(owner.uid) !== uid) throw this.refuse(a, `node ${node} UID mismatch: expected ${asString(owner.uid)} got ${uid}`);
    const reference = apiObjectReference(pod);
    if (reference !== undefined) throw this.refuse(a, `node ${q} can not create pods that reference ${reference}`);
  }

  private podStatus(node: string, a: AdmissionAttributes): void {
    if (a.operation !== 'UPDATE') throw this.refuse(a, `unexpected operation ${JSON.stringify(a.operation)}`);
    const oldPod = a.oldObject ?? {};
    const newPod = a.object ?? {};
    const q = JSON.stringify(node);
    if (stringField(asObject(oldPod.spec), 'nodeName') !== node)
      throw this.refuse(a, `node ${q} can only update pod status for pods with spec.nodeName set to itself`);
    if (modifiedLabels(labelsOf(oldPod), labelsOf(newPod)).size > 0) throw this.refuse(a, `node ${q} cannot update labels through pod status`);
    const oldStatus = asObject(oldPod.status);
    const newStatus = asObject(newPod.status);
    if (!claimStatusesEqual(oldStatus.resourceClaimStatuses, newStatus.resourceClaimStatuses))
      throw this.refuse(a, `node ${q} cannot update resource claim statues`);
    if (!semanticEqual(oldStatus.extendedResourceClaimStatus, newStatus.extendedResourceClaimStatus)) {
      throw this.refuse(a, `node ${q} cannot update extended resource claim status`);
    }
  }

  private async eviction(node: string, a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE') throw this.refuse(a, `unexpected operation ${a.operation}`);
    let podName = a.name;
    if (podName === '') {
      podName = a.object === undefined ? '' : stringField(metadataOf(a.object), 'name');
      if (podName === '') throw this.refuse(a, 'could not determine pod from request data');
    }
    const pod = await this.get('pods', a.namespace, podName);
    if (pod === undefined) throw listerNotFound('pod', podName);
    if (stringField(asObject(pod.spec), 'nodeName') !== node) throw this.refuse(a, `node ${node} can only evict pods with spec.nodeName set to itself`);
  }

  private claimStatus(node: string, a: AdmissionAttributes): void {
    if (a.operation !== 'UPDATE') throw this.refuse(a, `unexpected operation ${JSON.stringify(a.operation)}`);
    const strip = (claim: Obj | undefined): Obj => {
      const copy = structuredClone(claim ?? {});
      const meta = metadataOf(copy);
      delete meta.resourceVersion;
      delete meta.managedFields;
      const status = asObject(copy.status);
      for (const field of ['capacity', 'conditions', 'allocatedResourceStatuses', 'allocatedResources']) delete status[field];
      return copy;
    };
    const before = strip(a.oldObject);
    const after = strip(a.object);
    if (!jsonEqual(before, after)) {
      // kube appends a structural diff of the two claims here; its text is Go's, so only the sentence is kept.
      throw this.refuse(
        a,
        `node ${JSON.stringify(node)} is not allowed to update fields other than status.quantity and status.conditions: ${changedPaths(before, after).join(', ')}`,
      );
    }
  }

  private nodeObject(node: string, a: AdmissionAttributes): void {
    const requested = this.targetName(a);
    const q = JSON.stringify(node);
    if (requested !== node) throw this.refuse(a, `node ${q} is not allowed to modify node ${JSON.stringify(requested)}`);
    const current = a.object ?? {};
    if (a.operation === 'CREATE') {
      if (isObject(asObject(current.spec).configSource)) throw this.refuse(a, `node ${q} is not allowed to create pods with a non-nil configSource`);
      const forbiddenNew = forbiddenLabels(modifiedLabels(labelsOf(current), {}));
      if (forbiddenNew.length > 0) throw this.refuse(a, `node ${q} is not allowed to set the following labels: ${forbiddenNew.join(', ')}`);
    }
    if (a.operation === 'UPDATE') {
      const old = a.oldObject ?? {};
      const spec = asObject(current.spec);
      const oldSpec = asObject(old.spec);
      if (isObject(spec.configSource) && !semanticEqual(spec.configSource, oldSpec.configSource)) {
        throw this.refuse(a, `node ${q} is not allowed to update configSource to a new non-nil configSource`);
      }
      if (!semanticEqual(spec.taints, oldSpec.taints)) throw this.refuse(a, `node ${q} is not allowed to modify taints`);
      if (!semanticEqual(metadataOf(current).ownerReferences, metadataOf(old).ownerReferences))
        throw this.refuse(a, `node ${q} is not allowed to modify ownerReferences`);
      const forbiddenChanged = forbiddenLabels(modifiedLabels(labelsOf(current), labelsOf(old)));
      if (forbiddenChanged.length > 0) throw this.refuse(a, `is not allowed to modify labels: ${forbiddenChanged.join(', ')}`);
    }
  }

  private async serviceAccountToken(node: string, a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' || a.subresource !== 'token') return;
    const spec = asObject(a.object?.spec);
    const ref = isObject(spec.boundObjectRef) ? spec.boundObjectRef : undefined;
    if (ref === undefined || ref.apiVersion !== 'v1' || ref.kind !== 'Pod' || asString(ref.name) === '')
      throw this.refuse(a, 'node requested token not bound to a pod');
    if (asString(ref.uid) === '') throw this.refuse(a, 'node requested token with a pod binding without a uid');
    const pod = await this.get('pods', a.namespace, asString(ref.name));
    if (pod === undefined) throw listerNotFound('pod', asString(ref.name));
    if (asString(ref.uid) !== stringField(metadataOf(pod), 'uid')) {
      throw this.refuse(
        a,
        `the UID in the bound object reference (${asString(ref.uid)}) does not match the UID in record. The object might have been deleted and then recreated`,
      );
    }
    if (stringField(asObject(pod.spec), 'nodeName') !== node) throw this.refuse(a, 'node requested token bound to a pod scheduled on a different node');
    await this.tokenAudience(a, pod, spec);
  }

  /** kube's ServiceAccountNodeAudienceRestriction (on by default in 1.36): one audience, used by the pod or authorized. */
  private async tokenAudience(a: AdmissionAttributes, pod: Obj, spec: Obj): Promise<void> {
    const audiences = Array.isArray(spec.audiences) ? spec.audiences : [];
    if (audiences.length > 1) throw this.refuse(a, 'node may only request 0 or 1 audiences');
    const audience = audiences.length === 1 ? asString(audiences[0]) : '';
    const found = await this.podUsesAudience(pod, audience);
    if (found instanceof Error) throw this.refuse(a, `error validating audience ${JSON.stringify(audience)}: ${found.message}`);
    if (found) return;
    const user = a.request?.user;
    if (user === undefined || this.authorizer === undefined) return;
    const decision = await this.authorizer.authorize({
      user,
      verb: 'request-serviceaccounts-token-audience',
      resourceRequest: true,
      apiGroup: '',
      apiVersion: 'v1',
      namespace: a.namespace,
      resource: audience,
      subresource: '',
      name: a.name,
      path: '',
    });
    if (decision.allowed) return;
    throw this.refuse(
      a,
      `audience ${JSON.stringify(audience)} not found in pod spec volume, ${user.name} is not authorized to request tokens for this audience`,
    );
  }

  /** Whether a projected token volume or a CSI driver of the pod's volumes asks for `audience` (or the errors met looking). */
  private async podUsesAudience(pod: Obj, audience: string): Promise<boolean | Error> {
    const errors: string[] = [];
    const podName = stringField(metadataOf(pod), 'name');
    const namespace = stringField(metadataOf(pod), 'namespace');
    for (const v of objects(asObject(pod.spec).volumes)) {
      if (isObject(v.projected)) {
        for (const s of objects(v.projected.sources)) if (isObject(s.serviceAccountToken) && asString(s.serviceAccountToken.audience) === audience) return true;
      }
      let driver: string | Error = '';
      if (isObject(v.ephemeral) && isObject(v.ephemeral.volumeClaimTemplate)) driver = await this.claimDriver(namespace, `${podName}-${asString(v.name)}`);
      else if (isObject(v.persistentVolumeClaim)) driver = await this.claimDriver(namespace, asString(v.persistentVolumeClaim.claimName));
      else if (isObject(v.csi)) driver = asString(v.csi.driver);
      if (driver instanceof Error) {
        errors.push(driver.message);
        continue;
      }
      if (driver === '') continue;
      const csiDriver = await this.get('csidrivers.storage.k8s.io', '', driver);
      if (csiDriver === undefined) {
        errors.push(`csidriver.storage.k8s.io ${JSON.stringify(driver)} not found`);
        continue;
      }
      if (objects(asObject(csiDriver.spec).tokenRequests).some((t) => asString(t.audience) === audience)) return true;
    }
    if (errors.length === 0) return false;
    // kube's error aggregate: repeated messages once, brackets around more than one.
    const distinct = [...new Set(errors)];
    return new Error(distinct.length === 1 ? distinct[0] : `[${distinct.join(', ')}]`);
  }

  private async claimDriver(namespace: string, claimName: string): Promise<string | Error> {
    const claim = await this.get('persistentvolumeclaims', namespace, claimName);
    if (claim === undefined) return new Error(`persistentvolumeclaim ${JSON.stringify(claimName)} not found`);
    const volumeName = asString(asObject(claim.spec).volumeName);
    const pv = await this.get('persistentvolumes', '', volumeName);
    if (pv === undefined) return new Error(`persistentvolume ${JSON.stringify(volumeName)} not found`);
    return asString(asObject(asObject(pv.spec).csi).driver);
  }

  private resourceSlice(node: string, a: AdmissionAttributes): void {
    if (a.operation === 'CREATE' && asString(asObject(a.object?.spec).nodeName) !== node) {
      throw this.refuse(a, 'can only create ResourceSlice with the same NodeName as the requesting node');
    }
    if (a.operation === 'DELETE' && asString(asObject(a.oldObject?.spec).nodeName) !== node) {
      throw this.refuse(a, 'can only delete ResourceSlice with the same NodeName as the requesting node');
    }
  }

  private certificateRequest(node: string, a: AdmissionAttributes): void {
    if (a.operation !== 'CREATE') return;
    const spec = asObject(a.object?.spec);
    if (!KUBELET_SIGNERS.has(asString(spec.signerName))) return;
    const cn = csrCommonName(asString(spec.request));
    if (cn instanceof Error) throw this.refuse(a, `unable to parse csr: ${cn.message}`);
    if (cn !== `system:node:${node}`) throw this.refuse(a, `can only create a node CSR with CN=system:node:${node}`);
  }
}

/** kube's informer listers answer a missing object with the singular resource name (`pod "x" not found`). */
function listerNotFound(resource: string, name: string): ApiError {
  return notFound({ group: '', resource }, name);
}

/** The top-level paths (`spec`, `metadata.labels`, ...) where two claims differ. */
function changedPaths(a: Obj, b: Obj): string[] {
  const out: string[] = [];
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const x = a[key];
    const y = b[key];
    if (isObject(x) && isObject(y)) out.push(...changedPaths(x, y).map((p) => `${key}.${p}`));
    else if (!jsonEqual(x, y)) out.push(key);
  }
  return out;
}
