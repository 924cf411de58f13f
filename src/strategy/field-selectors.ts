/**
 * Which field labels each built-in type accepts in a field selector and how an object's values for
 * them are read. Two layers, as in kube-apiserver: the per-kind field-label conversion (which
 * labels are accepted, aliases, the 400 message) and the registry's GetAttrs/ToSelectableFields
 * (the values matched). A label accepted but never set (pods' status.podIPs) reads as "".
 */
import { goQuote } from '../validation/field-errors.js';
import type { FieldSelectorSpec } from '../selectors/field-selector.js';
import type { Obj } from '../api/object-util.js';

function get(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const p of path.split('.')) {
    if (typeof cur !== 'object' || cur === null || Array.isArray(cur)) return undefined;
    cur = (cur as Obj)[p];
  }
  return cur;
}

/** A string field, "" when absent. */
function s(obj: unknown, path: string): string {
  const v = get(obj, path);
  return typeof v === 'string' ? v : '';
}

/** A boolean field printed as Go's strconv.FormatBool, "false" when absent. */
function b(obj: unknown, path: string): string {
  return get(obj, path) === true ? 'true' : 'false';
}

/** An integer field printed in decimal, "0" when absent. */
function n(obj: unknown, path: string): string {
  const v = get(obj, path);
  return typeof v === 'number' && Number.isFinite(v) ? String(Math.trunc(v)) : '0';
}

function metaFields(obj: Obj, namespaced: boolean): Record<string, string> {
  const fields: Record<string, string> = { 'metadata.name': s(obj, 'metadata.name') };
  if (namespaced) fields['metadata.namespace'] = s(obj, 'metadata.namespace');
  return fields;
}

interface SpecInput {
  /** Labels accepted unchanged. */
  accepted: string[];
  /** Accepted labels rewritten to a canonical one. */
  aliases?: Record<string, string>;
  reject: (label: string) => string;
  /** Whether metadata.namespace is in the object's field set. */
  namespaced: boolean;
  extra?: (obj: Obj) => Record<string, string>;
}

function makeSpec(input: SpecInput): FieldSelectorSpec {
  const map = new Map<string, string>(input.accepted.map((l) => [l, l]));
  for (const [from, to] of Object.entries(input.aliases ?? {})) map.set(from, to);
  return {
    supported: [...map.keys()],
    convert: (label) => map.get(label),
    unsupportedMessage: input.reject,
    fieldsOf: (obj) => ({ ...(input.extra ? input.extra(obj) : {}), ...metaFields(obj, input.namespaced) }),
  };
}

const notSupported = (label: string): string => `field label not supported: ${label}`;

/** runtime.DefaultMetaV1FieldSelectorConversion: the fallback for kinds without their own conversion. */
function defaultSpec(namespaced: boolean): FieldSelectorSpec {
  return makeSpec({
    accepted: ['metadata.name', 'metadata.namespace'],
    namespaced,
    reject: (label) => `${goQuote(label)} is not a known field selector: only "metadata.name", "metadata.namespace"`,
  });
}

/**
 * kube's ToSelectableFields of an Event. Both APIs' events are stored as core/v1 Events (see
 * src/conversion); the events.k8s.io names are read too, for objects not in storage form.
 */
function eventFields(obj: Obj): Record<string, string> {
  const ref = get(obj, 'involvedObject') ?? get(obj, 'regarding');
  const reporting = s(obj, 'reportingComponent') || s(obj, 'reportingController');
  const source = s(obj, 'source.component') || s(obj, 'deprecatedSource.component') || reporting;
  return {
    'involvedObject.kind': s(ref, 'kind'),
    'involvedObject.namespace': s(ref, 'namespace'),
    'involvedObject.name': s(ref, 'name'),
    'involvedObject.uid': s(ref, 'uid'),
    'involvedObject.apiVersion': s(ref, 'apiVersion'),
    'involvedObject.resourceVersion': s(ref, 'resourceVersion'),
    'involvedObject.fieldPath': s(ref, 'fieldPath'),
    reason: s(obj, 'reason'),
    reportingComponent: reporting,
    source: source,
    type: s(obj, 'type'),
  };
}

