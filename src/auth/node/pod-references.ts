import { isObject, metadataOf, stringField, type Obj } from '../../api/object-util.js';
import { objectElements } from '../../api/values.js';

/** kube's annotation marking a mirror pod (a kubelet's copy of a static pod). */
export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** What a pod names, as kube's node graph links it (each list may repeat a name). */
export interface PodReferences {
  serviceAccount: string;
  secrets: string[];
  configMaps: string[];
  persistentVolumeClaims: string[];
  resourceClaims: string[];
}

function nameAt(obj: Obj, ...path: string[]): string {
  let cur: unknown = obj;
  for (const p of path) cur = isObject(cur) ? cur[p] : undefined;
  return typeof cur === 'string' ? cur : '';
}

/** Whether `pod` is a mirror pod (kube's node graph links a mirror pod to its node only). */
export function isMirrorPod(pod: Obj): boolean {
  const annotations = metadataOf(pod).annotations;
  return isObject(annotations) && MIRROR_POD_ANNOTATION in annotations;
}

function containersOf(spec: Obj): Obj[] {
  return [...objectElements(spec.initContainers), ...objectElements(spec.containers), ...objectElements(spec.ephemeralContainers)];
}

/** kube's VisitPodSecretNames: image pull secrets, env and envFrom of every container, and the volume sources that name a secret. */
function secretNames(spec: Obj): string[] {
  const out = objectElements(spec.imagePullSecrets).map((r) => stringField(r, 'name'));
  for (const c of containersOf(spec)) {
    for (const e of objectElements(c.envFrom)) out.push(nameAt(e, 'secretRef', 'name'));
    for (const e of objectElements(c.env)) out.push(nameAt(e, 'valueFrom', 'secretKeyRef', 'name'));
  }
  for (const v of objectElements(spec.volumes)) {
    if (isObject(v.azureFile)) out.push(stringField(v.azureFile, 'secretName'));
    else if (isObject(v.cephfs)) out.push(nameAt(v.cephfs, 'secretRef', 'name'));
    else if (isObject(v.cinder)) out.push(nameAt(v.cinder, 'secretRef', 'name'));
    else if (isObject(v.flexVolume)) out.push(nameAt(v.flexVolume, 'secretRef', 'name'));
    else if (isObject(v.projected)) for (const s of objectElements(v.projected.sources)) out.push(nameAt(s, 'secret', 'name'));
    else if (isObject(v.rbd)) out.push(nameAt(v.rbd, 'secretRef', 'name'));
    else if (isObject(v.secret)) out.push(stringField(v.secret, 'secretName'));
    else if (isObject(v.scaleIO)) out.push(nameAt(v.scaleIO, 'secretRef', 'name'));
    else if (isObject(v.iscsi)) out.push(nameAt(v.iscsi, 'secretRef', 'name'));
    else if (isObject(v.storageos)) out.push(nameAt(v.storageos, 'secretRef', 'name'));
    else if (isObject(v.csi)) out.push(nameAt(v.csi, 'nodePublishSecretRef', 'name'));
  }
  return out.filter((n) => n !== '');
}

/** kube's VisitPodConfigmapNames: env and envFrom of every container, configMap and projected volumes. */
function configMapNames(spec: Obj): string[] {
  const out: string[] = [];
  for (const c of containersOf(spec)) {
    for (const e of objectElements(c.envFrom)) out.push(nameAt(e, 'configMapRef', 'name'));
    for (const e of objectElements(c.env)) out.push(nameAt(e, 'valueFrom', 'configMapKeyRef', 'name'));
  }
  for (const v of objectElements(spec.volumes)) {
    if (isObject(v.projected)) for (const s of objectElements(v.projected.sources)) out.push(nameAt(s, 'configMap', 'name'));
    else if (isObject(v.configMap)) out.push(stringField(v.configMap, 'name'));
  }
  return out.filter((n) => n !== '');
}

