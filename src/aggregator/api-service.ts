import { isObject, type Obj } from '../api/object-util.js';
import { asString } from '../api/values.js';

/** Storage type of APIServices. */
export const API_SERVICES_TYPE = 'apiservices.apiregistration.k8s.io';

/** An APIService's `spec.service`, with kube's default port (443). */
export interface ServiceReference {
  namespace: string;
  name: string;
  port: number;
}

/** What the aggregator reads of one stored APIService. */
export interface ApiServiceInfo {
  name: string;
  group: string;
  version: string;
  /** Absent for a local APIService (served by Capstan itself). */
  service?: ServiceReference;
  /** PEM of `spec.caBundle` ('' when absent: the system's roots verify the extension server). */
  caBundle: string;
  insecureSkipTLSVerify: boolean;
  groupPriorityMinimum: number;
  versionPriority: number;
  /** Whether the `Available` condition is `True` (what kube's proxy checks before proxying). */
  available: boolean;
  /** The stored object, as the availability controller rewrites its status. */
  object: Obj;
}

// Unlike the shared asNumber, NaN and the infinities read as 0.
function finiteNumber(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** The `type` condition of an APIService's status, if present. */
export function conditionOf(obj: Obj, type: string): Obj | undefined {
  const status = isObject(obj.status) ? obj.status : {};
  const conditions = Array.isArray(status.conditions) ? status.conditions : [];
  for (const c of conditions) if (isObject(c) && c.type === type) return c;
  return undefined;
}

/**
 * Reads a stored APIService. Objects stored before validation checked them (or by another server)
 * are read leniently: missing fields are empty, a service without port gets 443.
 */
export function apiServiceInfoOf(obj: Obj): ApiServiceInfo {
  const metadata = isObject(obj.metadata) ? obj.metadata : {};
  const spec = isObject(obj.spec) ? obj.spec : {};
  const svc = isObject(spec.service) ? spec.service : undefined;
  const caBundle = asString(spec.caBundle);
  return {
    name: asString(metadata.name),
    group: asString(spec.group),
    version: asString(spec.version),
    service:
      svc === undefined ? undefined : { namespace: asString(svc.namespace), name: asString(svc.name), port: typeof svc.port === 'number' ? svc.port : 443 },
    caBundle: caBundle === '' ? '' : Buffer.from(caBundle, 'base64').toString('utf8'),
    insecureSkipTLSVerify: spec.insecureSkipTLSVerify === true,
    groupPriorityMinimum: finiteNumber(spec.groupPriorityMinimum),
    versionPriority: finiteNumber(spec.versionPriority),
    available: conditionOf(obj, 'Available')?.status === 'True',
    object: obj,
  };
}

/** `name.namespace.svc`: the server name kube's aggregator verifies an extension server's certificate for. */
export function serviceServerName(ref: ServiceReference): string {
  return `${ref.name}.${ref.namespace}.svc`;
}
