import type { NextFunction, Request, Response } from 'express';
import { badRequest, methodNotAllowed, notFound, routeNotFound } from '../api/errors.js';
import { splitPath, type RequestInfo } from '../api/request-info.js';
import type { ResourceInfo } from '../api/resource-info.js';
import { writeNotFoundPage } from '../codec/plain-text.js';
import { writeError } from '../codec/response-writer.js';
import { makeResourceRequest, type ResourceRequest } from './context.js';
import { type ServerContext } from '../rest/server-context.js';
import { handleCreate } from './create.js';
import { handleDelete, handleDeleteCollection } from './delete.js';
import { handleGet, handleList } from './read.js';
import { handleSubresourceAction } from './subresource-actions.js';
import { handleProxy, isServedProxy } from './proxy.js';
import { handlePodLog, isPodLog } from './pod-log.js';
import { handlePodConnect, isPodConnect } from './pod-connect.js';
import { isActionSubresource } from '../rest/action-stores.js';
import { handlePatch, handleUpdate } from './update.js';
import { storeFor } from '../rest/store-for.js';
import { afterDeferredWatchFrames } from '../watch/watch-writer.js';
import { isCollectionDeleter, isCreater, isGetter, isGracefulDeleter, isLister, isUpdater, isWatcher } from '../rest/rest-verbs.js';
import { handleWatch } from './watch.js';
import { addWarnings } from './decode-object.js';
import { parsedRequestOf } from '../api/parsed-request.js';

/** Verbs a type must support for each request verb (from the served resource's verb list). */
const VERB_REQUIREMENT: Record<string, string> = {
  get: 'get',
  list: 'list',
  watch: 'watch',
  create: 'create',
  update: 'update',
  patch: 'patch',
  delete: 'delete',
  deletecollection: 'deletecollection',
};

/** Verbs served on an object's own path: a type with none of them (reviews, bindings) has no such path. */
const ITEM_VERBS = new Set(['get', 'update', 'patch', 'delete']);

/** Names kube refuses as path segments: `.`, `..`, and anything with `/` or `%` (IsPathSegmentName). */
function pathSegmentProblems(value: string): string[] {
  if (value === '.' || value === '..') return [`may not be '${value}'`];
  const problems: string[] = [];
  if (value.includes('/')) problems.push("may not contain '/'");
  if (value.includes('%')) problems.push("may not contain '%'");
  return problems;
}

/**
 * The path checks kube-apiserver's routes and storage make before any handler work: extra segments
 * route only for proxy subresources (404 otherwise), and the name and namespace must be usable path
 * segments (400, as kube's storage key functions answer; kube answers a `.` or `..` namespace with a
 * 500, Capstan with a 400 of the same form).
 */
function checkPath(ri: RequestInfo, info: ResourceInfo): void {
  if (ri.resource === '' || (ri.name === '' && ri.subresource !== '')) throw routeNotFound();
  if (ri.subpath.length > 0 && ri.subresource !== 'proxy') throw routeNotFound();
  if (ri.name !== '' && ri.subresource === '' && !info.verbs.some((v) => ITEM_VERBS.has(v))) throw routeNotFound();
  // Routing comes first: a subresource the type does not serve is 404 whatever the name.
  if (ri.subresource !== '' && info.subresources[ri.subresource] === undefined) {
    // kube's custom resource handler answers an unserved subresource as a missing object.
    if (info.custom === true) throw notFound({ group: info.group, resource: info.resource }, ri.name);
    throw routeNotFound();
  }
  if (ri.namespace !== '') {
    const problems = pathSegmentProblems(ri.namespace);
    if (problems.length > 0) throw badRequest(`Namespace parameter invalid: ${JSON.stringify(ri.namespace)}: ${problems.join(';')}`);
  }
  if (ri.name !== '') {
    const problems = pathSegmentProblems(ri.name);
    if (problems.length > 0) throw badRequest(`Name parameter invalid: ${JSON.stringify(ri.name)}: ${problems.join(';')}`);
  }
}

