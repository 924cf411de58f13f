import { isObject, type Obj } from '../api/object-util.js';
import { roundUpToMilli } from '../api/quantity.js';
import { defaultNumber, defaultPointer, defaultString, objectAt, objectsAt, unset } from '../api/field-defaults.js';
import { imageTag } from './image-reference.js';
import { aggregateContainerLimits, aggregateContainerRequests } from '../validation/pod-resource-totals.js';
import { isPodLevelResource } from '../validation/pod-resources.js';
import { isHugePages, isOvercommitAllowed } from '../validation/resource-names.js';

/**
 * kube-apiserver 1.36's defaulting of pod specs, wherever one appears (Pods, and the templates of
 * workloads, Jobs, CronJobs and PodTemplates), nested types included: containers (init and
 * ephemeral too), their ports, env field references, probes and lifecycle handlers, and volumes.
 * Pod-only defaults (requests from limits, service links, host-network ports) are in {@link defaultPod}.
 *
 * Also written here, because Go's encoder always writes it and the shape table leaves types with their
 * own JSON form alone: a resource field selector's `divisor: "0"` (a Quantity). Empty structs Go
 * writes (`resources: {}`, template `metadata: {}`) come from the stored-object shape (go-shape.ts).
 * A Pod's pod-level `spec.resources` get kube's defaults from its containers' totals (PodLevelResources
 * is on by default in 1.36).
 */

function defaultFieldRef(ref: Obj | undefined): void {
  if (ref !== undefined) defaultString(ref, 'apiVersion', 'v1');
}

/** kube's SetDefaults_ResourceList: every quantity of the list rounded up to a multiple of 1m. */
export function roundResourceList(list: unknown): void {
  if (!isObject(list)) return;
  for (const [name, quantity] of Object.entries(list)) {
    if (typeof quantity === 'string') list[name] = roundUpToMilli(quantity);
  }
}

/** The limits and requests of a ResourceRequirements (or VolumeResourceRequirements), when present. */
function roundResources(resources: unknown): void {
  if (!isObject(resources)) return;
  roundResourceList(resources.limits);
  roundResourceList(resources.requests);
}

/** A resource field selector's divisor is a Quantity struct: Go writes its zero value as "0". */
function writeDivisor(selector: Obj | undefined): void {
  if (selector !== undefined) defaultPointer(selector, 'divisor', '0');
}

function defaultHttpGet(action: Obj | undefined): void {
  if (action === undefined) return;
  defaultString(action, 'path', '/');
  defaultString(action, 'scheme', 'HTTP');
}

function defaultProbe(probe: Obj | undefined): void {
  if (probe === undefined) return;
  defaultNumber(probe, 'timeoutSeconds', 1);
  defaultNumber(probe, 'periodSeconds', 10);
  defaultNumber(probe, 'successThreshold', 1);
  defaultNumber(probe, 'failureThreshold', 3);
  defaultHttpGet(objectAt(probe, 'httpGet'));
  const grpc = objectAt(probe, 'grpc');
  if (grpc !== undefined) defaultPointer(grpc, 'service', '');
}

/** Image pull policy Always for `latest` (or no tag), IfNotPresent otherwise; termination message defaults. */
function defaultContainer(container: Obj): void {
  if (unset(container.imagePullPolicy) || container.imagePullPolicy === '') {
    const tag = typeof container.image === 'string' ? imageTag(container.image) : '';
    container.imagePullPolicy = tag === 'latest' ? 'Always' : 'IfNotPresent';
  }
  defaultString(container, 'terminationMessagePath', '/dev/termination-log');
  defaultString(container, 'terminationMessagePolicy', 'File');
  for (const port of objectsAt(container, 'ports')) defaultString(port, 'protocol', 'TCP');
  for (const env of objectsAt(container, 'env')) {
    const from = objectAt(env, 'valueFrom');
    if (from === undefined) continue;
    defaultFieldRef(objectAt(from, 'fieldRef'));
    writeDivisor(objectAt(from, 'resourceFieldRef'));
    const fileKeyRef = objectAt(from, 'fileKeyRef');
    if (fileKeyRef !== undefined) defaultPointer(fileKeyRef, 'optional', false);
  }
  roundResources(container.resources);
  defaultProbe(objectAt(container, 'livenessProbe'));
  defaultProbe(objectAt(container, 'readinessProbe'));
  defaultProbe(objectAt(container, 'startupProbe'));
  const lifecycle = objectAt(container, 'lifecycle');
  if (lifecycle !== undefined) {
    for (const hook of ['postStart', 'preStop']) {
      const handler = objectAt(lifecycle, hook);
      if (handler !== undefined) defaultHttpGet(objectAt(handler, 'httpGet'));
    }
  }
}

