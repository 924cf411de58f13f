import type { User } from '../api/user.js';
import type { FlowSchemaConfig, FlowSubject, NonResourceRule, ResourceRule } from './config-objects.js';

/** The request facts classification reads: kube's RequestInfo and user. */
export interface FlowRequest {
  user: User;
  resourceRequest: boolean;
  verb: string;
  apiGroup: string;
  namespace: string;
  resource: string;
  subresource: string;
  /** Non-resource requests: the URL path. */
  path: string;
}

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

/** kube's containsString: a one-element list holding the wildcard matches everything. */
function contains(value: string, list: readonly string[], wildcard: string): boolean {
  if (list.length === 1 && list[0] === wildcard) return true;
  return list.includes(value);
}

function matchesSubject(user: User, subject: FlowSubject): boolean {
  switch (subject.kind) {
    case 'User':
      return subject.name === '*' || subject.name === user.name;
    case 'Group':
      return subject.name === '*' || user.groups.includes(subject.name);
    case 'ServiceAccount': {
      if (!user.name.startsWith(SERVICE_ACCOUNT_PREFIX)) return false;
      const rest = user.name.slice(SERVICE_ACCOUNT_PREFIX.length);
      // kube's serviceAccountMatchesNamespace compares prefixes: `ns:` then anything.
      if (subject.name === '*') return rest.startsWith(`${subject.namespace}:`);
      return rest === `${subject.namespace}:${subject.name}`;
    }
  }
}

function matchesResourceRule(req: FlowRequest, rule: ResourceRule): boolean {
  if (!contains(req.verb, rule.verbs, '*')) return false;
  const resource = req.subresource === '' ? req.resource : `${req.resource}/${req.subresource}`;
  if (!contains(resource, rule.resources, '*')) return false;
  if (!contains(req.apiGroup, rule.apiGroups, '*')) return false;
  if (req.namespace === '') return rule.clusterScope;
  return contains(req.namespace, rule.namespaces, '*');
}

/** kube's matchPolicyRuleNonResourceURL: `*`, the exact path, or a `prefix/*` covering it. */
function matchesNonResourceURL(urls: readonly string[], path: string): boolean {
  for (const url of urls) {
    if (url === '*' || url === path) return true;
    let prefix = url.endsWith('*') ? url.slice(0, -1) : url;
    if (!prefix.endsWith('/')) prefix += '/';
    if (path.startsWith(prefix)) return true;
  }
  return false;
}

function matchesNonResourceRule(req: FlowRequest, rule: NonResourceRule): boolean {
  return contains(req.verb, rule.verbs, '*') && matchesNonResourceURL(rule.nonResourceURLs, req.path);
}

/** Whether `req` matches one of the schema's rules (a subject, then a resource or non-resource rule), as kube's matchesFlowSchema. */
export function matchesFlowSchema(req: FlowRequest, schema: FlowSchemaConfig): boolean {
  for (const rules of schema.rules) {
    if (!rules.subjects.some((s) => matchesSubject(req.user, s))) continue;
    if (req.resourceRequest ? rules.resourceRules.some((r) => matchesResourceRule(req, r)) : rules.nonResourceRules.some((r) => matchesNonResourceRule(req, r)))
      return true;
  }
  return false;
}

/** The flow distinguisher of kube's computeFlowDistinguisher: the user name, the namespace, or ''. */
export function flowDistinguisher(req: FlowRequest, method: FlowSchemaConfig['distinguisher']): string {
  if (method === 'ByUser') return req.user.name;
  if (method === 'ByNamespace') return req.namespace;
  return '';
}
