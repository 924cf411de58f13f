import { forbidden, methodNotAllowed } from '../api/errors.js';
import { isObject } from '../api/object-util.js';
import { writeObject } from '../codec/response-writer.js';
import { managerOrUserAgent } from '../fieldmanager/manager-name.js';
import { servedJsonForAsync } from '../conversion/converting-io.js';
import { writeOptionsOf, type ResourceRequest, outputFor, scaleKind } from './context.js';
import { decodeObject } from './decode-object.js';
import type { Creater } from '../rest/rest-verbs.js';

/** POST to a collection: decodes the body and answers 201 with what the resource's store created. */
export async function handleCreate(r: ResourceRequest, store: Creater): Promise<void> {
  if (r.ri.name !== '') throw methodNotAllowed();
  const format = outputFor(r, 'object', ...scaleKind(r));
  const dryRun = writeOptionsOf(r).dryRun;
  const obj = await decodeObject(r);
  if (r.info.terminating === true) {
    // kube's custom resource handler: a CRD being deleted takes no new objects.
    const name = isObject(obj.metadata) && typeof obj.metadata.name === 'string' ? obj.metadata.name : '';
    throw forbidden({ group: r.info.group, resource: r.info.resource }, name, 'create not allowed while custom resource definition is terminating');
  }
  const created = await store.create(obj, { dryRun, manager: managerOrUserAgent(writeOptionsOf(r).fieldManager, r.req.headers['user-agent']) });
  writeObject(r.res, 201, await servedJsonForAsync(r.server.catalog.customResources, created, r.apiVersion, format.representation), format);
}
