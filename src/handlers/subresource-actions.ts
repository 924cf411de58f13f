import { methodNotAllowed } from '../api/errors.js';
import { writeObject } from '../codec/response-writer.js';
import { actionStoreFor } from '../rest/action-stores.js';
import { writeOptionsOf, type ResourceRequest, outputFor, scaleKind } from './context.js';
import { decodeObject } from './decode-object.js';

/**
 * POST on an action subresource (pod eviction and binding, service account tokens): the body is
 * decoded as the action's kind and handed to its store, which answers 201 with the action's result.
 * Pod and service proxies are served by `handleProxy`, a pod's log by `handlePodLog` and its exec,
 * attach and portforward by `handlePodConnect` instead.
 */
export async function handleSubresourceAction(r: ResourceRequest): Promise<void> {
  const sub = r.ri.subresource;
  const format = outputFor(r, 'object', ...scaleKind(r));
  const store = await actionStoreFor(r, sub);
  if (r.ri.verb !== 'create') throw methodNotAllowed();
  const body = await decodeObject(r, ...store.bodyKind);
  writeObject(r.res, 201, await store.create(body, writeOptionsOf(r).dryRun), format);
}
