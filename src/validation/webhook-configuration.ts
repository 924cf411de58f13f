/**
 * Validation of MutatingWebhookConfiguration and ValidatingWebhookConfiguration
 * (admissionregistration.k8s.io/v1) as kube-apiserver 1.36 validates them: webhook names, rules,
 * policies, timeouts, selectors, client config (URL or Service), admission review versions and match
 * conditions, with the update leniencies kube has for objects stored before a rule existed (side
 * effects, unrecognised review versions, duplicate names, invalid selector values, match conditions
 * left unchanged).
 */
import type { StatusCause } from '../api/errors.js';
import { duplicateField, goJson, invalidField, notSupportedField, requiredField } from './field-errors.js';
import { validateLabelSelector } from './label-selector.js';
import { isDNS1035Label, isDNS1123Subdomain, isLabelKey } from './string-formats.js';
import { asArray, asString, type Obj, objectOrUndefined } from '../api/values.js';
import { objects } from './value-access.js';

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const ALL_SIDE_EFFECTS = ['None', 'NoneOnDryRun', 'Some', 'Unknown'];
const NO_SIDE_EFFECTS = ['None', 'NoneOnDryRun'];
const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const REINVOCATION_POLICIES = ['IfNeeded', 'Never'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const REVIEW_VERSIONS = ['v1', 'v1beta1'];

interface Options {
  ignoreMatchConditions: boolean;
  requireNoSideEffects: boolean;
  requireRecognizedReviewVersion: boolean;
  requireUniqueNames: boolean;
  checkExpression: ExpressionCheck;
}

function strings(v: unknown): string[] {
  return asArray(v).map(asString);
}

/** IsFullyQualifiedName: a DNS subdomain of at least three segments. */
function fullyQualifiedName(field: string, name: string): StatusCause[] {
  if (name === '') return [requiredField(field)];
  const errs = isDNS1123Subdomain(name);
  if (errs.length > 0) return [invalidField(field, name, errs.join(','))];
  if (name.split('.').length < 3) return [invalidField(field, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

function validateResources(resources: string[], field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (resources.length === 0) causes.push(requiredField(field));
  const withWildcardSub = new Set<string>();
  const subWithWildcardRes = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let withoutSub = false;
  resources.forEach((resSub, i) => {
    if (resSub === '') {
      causes.push(requiredField(`${field}[${i}]`));
      return;
    }
    if (resSub === '*/*') doubleWildcard = true;
    if (resSub === '*') singleWildcard = true;
    const slash = resSub.indexOf('/');
    if (slash < 0) {
      withoutSub = resSub !== '*';
      return;
    }
    const res = resSub.slice(0, slash);
    const sub = resSub.slice(slash + 1);
    if (withWildcardSub.has(res)) causes.push(invalidField(`${field}[${i}]`, resSub, `if '${res}/*' is present, must not specify ${resSub}`));
    if (subWithWildcardRes.has(sub)) causes.push(invalidField(`${field}[${i}]`, resSub, `if '*/${sub}' is present, must not specify ${resSub}`));
    if (sub === '*') withWildcardSub.add(res);
    if (res === '*') subWithWildcardRes.add(sub);
  });
  if (resources.length > 1 && doubleWildcard) causes.push(invalidField(field, goJson(resources), "if '*/*' is present, must not specify other resources"));
  if (singleWildcard && withoutSub)
    causes.push(invalidField(field, goJson(resources), "if '*' is present, must not specify other resources without subresources"));
  return causes;
}

function validateRule(rule: Obj, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const operations = strings(rule.operations);
  if (operations.length === 0) causes.push(requiredField(`${field}.operations`));
  if (operations.length > 1 && operations.includes('*')) {
    causes.push(invalidField(`${field}.operations`, goJson(operations), "if '*' is present, must not specify other operations"));
  }
  operations.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) causes.push(notSupportedField(`${field}.operations[${i}]`, op, OPERATIONS));
  });
  const groups = strings(rule.apiGroups);
  if (groups.length === 0) causes.push(requiredField(`${field}.apiGroups`));
  if (groups.length > 1 && groups.includes('*'))
    causes.push(invalidField(`${field}.apiGroups`, goJson(groups), "if '*' is present, must not specify other API groups"));
  const versions = strings(rule.apiVersions);
  if (versions.length === 0) causes.push(requiredField(`${field}.apiVersions`));
  if (versions.length > 1 && versions.includes('*'))
    causes.push(invalidField(`${field}.apiVersions`, goJson(versions), "if '*' is present, must not specify other API versions"));
  versions.forEach((v, i) => {
    if (v === '') causes.push(requiredField(`${field}.apiVersions[${i}]`));
  });
  causes.push(...validateResources(strings(rule.resources), `${field}.resources`));
  if (rule.scope !== undefined && rule.scope !== null && !SCOPES.includes(asString(rule.scope)))
    causes.push(notSupportedField(`${field}.scope`, asString(rule.scope), SCOPES));
  return causes;
}

function validateUrl(field: string, raw: string): StatusCause[] {
  const form = '; desired format: https://host[/path]';
  let u: URL;
  try {
    u = new URL(raw);
  } catch (err) {
    return [requiredField(field, `url must be a valid URL: ${err instanceof Error ? err.message : String(err)}${form}`)];
  }
  const causes: StatusCause[] = [];
  const scheme = u.protocol.replace(/:$/, '');
  if (scheme !== 'https') causes.push(invalidField(field, scheme, `'https' is the only allowed URL scheme${form}`));
  if (u.host === '') causes.push(invalidField(field, u.host, `host must be specified${form}`));
  if (u.username !== '' || u.password !== '') {
    causes.push(invalidField(field, u.password !== '' ? `${u.username}:${u.password}` : u.username, 'user information is not permitted in the URL'));
  }
  if (u.hash.length > 1) causes.push(invalidField(field, decodeURIComponent(u.hash.slice(1)), 'fragments are not permitted in the URL'));
  if (u.search.length > 1) causes.push(invalidField(field, u.search.slice(1), 'query parameters are not permitted in the URL'));
  return causes;
}

function validateService(field: string, service: Obj): StatusCause[] {
  const causes: StatusCause[] = [];
  // kube passes name and namespace to its service check in swapped order: an empty namespace is
  // reported at .name and an empty name at .namespace.
  if (asString(service.namespace) === '') causes.push(requiredField(`${field}.name`));
  if (asString(service.name) === '') causes.push(requiredField(`${field}.namespace`));
  const port = typeof service.port === 'number' ? service.port : 443;
  if (!(Number.isInteger(port) && port >= 1 && port <= 65535))
    causes.push(invalidField(`${field}.port`, port, 'port is not valid: must be between 1 and 65535, inclusive'));
  if (typeof service.path !== 'string') return causes;
  const path = service.path;
  if (path === '/' || path === '') return causes;
  if (path === '//') return [...causes, invalidField(`${field}.path`, path, 'segment[0] may not be empty')];
  if (!path.startsWith('/')) causes.push(invalidField(`${field}.path`, path, "must start with a '/'"));
  let rest = path.slice(1);
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  rest.split('/').forEach((step, i) => {
    if (step === '') {
      causes.push(invalidField(`${field}.path`, path, `segment[${i}] may not be empty`));
      return;
    }
    for (const failure of isDNS1123Subdomain(step)) causes.push(invalidField(`${field}.path`, path, `segment[${i}]: ${failure}`));
  });
  return causes;
}

function validateMatchConditions(conditions: Obj[], field: string, checkExpression: ExpressionCheck): StatusCause[] {
  const causes: StatusCause[] = [];
  if (conditions.length > 64) causes.push({ reason: 'FieldValueTooMany', field, message: `Too many: ${conditions.length}: must have at most 64 items` });
  const names = new Set<string>();
  conditions.forEach((c, i) => {
    const at = `${field}[${i}]`;
    const expression = asString(c.expression).trim();
    if (expression === '') causes.push(requiredField(`${at}.expression`));
    else {
      const error = checkExpression(expression);
      if (error !== undefined) causes.push(invalidField(`${at}.expression`, expression, error));
    }
    const name = asString(c.name);
    if (name === '') causes.push(requiredField(`${at}.name`));
    else for (const msg of isLabelKey(name)) causes.push(invalidField(`${at}.name`, name, msg));
    if (name !== '') {
      if (names.has(name)) causes.push(duplicateField(`${at}.name`, name));
      else names.add(name);
    }
  });
  return causes;
}

function validateWebhook(hook: Obj, mutating: boolean, opts: Options, field: string): StatusCause[] {
  const causes = fullyQualifiedName(`${field}.name`, asString(hook.name));
  objects(hook.rules).forEach((rule, i) => causes.push(...validateRule(rule, `${field}.rules[${i}]`)));
  if (typeof hook.failurePolicy === 'string' && !FAILURE_POLICIES.includes(hook.failurePolicy)) {
    causes.push(notSupportedField(`${field}.failurePolicy`, hook.failurePolicy, FAILURE_POLICIES));
  }
  if (typeof hook.matchPolicy === 'string' && !MATCH_POLICIES.includes(hook.matchPolicy)) {
    causes.push(notSupportedField(`${field}.matchPolicy`, hook.matchPolicy, MATCH_POLICIES));
  }
  const allowedSideEffects = opts.requireNoSideEffects ? NO_SIDE_EFFECTS : ALL_SIDE_EFFECTS;
  if (typeof hook.sideEffects !== 'string') causes.push(requiredField(`${field}.sideEffects`, `must specify one of ${allowedSideEffects.join(', ')}`));
  else if (!allowedSideEffects.includes(hook.sideEffects)) causes.push(notSupportedField(`${field}.sideEffects`, hook.sideEffects, allowedSideEffects));
  if (typeof hook.timeoutSeconds === 'number' && (hook.timeoutSeconds > 30 || hook.timeoutSeconds < 1)) {
    causes.push(invalidField(`${field}.timeoutSeconds`, hook.timeoutSeconds, 'the timeout value must be between 1 and 30 seconds'));
  }
  causes.push(...validateLabelSelector(hook.namespaceSelector, `${field}.namespaceSelector`));
  causes.push(...validateLabelSelector(hook.objectSelector, `${field}.objectSelector`));
  if (mutating && typeof hook.reinvocationPolicy === 'string' && !REINVOCATION_POLICIES.includes(hook.reinvocationPolicy)) {
    causes.push(notSupportedField(`${field}.reinvocationPolicy`, hook.reinvocationPolicy, REINVOCATION_POLICIES));
  }
  const cc = objectOrUndefined(hook.clientConfig) ?? {};
  const hasUrl = typeof cc.url === 'string';
  const service = objectOrUndefined(cc.service);
  if (hasUrl === (service !== undefined)) causes.push(requiredField(`${field}.clientConfig`, 'exactly one of url or service is required'));
  else if (hasUrl) causes.push(...validateUrl(`${field}.clientConfig.url`, asString(cc.url)));
  else if (service !== undefined) causes.push(...validateService(`${field}.clientConfig.service`, service));
  if (!opts.ignoreMatchConditions) causes.push(...validateMatchConditions(objects(hook.matchConditions), `${field}.matchConditions`, opts.checkExpression));
  return causes;
}

function validateReviewVersions(versions: string[], required: boolean, field: string): StatusCause[] {
  if (versions.length === 0) return [requiredField(field, `must specify one of ${REVIEW_VERSIONS.join(', ')}`)];
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  let accepted = false;
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      causes.push(invalidField(`${field}[${i}]`, v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const msg of isDNS1035Label(v)) causes.push(invalidField(`${field}[${i}]`, v, msg));
    if (REVIEW_VERSIONS.includes(v)) accepted = true;
  });
  if (required && !accepted) causes.push(invalidField(field, goJson(versions), `must include at least one of ${REVIEW_VERSIONS.join(', ')}`));
  return causes;
}

