/** Reconciles an object's metadata.namespace with the request path's namespace, as kube's BeforeCreate does. */
import { badRequest } from '../api/errors.js';

/**
 * The namespace the object must end up with: the request's namespace for namespaced types, ''
 * for cluster-scoped ones (a namespace in a cluster-scoped object is cleared, not rejected). An
 * object naming a different namespace than the request is a 400 BadRequest with kube's message.
 */
export function resolveObjectNamespace(requestNamespace: string, namespaced: boolean, objectNamespace: string): string {
  const expected = namespaced ? requestNamespace : '';
  if (objectNamespace === expected || objectNamespace === '' || expected === '') return expected;
  throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
}