const EVENT_LABELS = [
  'involvedObject.kind',
  'involvedObject.namespace',
  'involvedObject.name',
  'involvedObject.uid',
  'involvedObject.apiVersion',
  'involvedObject.resourceVersion',
  'involvedObject.fieldPath',
  'reason',
  'reportingComponent',
  'source',
  'type',
];

function podFields(obj: Obj): Record<string, string> {
  const podIPs = get(obj, 'status.podIPs');
  const first: unknown = Array.isArray(podIPs) ? podIPs[0] : undefined;
  return {
    'spec.nodeName': s(obj, 'spec.nodeName'),
    'spec.restartPolicy': s(obj, 'spec.restartPolicy'),
    'spec.schedulerName': s(obj, 'spec.schedulerName'),
    'spec.serviceAccountName': s(obj, 'spec.serviceAccountName'),
    'spec.hostNetwork': b(obj, 'spec.hostNetwork'),
    'status.phase': s(obj, 'status.phase'),
    'status.podIP': s(first, 'ip') || s(obj, 'status.podIP'),
    'status.nominatedNodeName': s(obj, 'status.nominatedNodeName'),
  };
}

/*
 * The field selectors of the built-in kinds that have their own (kube's per-kind field label
 * conversions), each referenced from its kind's strategy.
 */

export const podFieldSelectors = (): FieldSelectorSpec =>
  makeSpec({
    accepted: [
      'metadata.name',
      'metadata.namespace',
      'spec.nodeName',
      'spec.restartPolicy',
      'spec.schedulerName',
      'spec.serviceAccountName',
      'spec.hostNetwork',
      'status.phase',
      'status.podIP',
      'status.podIPs',
      'status.nominatedNodeName',
    ],
    aliases: { 'spec.host': 'spec.nodeName' },
    namespaced: true,
    reject: notSupported,
    extra: podFields,
  });

export const nodeFieldSelectors = (): FieldSelectorSpec =>
  makeSpec({
    accepted: ['metadata.name', 'spec.unschedulable'],
    namespaced: false,
    reject: notSupported,
    extra: (o) => ({ 'spec.unschedulable': b(o, 'spec.unschedulable') }),
  });

export const replicationControllerFieldSelectors = (): FieldSelectorSpec =>
  makeSpec({
    accepted: ['metadata.name', 'metadata.namespace', 'status.replicas'],
    namespaced: true,
    reject: notSupported,
    extra: (o) => ({ 'status.replicas': n(o, 'status.replicas') }),
  });

export const coreEventFieldSelectors = (): FieldSelectorSpec =>
  makeSpec({
    accepted: [...EVENT_LABELS, 'metadata.namespace', 'metadata.name'],
    namespaced: true,
    reject: notSupported,
    extra: eventFields,
  });

export const namespaceFieldSelectors = (): FieldSelectorSpec =>
  makeSpec({
    accepted: ['status.phase', 'metadata.name'],
    namespaced: false,
    reject: notSupported,
    extra: (o) => ({ 'status.phase': s(o, 'status.phase') }),
  });

export const secretFieldSelectors = (): FieldSelectorSpec =>
  makeSpec({
    accepted: ['type', 'metadata.namespace', 'metadata.name'],
    namespaced: true,
    reject: notSupported,
    extra: (o) => ({ type: s(o, 'type') }),
  });

export const serviceFieldSelectors = (): FieldSelectorSpec =>
  makeSpec({
    accepted: ['metadata.namespace', 'metadata.name', 'spec.clusterIP', 'spec.type'],
    namespaced: true,
    reject: notSupported,
    extra: (o) => ({ 'spec.clusterIP': s(o, 'spec.clusterIP'), 'spec.type': s(o, 'spec.type') }),
  });

