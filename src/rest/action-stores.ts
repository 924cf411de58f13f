import { ApiError, badRequest, notFound } from '../api/errors.js';
import { isObject, objectKey, stringField, type Obj } from '../api/object-util.js';
import { admissionRequestOf } from '../api/request-scope.js';
import { bindPod } from './binding.js';
import { evictPod } from './eviction.js';
import type { ResourceTarget } from './server-context.js';
import { withStorage } from './storage-errors.js';
import { createTokenRequest } from './token-request.js';

/**
 * The stores of kube's action subresources (`pods/eviction`, `pods/binding`, `serviceaccounts/token`):
 * each takes one POSTed object of `bodyKind` and answers with one object. Creating runs admission of
 * the body under the parent resource and the subresource's name, as kube admits them, then the action.
 */
export interface ActionStore {
  /** The kind and apiVersion the POSTed body is decoded as. */
  readonly bodyKind: readonly [kind: string, apiVersion: string];
  /** Admits and performs the action; answers what the API answers (a Success Status, a TokenRequest). */
  create(body: Obj, dryRun: boolean): Promise<Obj>;
}

/** The subresources that perform an action (or connect to a kubelet) instead of reading or writing a view of the object. */
const ACTIONS = new Set(['eviction', 'binding', 'token', 'log', 'exec', 'attach', 'portforward', 'proxy']);

/** Whether `subresource` (its first segment) is an action or a connection rather than a view of the object. */
export function isActionSubresource(subresource: string): boolean {
  return ACTIONS.has(subresource.split('/')[0]);
}

function success(code: number): Obj {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code };
}

async function admitAction(r: ResourceTarget, subresource: string, object: Obj, dryRun: boolean): Promise<void> {
  await r.admission.run({
    operation: 'CREATE',
    info: r.info,
    namespace: r.ri.namespace,
    name: r.ri.name,
    subresource,
    object,
    oldObject: undefined,
    dryRun,
    request: admissionRequestOf(r.scope, 'CREATE'),
  });
}

/**
 * The action store of `subresource` on the object `r` names, once that object exists (404
 * otherwise). A pod's log, exec, attach and portforward go to its kubelet (src/handlers/pod-log.ts,
 * pod-connect.ts), and the pod, service and node proxies are served by src/handlers/proxy.ts: none
 * of them comes here, and any other streaming subresource answers 400.
 */
export async function actionStoreFor(r: ResourceTarget, subresource: string): Promise<ActionStore> {
  const key = objectKey(r.info.namespaced ? r.ri.namespace : '', r.ri.name);
  // Binding and eviction only check here that the pod exists (their own writes read it again and
  // answer 404 if it is gone): a cached copy serves, where the process keeps one. A TokenRequest
  // is signed for the ServiceAccount the store holds now.
  const existenceOnly = subresource === 'binding' || subresource === 'eviction';
  const stored =
    (existenceOnly ? r.server.storage.peek?.(r.type, key) : undefined) ?? (await withStorage(r, r.ri.name, () => r.server.storage.get(r.type, key)));
  if (!stored) throw notFound({ group: r.info.group, resource: r.info.resource }, r.ri.name);
  const parent = (): Obj => JSON.parse(stored.json) as Obj;
  switch (subresource) {
    case 'eviction':
      return {
        bodyKind: ['Eviction', 'policy/v1'],
        create: async (body, dryRun) => {
          await admitAction(r, subresource, body, dryRun);
          await evictPod(r, r.ri.name, {
            name: isObject(body.metadata) ? stringField(body.metadata, 'name') : '',
            deleteOptions: isObject(body.deleteOptions) ? body.deleteOptions : undefined,
            queryDryRun: [...r.scope.writeOptions.dryRun],
          });
          return success(201);
        },
      };
    case 'binding':
      return {
        bodyKind: ['Binding', 'v1'],
        create: async (body, dryRun) => {
          const node = isObject(body.target) ? stringField(body.target, 'name') : '';
          if (node === '') throw new ApiError(422, 'Invalid', `Binding "${r.ri.name}" is invalid: target.name: Required value`, {});
          await admitAction(r, subresource, body, dryRun);
          const metadata = isObject(body.metadata) ? body.metadata : {};
          await bindPod(r, r.ri.name, node, dryRun, {
            labels: isObject(metadata.labels) ? metadata.labels : {},
            annotations: isObject(metadata.annotations) ? metadata.annotations : {},
          });
          return success(201);
        },
      };
    case 'token':
      return {
        bodyKind: ['TokenRequest', 'authentication.k8s.io/v1'],
        create: async (body, dryRun) => {
          await admitAction(r, subresource, body, dryRun);
          return createTokenRequest(r, parent(), body);
        },
      };
    default: {
      if (r.info.resource === 'pods') {
        const spec = parent().spec;
        const node = isObject(spec) ? stringField(spec, 'nodeName') : '';
        if (node === '') throw badRequest(`pod ${r.ri.name} does not have a host assigned`);
      }
      throw badRequest(`${subresource} is not supported: Capstan serves the API only; no kubelet or container runtime is connected`);
    }
  }
}

/**
 * Admission of a CONNECT on a pod's attach, exec, portforward or proxy, as kube's connect handler
 * runs it before reaching the kubelet (and before looking the pod up): `options` (the connect options
 * from the query) are the object, there are no operation options, and a dry run is refused first.
 */
export async function admitConnect(r: ResourceTarget, subresource: string, options: Obj): Promise<void> {
  if (r.scope.writeOptions.dryRun.length > 0) throw badRequest('dryRun is not supported');
  await r.admission.run({
    operation: 'CONNECT',
    info: r.info,
    namespace: r.ri.namespace,
    name: r.ri.name,
    subresource,
    object: options,
    oldObject: undefined,
    dryRun: false,
    request: admissionRequestOf(r.scope, 'CONNECT'),
  });
}