/** The volume source fields of a Volume (every member but `name`). */
const VOLUME_SOURCES = [
  'hostPath',
  'emptyDir',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'persistentVolumeClaim',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'configMap',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
  'image',
];

function defaultVolume(volume: Obj): void {
  if (VOLUME_SOURCES.every((k) => unset(volume[k]))) volume.emptyDir = {};
  const hostPath = objectAt(volume, 'hostPath');
  if (hostPath !== undefined) defaultPointer(hostPath, 'type', '');
  for (const key of ['secret', 'configMap']) {
    const source = objectAt(volume, key);
    if (source !== undefined) defaultPointer(source, 'defaultMode', 0o644);
  }
  const iscsi = objectAt(volume, 'iscsi');
  if (iscsi !== undefined) defaultString(iscsi, 'iscsiInterface', 'default');
  const rbd = objectAt(volume, 'rbd');
  if (rbd !== undefined) {
    defaultString(rbd, 'pool', 'rbd');
    defaultString(rbd, 'user', 'admin');
    defaultString(rbd, 'keyring', '/etc/ceph/keyring');
  }
  const downwardAPI = objectAt(volume, 'downwardAPI');
  if (downwardAPI !== undefined) {
    defaultPointer(downwardAPI, 'defaultMode', 0o644);
    for (const item of objectsAt(downwardAPI, 'items')) {
      defaultFieldRef(objectAt(item, 'fieldRef'));
      writeDivisor(objectAt(item, 'resourceFieldRef'));
    }
  }
  const azureDisk = objectAt(volume, 'azureDisk');
  if (azureDisk !== undefined) {
    defaultPointer(azureDisk, 'cachingMode', 'ReadWrite');
    defaultPointer(azureDisk, 'fsType', 'ext4');
    defaultPointer(azureDisk, 'readOnly', false);
    defaultPointer(azureDisk, 'kind', 'Shared');
  }
  const projected = objectAt(volume, 'projected');
  if (projected !== undefined) {
    defaultPointer(projected, 'defaultMode', 0o644);
    for (const source of objectsAt(projected, 'sources')) {
      for (const item of objectsAt(objectAt(source, 'downwardAPI'), 'items')) {
        defaultFieldRef(objectAt(item, 'fieldRef'));
        writeDivisor(objectAt(item, 'resourceFieldRef'));
      }
      const token = objectAt(source, 'serviceAccountToken');
      if (token !== undefined) defaultPointer(token, 'expirationSeconds', 3600);
    }
  }
  const scaleIO = objectAt(volume, 'scaleIO');
  if (scaleIO !== undefined) {
    defaultString(scaleIO, 'storageMode', 'ThinProvisioned');
    defaultString(scaleIO, 'fsType', 'xfs');
  }
  const claimTemplate = objectAt(objectAt(volume, 'ephemeral') ?? {}, 'volumeClaimTemplate');
  if (claimTemplate !== undefined) {
    const spec = objectAt(claimTemplate, 'spec') ?? {};
    claimTemplate.spec = spec;
    defaultClaimSpec(spec);
  }
  const image = objectAt(volume, 'image');
  if (image !== undefined && (unset(image.pullPolicy) || image.pullPolicy === '')) {
    image.pullPolicy = imageTag(typeof image.reference === 'string' ? image.reference : '') === 'latest' ? 'Always' : 'IfNotPresent';
  }
}

/** A PersistentVolumeClaimSpec: volumeMode Filesystem, resource lists rounded. */
export function defaultClaimSpec(spec: Obj): void {
  defaultPointer(spec, 'volumeMode', 'Filesystem');
  roundResources(spec.resources);
}

/**
 * What kube's v1 conversion does to every pod spec it decodes and encodes: the deprecated
 * `serviceAccount` names the account when `serviceAccountName` does not, and is written back as a copy
 * of `serviceAccountName`.
 */
function mirrorServiceAccount(spec: Obj): void {
  if ((spec.serviceAccountName === undefined || spec.serviceAccountName === '') && typeof spec.serviceAccount === 'string' && spec.serviceAccount !== '') {
    spec.serviceAccountName = spec.serviceAccount;
  }
  if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName !== '') spec.serviceAccount = spec.serviceAccountName;
  else delete spec.serviceAccount;
}

