import { generateJobSelector } from './job-selector.js';
import type { ResourceInfo } from '../registry/resource-types.js';
import { isObject, jsonEqual, metadataOf, type Obj } from '../api/object-util.js';
import { applyDefaults } from './defaults.js';
import { fillDataSources, prepareClaimDataSources } from './claim-data-sources.js';
import { preparePodForCreate } from './pod-prepare.js';
import { podQosClass } from './pod-qos.js';

/**
 * Per-type behaviour of writes, after kube-apiserver's registry strategies: which types split spec and
 * status, which track `metadata.generation`, what create resets, and what status writes may change.
 */

/** Types whose strategy sets `generation` although they have no status subresource. */
const GENERATION_WITHOUT_STATUS = new Set([
  'admissionregistration.k8s.io/validatingwebhookconfigurations',
  'admissionregistration.k8s.io/mutatingwebhookconfigurations',
  'networking.k8s.io/networkpolicies',
  'resource.k8s.io/deviceclasses',
  'discovery.k8s.io/endpointslices',
]);

/** Types with a status subresource that do not track generation (kube's strategies leave it unset). */
const STATUS_WITHOUT_GENERATION = new Set([
  '/nodes',
  '/namespaces',
  '/persistentvolumes',
  '/persistentvolumeclaims',
  '/resourcequotas',
  '/services',
  'certificates.k8s.io/certificatesigningrequests',
  'apiregistration.k8s.io/apiservices',
  'autoscaling/horizontalpodautoscalers',
]);

/** Types kube lets PUT create when the object is missing (AllowCreateOnUpdate). */
const CREATE_ON_UPDATE = new Set(['/endpoints', '/events', 'events.k8s.io/events', 'coordination.k8s.io/leases', '/limitranges']);

/** Status writes of these types may also change labels and annotations. */
const STATUS_UPDATES_METADATA = new Set(['/pods', '/nodes']);

/** Types whose DELETE answers with the deleted object rather than a Success Status. */
const RETURNS_DELETED_OBJECT = new Set(['/pods', '/services', '/namespaces', 'apiextensions.k8s.io/customresourcedefinitions']);

function id(info: Pick<ResourceInfo, 'group' | 'resource'>): string {
  return `${info.group}/${info.resource}`;
}

export function hasStatusSubresource(info: ResourceInfo): boolean {
  return 'status' in info.subresources;
}

export function tracksGeneration(info: ResourceInfo): boolean {
  if (info.custom === true) return true;
  if (GENERATION_WITHOUT_STATUS.has(id(info))) return true;
  return hasStatusSubresource(info) && !STATUS_WITHOUT_GENERATION.has(id(info));
}

export function allowsCreateOnUpdate(info: ResourceInfo): boolean {
  return CREATE_ON_UPDATE.has(id(info));
}

export function returnsDeletedObject(info: ResourceInfo): boolean {
  return info.custom === true || RETURNS_DELETED_OBJECT.has(id(info));
}

/** Everything but metadata and status: a change here bumps generation. */
function specPart(obj: Obj): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(obj)) if (k !== 'metadata' && k !== 'status' && k !== 'kind' && k !== 'apiVersion') out[k] = v;
  return out;
}

/**
 * kube's namespace defaulting and Canonicalize: every namespace carries
 * `kubernetes.io/metadata.name=<name>`, whatever the client sent, so selectors can match by name.
 */
function setNamespaceNameLabel(ns: Obj): void {
  const meta = metadataOf(ns);
  const name = typeof meta.name === 'string' ? meta.name : '';
  if (name === '') return;
  const labels = isObject(meta.labels) ? meta.labels : {};
  labels['kubernetes.io/metadata.name'] = name;
  meta.labels = labels;
}

/**
 * What kube's v1 Secret conversion does to every written Secret: `stringData` entries overwrite `data`
 * (base64-encoded) and are never stored. (The Opaque type default is in defaults.ts.)
 */
function convertSecret(secret: Obj): void {
  const stringData = secret.stringData;
  if (isObject(stringData)) {
    const data = isObject(secret.data) ? secret.data : {};
    for (const [k, v] of Object.entries(stringData)) {
      if (typeof v === 'string') data[k] = Buffer.from(v, 'utf8').toString('base64');
    }
    if (Object.keys(data).length > 0) secret.data = data;
  }
  delete secret.stringData;
}

/**
 * kube drops an EndpointSlice's per-endpoint deprecatedTopology on discovery.k8s.io/v1 writes (the
 * only version served); a node name kept there by an older version is moved to nodeName only when
 * the stored slice had it, which no v1-written slice has.
 */
function dropDeprecatedTopology(slice: Obj): void {
  for (const endpoint of Array.isArray(slice.endpoints) ? slice.endpoints : []) {
    if (isObject(endpoint)) delete endpoint.deprecatedTopology;
  }
}

