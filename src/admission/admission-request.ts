import type { Response } from 'express';
import type { Obj } from '../api/object-util.js';
import type { User } from '../api/user.js';
import { warningHeaderValue } from '../codec/go-quote.js';
import { logger } from '../logging/logger.js';
import type { ResourceTarget } from '../rest/resource-target.js';
import type { AdmissionRequest } from './admission.js';

/** Who the server's own writes (controllers, bootstrap) act as, as kube's loopback client does. */
export const LOOPBACK_USER: User = Object.freeze({ name: 'system:apiserver', uid: '', groups: ['system:authenticated', 'system:masters'], extra: {} });

/** A target that carries its HTTP request (handlers' ResourceRequest), narrowed without importing handlers. */
interface HttpTarget extends ResourceTarget {
  user: User;
  res: Response;
  query: URLSearchParams;
}

function isHttpTarget(r: ResourceTarget): r is HttpTarget {
  const t = r as Partial<HttpTarget>;
  return t.user !== undefined && t.res !== undefined && t.query instanceof URLSearchParams;
}

const sentWarnings = new WeakMap<Response, Set<string>>();

/**
 * The admission view of the request behind a write on `r`. `deleteOptions` is the DeleteOptions
 * object of a delete; a connect has no options (its connect options are the object); create and
 * update options come from the query, as kube decodes them
 * (`dryRun`, `fieldManager`, `fieldValidation`; a patch is an update, or a create for apply). Audit
 * annotations are kept in `res.locals.auditAnnotations` for the audit stage.
 */
export function admissionRequestOf(r: ResourceTarget, operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT', deleteOptions?: Obj): AdmissionRequest {
  if (!isHttpTarget(r)) {
    return { user: LOOPBACK_USER, options: operation === 'DELETE' ? deleteOptions : undefined, warn: () => undefined, annotate: () => undefined };
  }
  const res = r.res;
  let options: Obj | undefined;
  if (operation === 'DELETE') options = deleteOptions;
  else if (operation !== 'CONNECT') options = writeOptionsObject(r.query, operation === 'CREATE' ? 'CreateOptions' : 'UpdateOptions');
  return {
    user: r.user,
    options,
    warn: (message) => {
      let sent = sentWarnings.get(res);
      if (sent === undefined) sentWarnings.set(res, (sent = new Set()));
      if (sent.has(message) || res.headersSent) return;
      sent.add(message);
      res.append('Warning', warningHeaderValue(message));
    },
    annotate: (key, value) => {
      const annotations = (res.locals.auditAnnotations ??= {}) as Record<string, string>;
      if (annotations[key] !== undefined) return;
      annotations[key] = value;
      logger.debug('audit annotation', { key, value });
    },
  };
}

function writeOptionsObject(query: URLSearchParams, kind: string): Obj {
  const out: Obj = { kind, apiVersion: 'meta.k8s.io/v1' };
  const dryRun = query.getAll('dryRun');
  if (dryRun.length > 0) out.dryRun = dryRun;
  const fieldManager = query.get('fieldManager');
  if (fieldManager !== null && fieldManager !== '') out.fieldManager = fieldManager;
  const fieldValidation = query.get('fieldValidation');
  if (fieldValidation !== null && fieldValidation !== '') out.fieldValidation = fieldValidation;
  return out;
}

/** The DeleteOptions object kube hands webhooks for a delete, its fields in Go's order. */
export function deleteOptionsObject(opts: {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  orphanDependents?: boolean;
  propagationPolicy?: string;
  dryRun: boolean;
}): Obj {
  const out: Obj = { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1' };
  if (opts.gracePeriodSeconds !== undefined) out.gracePeriodSeconds = opts.gracePeriodSeconds;
  if (opts.preconditions !== undefined) out.preconditions = opts.preconditions;
  if (opts.orphanDependents !== undefined) out.orphanDependents = opts.orphanDependents;
  if (opts.propagationPolicy !== undefined) out.propagationPolicy = opts.propagationPolicy;
  if (opts.dryRun) out.dryRun = ['All'];
  return out;
}