/** SetDefaults_PodSpec and everything nested in a pod spec. */
export function defaultPodSpec(spec: Obj): void {
  mirrorServiceAccount(spec);
  defaultString(spec, 'dnsPolicy', 'ClusterFirst');
  defaultString(spec, 'restartPolicy', 'Always');
  defaultPointer(spec, 'securityContext', {});
  defaultPointer(spec, 'terminationGracePeriodSeconds', 30);
  defaultString(spec, 'schedulerName', 'default-scheduler');
  roundResourceList(spec.overhead);
  roundResources(spec.resources);
  for (const volume of objectsAt(spec, 'volumes')) defaultVolume(volume);
  for (const key of ['initContainers', 'containers', 'ephemeralContainers']) {
    for (const container of objectsAt(spec, key)) defaultContainer(container);
  }
}

/** A pod template (`{metadata, spec}`): its spec defaulted. */
export function defaultPodTemplateSpec(template: Obj): void {
  const spec = objectAt(template, 'spec') ?? {};
  template.spec = spec;
  defaultPodSpec(spec);
}

/** A container's requests default to its limits, for each resource with a limit and no request. */
function requestsFromLimits(container: Obj): void {
  const resources = objectAt(container, 'resources');
  const limits = resources === undefined ? undefined : objectAt(resources, 'limits');
  if (resources === undefined || limits === undefined) return;
  const requests = objectAt(resources, 'requests') ?? {};
  for (const [name, quantity] of Object.entries(limits)) if (!(name in requests)) requests[name] = quantity;
  resources.requests = requests;
}

/** A resource list as a plain object, copied (empty when absent). */
function resourceListCopy(list: unknown): Obj {
  return isObject(list) ? { ...list } : {};
}

/** defaultHugePagePodLimits: pod huge-page limits default to the containers' total, unless requested. */
function defaultHugePagePodLimits(spec: Obj, resources: Obj): void {
  const limits = resourceListCopy(resources.limits);
  const requests = resourceListCopy(resources.requests);
  if (Object.keys(limits).length === 0 && Object.keys(requests).length === 0) return;
  for (const [name, total] of aggregateContainerLimits(spec)) {
    if (!isHugePages(name) || name in requests || name in limits) continue;
    limits[name] = total;
  }
  if (Object.keys(limits).length > 0) resources.limits = limits;
}

/**
 * defaultPodRequests: with pod limits, each pod request defaults to the containers' total request
 * (overcommittable resources), else to the pod limit.
 */
function defaultPodRequests(spec: Obj, resources: Obj): void {
  const limits = resourceListCopy(resources.limits);
  if (Object.keys(limits).length === 0) return;
  const requests = resourceListCopy(resources.requests);
  for (const [name, total] of aggregateContainerRequests(spec)) {
    if (!(name in requests) && isPodLevelResource(name) && isOvercommitAllowed(name)) requests[name] = total;
  }
  for (const [name, limit] of Object.entries(limits)) {
    if (!(name in requests) && isPodLevelResource(name)) requests[name] = limit;
  }
  if (Object.keys(requests).length > 0) resources.requests = requests;
}

/** SetDefaults_Pod (requests from limits, pod-level resources, service links, host-network ports), then the pod spec. */
export function defaultPod(pod: Obj): void {
  const spec = objectAt(pod, 'spec') ?? {};
  pod.spec = spec;
  for (const key of ['containers', 'initContainers']) {
    for (const container of objectsAt(spec, key)) requestsFromLimits(container);
  }
  const resources = objectAt(spec, 'resources');
  if (resources !== undefined) {
    defaultHugePagePodLimits(spec, resources);
    defaultPodRequests(spec, resources);
  }
  defaultPointer(spec, 'enableServiceLinks', true);
  if (spec.hostNetwork === true) {
    for (const key of ['containers', 'initContainers']) {
      for (const container of objectsAt(spec, key)) {
        for (const port of objectsAt(container, 'ports')) {
          if (unset(port.hostPort) || port.hostPort === 0) port.hostPort = port.containerPort;
        }
      }
    }
  }
  defaultPodSpec(spec);
  // kube's v1 Pod conversion (not a template's) treats a negative grace period as 1.
  if (typeof spec.terminationGracePeriodSeconds === 'number' && spec.terminationGracePeriodSeconds < 0) spec.terminationGracePeriodSeconds = 1;
}