/** PVC volumes by claim name, generic ephemeral volumes by kube's generated claim name (`<pod>-<volume>`). */
function claimNames(pod: Obj, spec: Obj): string[] {
  const podName = stringField(metadataOf(pod), 'name');
  const out: string[] = [];
  for (const v of objectElements(spec.volumes)) {
    if (isObject(v.persistentVolumeClaim)) out.push(stringField(v.persistentVolumeClaim, 'claimName'));
    else if (isObject(v.ephemeral)) out.push(`${podName}-${stringField(v, 'name')}`);
  }
  return out.filter((n) => n !== '');
}

/**
 * kube's resourceclaim.Name for each of the pod's claims: the claim it names, or the one generated
 * from its template as the pod's status records it; claims without a known name are left out. The
 * extended-resource claim of the status counts too.
 */
function resourceClaimNames(spec: Obj, status: Obj): string[] {
  const statuses = objectElements(status.resourceClaimStatuses);
  const out: string[] = [];
  for (const c of objectElements(spec.resourceClaims)) {
    if (typeof c.resourceClaimName === 'string') out.push(c.resourceClaimName);
    else if (typeof c.resourceClaimTemplateName === 'string') {
      const s = statuses.find((x) => x.name === c.name);
      if (s !== undefined && typeof s.resourceClaimName === 'string') out.push(s.resourceClaimName);
    }
  }
  out.push(nameAt(status, 'extendedResourceClaimStatus', 'resourceClaimName'));
  return out.filter((n) => n !== '');
}

/** Everything a (non-mirror) pod makes reachable from its node in kube's node graph. */
export function podReferences(pod: Obj): PodReferences {
  const spec = isObject(pod.spec) ? pod.spec : {};
  const status = isObject(pod.status) ? pod.status : {};
  return {
    serviceAccount: stringField(spec, 'serviceAccountName'),
    secrets: secretNames(spec),
    configMaps: configMapNames(spec),
    persistentVolumeClaims: claimNames(pod, spec),
    resourceClaims: resourceClaimNames(spec, status),
  };
}

/** A secret a PersistentVolume's source names. */
export interface VolumeSecret {
  namespace: string;
  name: string;
}

/**
 * kube's VisitPVSecretNames, the secrets the kubelet reads: most sources default the secret's
 * namespace to the claim's; CSI counts its node publish, stage and expand secrets (not the
 * controller ones).
 */
export function persistentVolumeSecrets(pv: Obj): VolumeSecret[] {
  const spec = isObject(pv.spec) ? pv.spec : {};
  const claimNamespace = nameAt(spec, 'claimRef', 'namespace');
  const out: VolumeSecret[] = [];
  const refIn = (source: unknown, defaultNamespace: string): void => {
    if (!isObject(source) || !isObject(source.secretRef)) return;
    const ns = stringField(source.secretRef, 'namespace');
    out.push({ namespace: ns !== '' ? ns : defaultNamespace, name: stringField(source.secretRef, 'name') });
  };
  if (isObject(spec.azureFile)) {
    const ns = stringField(spec.azureFile, 'secretNamespace');
    out.push({ namespace: ns !== '' ? ns : claimNamespace, name: stringField(spec.azureFile, 'secretName') });
  } else if (isObject(spec.cephfs)) refIn(spec.cephfs, claimNamespace);
  else if (isObject(spec.cinder)) refIn(spec.cinder, '');
  else if (isObject(spec.flexVolume)) refIn(spec.flexVolume, claimNamespace);
  else if (isObject(spec.rbd)) refIn(spec.rbd, claimNamespace);
  else if (isObject(spec.scaleIO)) refIn(spec.scaleIO, claimNamespace);
  else if (isObject(spec.iscsi)) refIn(spec.iscsi, claimNamespace);
  else if (isObject(spec.storageos)) refIn(spec.storageos, '');
  else if (isObject(spec.csi)) {
    for (const field of ['nodePublishSecretRef', 'nodeStageSecretRef', 'nodeExpandSecretRef']) {
      const ref = spec.csi[field];
      if (isObject(ref)) out.push({ namespace: stringField(ref, 'namespace'), name: stringField(ref, 'name') });
    }
  }
  return out.filter((s) => s.name !== '');
}
