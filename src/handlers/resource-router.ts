import type { NextFunction, Request, Response } from 'express';
import { ApiError, methodNotAllowed } from '../api/errors.js';
import { parseRequestInfo } from '../api/request-info.js';
import { writeNotFoundPage } from '../codec/plain-text.js';
import { writeError } from '../codec/response-writer.js';
import { makeResourceRequest, type ApiServices, type ResourceRequest } from './context.js';
import { handleCreate } from './create.js';
import { handleDelete, handleDeleteCollection } from './delete.js';
import { handleGet, handleList } from './read.js';
import { handleSubresourceAction, isActionSubresource } from './subresource-actions.js';
import { handlePatch, handleUpdate } from './update.js';
import { handleVirtualCreate, isVirtualType } from './virtual-types.js';
import { handleWatch } from './watch.js';

/** Verbs a type must support for each request verb (from the served resource's verb list). */
const VERB_REQUIREMENT: Record<string, string> = {
  get: 'get', list: 'list', watch: 'watch', create: 'create', update: 'update', patch: 'patch',
  delete: 'delete', deletecollection: 'deletecollection',
};

async function dispatch(r: ResourceRequest): Promise<void> {
  const verb = r.ri.verb;
  if (isVirtualType(r)) return handleVirtualCreate(r);
  if (r.ri.subresource !== '') {
    const sub = r.info.subresources[r.ri.subresource.split('/')[0] as string];
    if (!sub) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
    if (isActionSubresource(r.ri.subresource)) return handleSubresourceAction(r);
    if (!sub.verbs.includes(VERB_REQUIREMENT[verb] ?? '')) throw methodNotAllowed();
  } else if (!r.info.verbs.includes(VERB_REQUIREMENT[verb] ?? '')) {
    throw methodNotAllowed();
  }
  switch (verb) {
    case 'get': return handleGet(r);
    case 'list': return handleList(r);
    case 'watch': return handleWatch(r);
    case 'create': return handleCreate(r);
    case 'update': return handleUpdate(r);
    case 'patch': return handlePatch(r);
    case 'delete': return handleDelete(r);
    case 'deletecollection': return handleDeleteCollection(r);
    default: throw methodNotAllowed();
  }
}

/**
 * Express middleware for every resource path (`/api/v1/...`, `/apis/G/V/...`): resolves the path to a
 * served type and runs the verb's handler. Unknown groups, versions and types get kube's 404.
 */
export function resourceHandler(services: ApiServices) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const url = new URL(req.originalUrl, 'http://localhost');
    const ri = parseRequestInfo(req.method, url.pathname, url.searchParams);
    if (!ri) {
      next();
      return;
    }
    const info = services.registry.get(ri.group, ri.version, ri.resource);
    if (!info) {
      if (services.registry.hasGroupVersion(ri.group, ri.version)) {
        writeError(res, new ApiError(404, 'NotFound', 'the server could not find the requested resource', {}));
      } else writeNotFoundPage(res);
      return;
    }
    if (info.namespaced === false && ri.namespace !== '') {
      writeNotFoundPage(res);
      return;
    }
    if (info.namespaced && ri.namespace === '' && ri.verb !== 'list' && ri.verb !== 'watch') {
      writeNotFoundPage(res);
      return;
    }
    const r = makeResourceRequest(services, info, ri, req, res, url.searchParams);
    dispatch(r).catch((err: unknown) => writeError(res, err));
  };
}
