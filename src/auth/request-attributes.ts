import { parseRequestInfo } from '../api/request-info.js';
import type { ParsedRequest } from '../api/parsed-request.js';
import { parseFieldSelector, type FieldRequirement } from '../selectors/field-selector.js';
import type { AuthorizationAttributes } from './authorizer.js';

/** A request's authorizer attributes without the user (who is established separately). */
export type RequestAttributes = Omit<AuthorizationAttributes, 'user'>;

/** A field selector's terms; undefined when it does not parse (the handler answers that request's 400). */
function fieldSelectorTerms(selector: string): FieldRequirement[] | undefined {
  try {
    return parseFieldSelector(selector);
  } catch {
    return undefined;
  }
}

/** kube's IsValidPathSegmentName: a name that can stand in a path segment. */
function isPathSegmentName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !name.includes('/') && !name.includes('%');
}

/**
 * What kube's RequestInfoFactory gives its authorizers and audit for a parsed request target:
 * the verb, the resource and its group, version, namespace, name and subresource, or the path of a
 * non-resource request. Besides the router's view of the path it follows kube in two places: a
 * Namespace object's path (`/api/v1/namespaces/NAME[/status|/finalize]`) has namespace NAME, so a
 * RoleBinding in NAME can grant access to it; and a list or watch whose field selector requires
 * `metadata.name=X` names X, so `resourceNames` rules can allow it. A list, watch or
 * deletecollection carries its field selector's terms when they parse.
 */
export function requestAttributesOf(method: string, request: ParsedRequest): RequestAttributes {
  const { query } = request;
  const path = request.path ?? request.rawPath;
  const ri = request.path !== undefined ? request.info : parseRequestInfo(method, path, query);
  if (ri === undefined) {
    return {
      verb: method.toLowerCase(),
      resourceRequest: false,
      apiGroup: '',
      apiVersion: '',
      namespace: '',
      resource: '',
      subresource: '',
      name: '',
      path,
    };
  }
  const attrs: RequestAttributes = {
    // kube's request info gives a resource request of any other method (OPTIONS, ...) no verb at all.
    verb: ri.verb === 'unknown' ? '' : ri.verb,
    resourceRequest: true,
    apiGroup: ri.group,
    apiVersion: ri.version,
    namespace: ri.resource === 'namespaces' && ri.name !== '' ? ri.name : ri.namespace,
    resource: ri.resource,
    subresource: ri.subresource,
    name: ri.name,
    path,
  };
  const selector = query.get('fieldSelector');
  if (selector !== null && ['list', 'watch', 'deletecollection'].includes(attrs.verb)) {
    const terms = fieldSelectorTerms(selector);
    if (terms !== undefined) {
      attrs.fieldSelector = terms;
      if (attrs.verb !== 'deletecollection' && attrs.name === '') {
        const named = terms.find((t) => t.field === 'metadata.name' && t.operator === '=');
        if (named !== undefined && isPathSegmentName(named.value)) attrs.name = named.value;
      }
    }
  }
  return attrs;
}
