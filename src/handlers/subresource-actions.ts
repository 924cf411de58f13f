import { ApiError, badRequest, methodNotAllowed, notFound } from '../api/errors.js';
import { createTokenRequest } from '../auth/token-request.js';
import { writeObject } from '../codec/response-writer.js';
import { writeOptionsOf, type ResourceRequest, outputFor, scaleKind } from './context.js';
import { withStorage } from '../rest/storage-errors.js';
import { decodeObject } from './decode-object.js';
import { evictPod } from '../rest/eviction.js';
import { bindPod } from '../rest/binding.js';
import { isObject, objectKey, stringField, type Obj } from '../api/object-util.js';
import { admissionRequestOf } from '../admission/admission-request.js';
import { podConnectOptions } from './connect-options.js';

/** Subresources that perform an action instead of reading or writing a view of the object. */
const ACTIONS = new Set(['eviction', 'binding', 'token', 'log', 'exec', 'attach', 'portforward', 'proxy']);

export function isActionSubresource(subresource: string): boolean {
  return ACTIONS.has(subresource.split('/')[0]);
}

/**
 * Admission of a create on an action subresource (an Eviction, a TokenRequest), as kube admits them:
 * every plugin sees the request's object under the parent resource and the subresource's name.
 */
async function admitAction(r: ResourceRequest, subresource: string, object: Obj): Promise<void> {
  await r.server.admission.run({
    operation: 'CREATE',
    info: r.info,
    namespace: r.ri.namespace,
    name: r.ri.name,
    subresource,
    object,
    oldObject: undefined,
    dryRun: writeOptionsOf(r).dryRun,
    request: admissionRequestOf(r, 'CREATE'),
  });
}

/**
 * Admission of a CONNECT on a pod's attach, exec, portforward or proxy, as kube's connect handler
 * runs it before reaching the kubelet: the connect options (from the query) are the object, there
 * are no operation options, and a dry run is refused first.
 */
async function admitConnect(r: ResourceRequest, subresource: string): Promise<void> {
  const [, ...rest] = r.ri.subresource.split('/');
  const object = podConnectOptions(subresource, r.query, rest.join('/'));
  if (object === undefined) return;
  if (r.query.getAll('dryRun').length > 0) throw badRequest('dryRun is not supported');
  await r.server.admission.run({
    operation: 'CONNECT',
    info: r.info,
    namespace: r.ri.namespace,
    name: r.ri.name,
    subresource,
    object,
    oldObject: undefined,
    dryRun: false,
    request: admissionRequestOf(r, 'CONNECT'),
  });
}

function success(code: number): Obj {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code };
}

/**
 * Pod eviction and binding, service account tokens; the streaming subresources of a real node
 * (log, exec, attach, portforward, proxy) have no kubelet behind them here and answer 400, after
 * admission of the CONNECT (a webhook may refuse it first, as in kube).
 */
export async function handleSubresourceAction(r: ResourceRequest): Promise<void> {
  const sub = r.ri.subresource.split('/')[0];
  const format = outputFor(r, 'object', ...scaleKind(r));
  const qr = { group: r.info.group, resource: r.info.resource };
  const key = objectKey(r.info.namespaced ? r.ri.namespace : '', r.ri.name);
  // kube admits a connect before its connecter looks the pod up.
  if (r.info.resource === 'pods' && r.info.group === '') await admitConnect(r, sub);
  const stored = await withStorage(r, r.ri.name, () => r.server.storage.get(r.type, key));
  if (!stored) throw notFound(qr, r.ri.name);
  const obj = JSON.parse(stored.json) as Obj;
  switch (sub) {
    case 'eviction': {
      if (r.ri.verb !== 'create') throw methodNotAllowed();
      const body = await decodeObject(r, 'Eviction', 'policy/v1');
      await admitAction(r, sub, body);
      await evictPod(r, r.ri.name, {
        name: isObject(body.metadata) ? stringField(body.metadata, 'name') : '',
        deleteOptions: isObject(body.deleteOptions) ? body.deleteOptions : undefined,
        queryDryRun: r.query.getAll('dryRun'),
      });
      writeObject(r.res, 201, success(201), format);
      return;
    }
    case 'binding': {
      if (r.ri.verb !== 'create') throw methodNotAllowed();
      const body = await decodeObject(r, 'Binding', 'v1');
      const target = isObject(body.target) ? stringField(body.target, 'name') : '';
      if (target === '') throw new ApiError(422, 'Invalid', `Binding "${r.ri.name}" is invalid: target.name: Required value`, {});
      await admitAction(r, sub, body);
      const metadata = isObject(body.metadata) ? body.metadata : {};
      await bindPod(r, r.ri.name, target, writeOptionsOf(r).dryRun, {
        labels: isObject(metadata.labels) ? metadata.labels : {},
        annotations: isObject(metadata.annotations) ? metadata.annotations : {},
      });
      writeObject(r.res, 201, success(201), format);
      return;
    }
    case 'token': {
      if (r.ri.verb !== 'create') throw methodNotAllowed();
      const body = await decodeObject(r, 'TokenRequest', 'authentication.k8s.io/v1');
      await admitAction(r, sub, body);
      writeObject(r.res, 201, await createTokenRequest(r, obj, body), format);
      return;
    }
    default: {
      if (r.info.resource === 'pods') {
        const node = isObject(obj.spec) ? stringField(obj.spec, 'nodeName') : '';
        if (node === '') throw badRequest(`pod ${r.ri.name} does not have a host assigned`);
      }
      throw badRequest(`${sub} is not supported: Capstan serves the API only; no kubelet or container runtime is connected`);
    }
  }
}