/** kube's events.k8s.io/v1 label mapping has no `source` (core's label for deprecatedSource). */
export const eventsEventFieldSelectors = (): FieldSelectorSpec =>
  makeSpec({
    accepted: ['reason', 'type', 'metadata.namespace', 'metadata.name'],
    aliases: {
      'regarding.kind': 'involvedObject.kind',
      'regarding.namespace': 'involvedObject.namespace',
      'regarding.name': 'involvedObject.name',
      'regarding.uid': 'involvedObject.uid',
      'regarding.apiVersion': 'involvedObject.apiVersion',
      'regarding.resourceVersion': 'involvedObject.resourceVersion',
      'regarding.fieldPath': 'involvedObject.fieldPath',
      reportingController: 'reportingComponent',
    },
    namespaced: true,
    reject: notSupported,
    extra: eventFields,
  });

export const jobFieldSelectors = (): FieldSelectorSpec =>
  makeSpec({
    accepted: ['metadata.name', 'metadata.namespace', 'status.successful'],
    namespaced: true,
    reject: (label) => `field label ${goQuote(label)} not supported for batchv1.Job`,
    extra: (o) => ({ 'status.successful': n(o, 'status.succeeded') }),
  });

export const csrFieldSelectors = (): FieldSelectorSpec =>
  makeSpec({
    accepted: ['metadata.name', 'spec.signerName'],
    namespaced: false,
    reject: notSupported,
    extra: (o) => ({ 'spec.signerName': s(o, 'spec.signerName') }),
  });

export const clusterTrustBundleFieldSelectors = (): FieldSelectorSpec =>
  makeSpec({
    accepted: ['metadata.name', 'spec.signerName'],
    namespaced: false,
    reject: notSupported,
    extra: (o) => ({ 'spec.signerName': s(o, 'spec.signerName') }),
  });

export const podCertificateRequestFieldSelectors = (): FieldSelectorSpec =>
  makeSpec({
    accepted: ['metadata.name', 'spec.signerName', 'spec.podName', 'spec.nodeName'],
    namespaced: true,
    reject: notSupported,
    extra: (o) => ({ 'spec.signerName': s(o, 'spec.signerName'), 'spec.podName': s(o, 'spec.podName'), 'spec.nodeName': s(o, 'spec.nodeName') }),
  });

export const resourceSliceFieldSelectors = (version: string): FieldSelectorSpec =>
  makeSpec({
    accepted: ['metadata.name', 'spec.nodeName', 'spec.driver'],
    namespaced: false,
    reject: (label) => `field label not supported for resource.k8s.io/${version}, Kind=ResourceSlice: ${label}`,
    extra: (o) => ({ 'spec.nodeName': s(o, 'spec.nodeName'), 'spec.driver': s(o, 'spec.driver') }),
  });

/** runtime.DefaultMetaV1FieldSelectorConversion: the contract of kinds without their own (metadata.name and, namespaced, metadata.namespace). */
export function defaultFieldSelector(namespaced: boolean): FieldSelectorSpec {
  return defaultSpec(namespaced);
}

/**
 * The contract of a custom resource: metadata.name, metadata.namespace when namespaced, and the
 * CRD's `selectableFields` (JSON paths such as `.spec.color`); anything else is
 * `field label not supported: <label>`.
 */
export function customResourceFieldSelector(namespaced: boolean, selectableFields: readonly string[] = []): FieldSelectorSpec {
  const labels = selectableFields.map((p) => (p.startsWith('.') ? p.slice(1) : p));
  return makeSpec({
    accepted: ['metadata.name', ...(namespaced ? ['metadata.namespace'] : []), ...labels],
    namespaced,
    reject: notSupported,
    extra: (obj) => {
      const out: Record<string, string> = {};
      for (const label of labels) {
        const v = get(obj, label);
        if (typeof v === 'string') out[label] = v;
        else if (typeof v === 'boolean' || typeof v === 'number') out[label] = String(v);
      }
      return out;
    },
  });
}