/** Resets what a create may not set, as each type's PrepareForCreate does. */
export function prepareForCreate(info: ResourceInfo, obj: Obj): void {
  applyDefaults(info, obj);
  const meta = metadataOf(obj);
  if (tracksGeneration(info)) meta.generation = 1;
  else delete meta.generation;
  if (id(info) === '/secrets') convertSecret(obj);
  if (id(info) === 'batch/jobs') generateJobSelector(obj);
  if (id(info) === '/persistentvolumeclaims' && isObject(obj.spec)) prepareClaimDataSources(obj.spec);
  if (id(info) === 'discovery.k8s.io/endpointslices') dropDeprecatedTopology(obj);
  if (!hasStatusSubresource(info)) return;
  switch (id(info)) {
    case '/nodes':
      return;
    case '/pods':
      obj.status = { phase: 'Pending', qosClass: podQosClass(obj) };
      preparePodForCreate(obj);
      return;
    case '/namespaces': {
      setNamespaceNameLabel(obj);
      obj.status = { phase: 'Active' };
      const spec = isObject(obj.spec) ? obj.spec : {};
      const finalizers = Array.isArray(spec.finalizers) ? (spec.finalizers as unknown[]) : [];
      if (!finalizers.includes('kubernetes')) spec.finalizers = [...finalizers, 'kubernetes'];
      obj.spec = spec;
      return;
    }
    case '/persistentvolumes':
    case '/persistentvolumeclaims':
      obj.status = { phase: 'Pending' };
      return;
    case '/services':
      obj.status = { loadBalancer: {} };
      return;
    default:
      if (info.custom === true && !info.subresources.status) return;
      delete obj.status;
  }
}

/**
 * Prepares a write to the main resource: keeps the stored status where the type has a status
 * subresource, and bumps generation when anything outside metadata and status changed.
 */
export function prepareForUpdate(info: ResourceInfo, next: Obj, old: Obj): void {
  applyDefaults(info, next);
  if (hasStatusSubresource(info)) {
    if (old.status === undefined) delete next.status;
    else next.status = old.status;
  }
  if (id(info) === '/secrets') convertSecret(next);
  if (id(info) === '/persistentvolumeclaims' && isObject(next.spec)) {
    const oldSpec = isObject(old.spec) ? old.spec : undefined;
    prepareClaimDataSources(next.spec, oldSpec);
    // kube also normalizes the stored claim's data sources, so objects saved before compare alike.
    if (oldSpec !== undefined) fillDataSources(oldSpec);
  }
  // Writes through discovery.k8s.io/v1 drop deprecatedTopology, unless they leave the endpoints as they were.
  if (id(info) === 'discovery.k8s.io/endpointslices' && !jsonEqual(next.endpoints, old.endpoints)) dropDeprecatedTopology(next);
  if (id(info) === '/namespaces') {
    // spec.finalizers changes only through /finalize.
    next.spec = old.spec;
    setNamespaceNameLabel(next);
  }
  const meta = metadataOf(next);
  const oldMeta = metadataOf(old);
  if (tracksGeneration(info)) {
    const oldGen = typeof oldMeta.generation === 'number' ? oldMeta.generation : 1;
    // An EndpointSlice's labels count as its spec (kube bumps its generation when they change).
    const labelsChanged = id(info) === 'discovery.k8s.io/endpointslices' && !jsonEqual(meta.labels, oldMeta.labels);
    meta.generation = jsonEqual(specPart(next), specPart(old)) && !labelsChanged ? oldGen : oldGen + 1;
  } else if (oldMeta.generation !== undefined) meta.generation = oldMeta.generation;
  else delete meta.generation;
}

/**
 * Prepares a write to the status subresource: the result is the stored object with only the new
 * status (and, for pods and nodes, labels and annotations) taken from the request.
 */
export function prepareForStatusUpdate(info: ResourceInfo, next: Obj, old: Obj): Obj {
  const result: Obj = structuredClone(old);
  if (next.status === undefined) delete result.status;
  else result.status = next.status;
  const meta = metadataOf(result);
  const nextMeta = metadataOf(next);
  meta.resourceVersion = nextMeta.resourceVersion;
  if (STATUS_UPDATES_METADATA.has(id(info))) {
    if (nextMeta.labels === undefined) delete meta.labels;
    else meta.labels = nextMeta.labels;
    if (nextMeta.annotations === undefined) delete meta.annotations;
    else meta.annotations = nextMeta.annotations;
  }
  return result;
}

/** Prepares a `namespaces/NAME/finalize` write: only `spec.finalizers` changes. */
export function prepareForFinalize(next: Obj, old: Obj): Obj {
  const result: Obj = structuredClone(old);
  const spec = isObject(result.spec) ? result.spec : {};
  const nextSpec = isObject(next.spec) ? next.spec : {};
  // Go drops an empty finalizers list (omitempty), so [] reads back as absent.
  if (nextSpec.finalizers === undefined || nextSpec.finalizers === null || (Array.isArray(nextSpec.finalizers) && nextSpec.finalizers.length === 0))
    delete spec.finalizers;
  else spec.finalizers = nextSpec.finalizers;
  result.spec = spec;
  metadataOf(result).resourceVersion = metadataOf(next).resourceVersion;
  return result;
}