function conditionsOf(hooks: Obj[]): string {
  return JSON.stringify(hooks.map((h) => h.matchConditions ?? null));
}

/** Why a matchConditions expression is refused (kube's compile error), or undefined when it compiles to a bool. */
export type ExpressionCheck = (expression: string) => string | undefined;

/**
 * kube's Validate(Mutating|Validating)WebhookConfiguration[Update]: the webhook causes (metadata is
 * validated elsewhere). `checkExpression` compiles each matchConditions expression (CEL).
 */
export function validateWebhookConfiguration(config: Obj, old: Obj | undefined, mutating: boolean, checkExpression: ExpressionCheck): StatusCause[] {
  const hooks = objects(config.webhooks);
  const oldHooks = old === undefined ? undefined : objects(old.webhooks);
  const opts: Options =
    oldHooks === undefined
      ? { ignoreMatchConditions: false, requireNoSideEffects: true, requireRecognizedReviewVersion: true, requireUniqueNames: true, checkExpression }
      : {
          ignoreMatchConditions: hooks.length === oldHooks.length && conditionsOf(hooks) === conditionsOf(oldHooks),
          requireNoSideEffects: oldHooks.every((h) => NO_SIDE_EFFECTS.includes(asString(h.sideEffects))),
          requireRecognizedReviewVersion: oldHooks.every((h) => strings(h.admissionReviewVersions).some((v) => REVIEW_VERSIONS.includes(v))),
          requireUniqueNames: new Set(oldHooks.map((h) => asString(h.name))).size === oldHooks.length,
          checkExpression,
        };
  const causes: StatusCause[] = [];
  const names = new Set<string>();
  hooks.forEach((hook, i) => {
    const field = `webhooks[${i}]`;
    causes.push(...validateWebhook(hook, mutating, opts, field));
    causes.push(...validateReviewVersions(strings(hook.admissionReviewVersions), opts.requireRecognizedReviewVersion, `${field}.admissionReviewVersions`));
    const name = asString(hook.name);
    if (opts.requireUniqueNames && name !== '') {
      if (names.has(name)) causes.push(duplicateField(`${field}.name`, name));
      else names.add(name);
    }
  });
  return causes;
}