async function dispatch(r: ResourceRequest): Promise<void> {
  const verb = r.ri.verb;
  checkPath(r.ri, r.info);
  if (r.info.warning !== undefined) addWarnings(r, [r.info.warning]);
  if (r.ri.subresource !== '') {
    const sub = r.info.subresources[r.ri.subresource];
    if (!sub) throw routeNotFound();
    if (isServedProxy(r)) return handleProxy(r);
    if (isPodLog(r)) return handlePodLog(r);
    if (isPodConnect(r)) return handlePodConnect(r);
    if (isActionSubresource(r.ri.subresource)) return handleSubresourceAction(r);
    if (!sub.verbs.includes(VERB_REQUIREMENT[verb] ?? '')) throw methodNotAllowed();
  } else if (!r.info.verbs.includes(VERB_REQUIREMENT[verb] ?? '')) {
    throw methodNotAllowed();
  }
  const store = storeFor(r);
  switch (verb) {
    case 'get': {
      if (!isGetter(store)) throw methodNotAllowed();
      return handleGet(r, store);
    }
    case 'list': {
      if (!isLister(store)) throw methodNotAllowed();
      return handleList(r, store);
    }
    case 'watch': {
      if (!isWatcher(store)) throw methodNotAllowed();
      return handleWatch(r, store);
    }
    case 'create': {
      if (!isCreater(store)) throw methodNotAllowed();
      return handleCreate(r, store);
    }
    case 'update': {
      if (!isUpdater(store)) throw methodNotAllowed();
      return handleUpdate(r, store);
    }
    case 'patch': {
      if (!isUpdater(store)) throw methodNotAllowed();
      return handlePatch(r, store);
    }
    case 'delete': {
      if (!isGracefulDeleter(store)) throw methodNotAllowed();
      return handleDelete(r, store);
    }
    case 'deletecollection': {
      if (!isCollectionDeleter(store)) throw methodNotAllowed();
      return handleDeleteCollection(r, store);
    }
    default:
      throw methodNotAllowed();
  }
}

/**
 * Whether kube-apiserver answers an unroutable path with a `Status` 404 rather than its plain-text page:
 * everything under `/api/` and under a served group's `/apis/GROUP/` is routed by its API handlers.
 */
function underApiRoot(server: ServerContext, path: string): boolean {
  const parts = splitPath(path);
  if (parts[0] === 'api') return parts.length > 1;
  return parts[0] === 'apis' && parts.length > 2 && server.catalog.group(parts[1]) !== undefined;
}

const MUTATING_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/**
 * `end` for a layer of responses above `base`: the response of a write (marked `holdForWatchers` in
 * its `locals`) ends only after the watch frames its change queued behind busy sockets, so a client
 * never sees its write's answer before a watch of the same server sees the change. A method of the
 * response prototypes: a write's response costs no wrapper of its own.
 */
export function watchersFirstLayer(base: object): PropertyDescriptorMap {
  const { end } = base as { end: (this: Response, ...args: unknown[]) => Response };
  return {
    end: {
      value(this: Response, ...args: unknown[]): Response {
        const locals = this.locals as { holdForWatchers?: boolean } | undefined;
        if (locals?.holdForWatchers !== true) return end.apply(this, args);
        locals.holdForWatchers = false;
        afterDeferredWatchFrames(() => end.apply(this, args));
        return this;
      },
      writable: true,
      configurable: true,
    },
  };
}

/**
 * Express middleware for every resource path (`/api/v1/...`, `/apis/G/V/...`): resolves the path to a
 * served type and runs the verb's handler. The path is read raw from the request line (never resolved
 * against dot segments or backslashes). Unknown groups, versions and types get kube's 404.
 */
export function resourceHandler(server: ServerContext) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const { path, query, info: ri } = parsedRequestOf(req);
    if (path === undefined || ri === undefined) {
      next();
      return;
    }
    const info = server.catalog.get(ri.group, ri.version, ri.resource);
    if (!info) {
      if (underApiRoot(server, path)) writeError(res, routeNotFound());
      else writeNotFoundPage(res);
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
    // A proxied request changes nothing here: its answer need not wait for watchers.
    if (MUTATING_VERBS.has(ri.verb) && ri.subresource !== 'proxy') res.locals.holdForWatchers = true;
    const r = makeResourceRequest(server, info, ri, req, res, query);
    dispatch(r).catch((err: unknown) => writeError(res, err));
  };
}

/**
 * The last handler: a path nothing served. Under the API roots it is kube's `Status` 404, elsewhere
 * Go's plain-text `404 page not found`.
 */
export function notFoundHandler(server: ServerContext) {
  return (req: Request, res: Response): void => {
    const { path } = parsedRequestOf(req);
    if (path !== undefined && underApiRoot(server, path)) writeError(res, routeNotFound());
    else writeNotFoundPage(res);
  };
}

type Middleware = (req: Request, res: Response, next: NextFunction) => void;

/**
 * Routes a request by what its path names: a resource (`/api/v1/namespaces/N/pods`, ...) to
 * `resources`, every other path (discovery, health, metrics, OpenAPI, ...) to `others`. A resource
 * request is then matched against no route of the other handlers, which serve none of its paths.
 */
export function byRequestKind(resources: Middleware, others: Middleware): Middleware {
  return (req, res, next) => {
    const ri = parsedRequestOf(req).info;
    if (ri !== undefined && ri.resource !== '') resources(req, res, next);
    else others(req, res, next);
  };
}
