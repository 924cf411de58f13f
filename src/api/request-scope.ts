import type { AdmissionRequest } from './admission-attributes.js';
import type { Obj } from './object-util.js';
import type { User } from './user.js';

/**
 * One request as the layers below the HTTP handlers see it, built once by the handler: who sent it,
 * its write options as sent, and where its warnings and audit annotations go. The store and
 * admission read it; neither sees the HTTP request or response.
 */
export interface RequestScope {
  readonly user: User;
  /** `dryRun`, `fieldManager` and `fieldValidation` as the query sent them (for the options admission sees). */
  readonly writeOptions: Readonly<{ dryRun: readonly string[]; fieldManager: string; fieldValidation: string }>;
  /** Adds a `Warning` to the response (each text once; dropped once the response has begun). */
  warn(message: string): void;
  /** Records an audit annotation of the request (the first value of a key wins, as in kube). */
  annotate(key: string, value: string): void;
}

/** Who the server's own writes (controllers, bootstrap) act as, as kube's loopback client does. */
export const LOOPBACK_USER: User = Object.freeze({ name: 'system:apiserver', uid: '', groups: ['system:authenticated', 'system:masters'], extra: {} });

/** The scope of the server's own writes: the loopback identity, no options, warnings and annotations dropped. */
export const LOOPBACK_SCOPE: RequestScope = Object.freeze({
  user: LOOPBACK_USER,
  writeOptions: Object.freeze({ dryRun: [], fieldManager: '', fieldValidation: '' }),
  warn: () => undefined,
  annotate: () => undefined,
});

/**
 * The admission view of a request's operation: create and update options from the scope's write
 * options as kube decodes them (only what was sent), a delete's DeleteOptions object, nothing for a
 * connect. The server's own writes carry no options but a delete's.
 */
export function admissionRequestOf(scope: RequestScope, operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT', deleteOptions?: Obj): AdmissionRequest {
  let options: Obj | undefined;
  if (operation === 'DELETE') options = deleteOptions;
  else if (operation !== 'CONNECT' && scope !== LOOPBACK_SCOPE) options = writeOptionsObject(scope, operation === 'CREATE' ? 'CreateOptions' : 'UpdateOptions');
  return { user: scope.user, options, warn: (m) => scope.warn(m), annotate: (k, v) => scope.annotate(k, v) };
}

function writeOptionsObject(scope: RequestScope, kind: string): Obj {
  const out: Obj = { kind, apiVersion: 'meta.k8s.io/v1' };
  const { dryRun, fieldManager, fieldValidation } = scope.writeOptions;
  if (dryRun.length > 0) out.dryRun = [...dryRun];
  if (fieldManager !== '') out.fieldManager = fieldManager;
  if (fieldValidation !== '') out.fieldValidation = fieldValidation;
  return out;
}

/** The DeleteOptions object kube hands admission for a delete, its fields in Go's order. */
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
