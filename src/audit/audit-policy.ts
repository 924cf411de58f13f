import { readFileSync } from 'node:fs';
import { load as loadYaml } from 'js-yaml';
import { invalidField, notSupportedField, requiredField } from '../validation/field-errors.js';
import { isDNS1123Subdomain } from '../validation/string-formats.js';
import type { StatusCause } from '../api/errors.js';
import type { RequestAttributes } from '../auth/request-attributes.js';
import type { Obj } from '../api/object-util.js';
import { isObject } from '../api/values.js';

/** How much of a request an audit event records, from nothing to both bodies. */
export type AuditLevel = 'None' | 'Metadata' | 'Request' | 'RequestResponse';

/** The stages of a request at which an event is written. */
export type AuditStage = 'RequestReceived' | 'ResponseStarted' | 'ResponseComplete' | 'Panic';

const LEVELS: readonly AuditLevel[] = ['None', 'Metadata', 'Request', 'RequestResponse'];
const STAGES: readonly AuditStage[] = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'];

/** Orders levels: `atLeast(level, 'Request')` is true for Request and RequestResponse. */
export function atLeast(level: AuditLevel, than: AuditLevel): boolean {
  return LEVELS.indexOf(level) >= LEVELS.indexOf(than);
}

interface GroupResources {
  group: string;
  resources: string[];
  resourceNames: string[];
}

interface PolicyRule {
  level: AuditLevel;
  users: string[];
  userGroups: string[];
  verbs: string[];
  resources: GroupResources[];
  namespaces: string[];
  nonResourceURLs: string[];
  omitStages: AuditStage[];
  omitManagedFields: boolean | undefined;
}

/** What the policy decided for one request. */
export interface RequestAuditConfig {
  level: AuditLevel;
  /** Stages written for no request of this rule (the policy's and the rule's, united). */
  omitStages: ReadonlySet<AuditStage>;
  /** Drop managedFields from the recorded request and response objects. */
  omitManagedFields: boolean;
}

/** The request as the policy sees it: kube's authorizer attributes (its user: when authenticated). */
export type AuditAttributes = Omit<RequestAttributes, 'fieldSelector'> & { user: { name: string; groups: readonly string[] } | undefined };

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : String(x))) : [];
}

function validateOmitStages(stages: string[], path: string): StatusCause[] {
  return stages.flatMap((s, i) =>
    (STAGES as readonly string[]).includes(s) ? [] : [invalidField(`${path}[${i}]`, s, `allowed stages are ${STAGES.join(',')}`)],
  );
}

function validateRule(rule: Obj, path: string): StatusCause[] {
  const errs: StatusCause[] = [];
  const level = typeof rule.level === 'string' ? rule.level : '';
  if (level === '') errs.push(requiredField(`${path}.level`));
  else if (!(LEVELS as readonly string[]).includes(level)) errs.push(notSupportedField(`${path}.level`, level, LEVELS));
  const urls = strings(rule.nonResourceURLs);
  urls.forEach((url, i) => {
    if (url === '*') return;
    if (!url.startsWith('/')) errs.push(invalidField(`${path}.nonResourceURLs[${i}]`, url, "non-resource URL rules must begin with a '/' character"));
    if (url !== '' && url.slice(0, -1).includes('*'))
      errs.push(invalidField(`${path}.nonResourceURLs[${i}]`, url, "non-resource URL wildcards '*' must be the final character of the rule"));
  });
  const resources = Array.isArray(rule.resources) ? rule.resources.filter(isObject) : [];
  for (const gr of resources) {
    const group = typeof gr.group === 'string' ? gr.group : '';
    if (group !== '' && group !== '*') {
      const msgs = isDNS1123Subdomain(group);
      if (msgs.length > 0) errs.push(invalidField(`${path}.resources.group`, group, msgs.join(',')));
    }
    const names = strings(gr.resourceNames);
    if (names.length > 0 && strings(gr.resources).length === 0)
      errs.push(invalidField(`${path}.resources.resourceNames`, { goSyntax: JSON.stringify(names) }, 'using resourceNames requires at least one resource'));
  }
  errs.push(...validateOmitStages(strings(rule.omitStages), `${path}.omitStages`));
  if (urls.length > 0 && (resources.length > 0 || strings(rule.namespaces).length > 0))
    errs.push(
      invalidField(`${path}.nonResourceURLs`, { goSyntax: JSON.stringify(urls) }, 'rules cannot apply to both regular resources and non-resource URLs'),
    );
  return errs;
}

/** kube's aggregate of field errors: one as is, several in brackets. */
function aggregate(errs: StatusCause[]): string {
  const texts = errs.map((e) => `${e.field}: ${e.message}`);
  return texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`;
}

/**
 * An audit.k8s.io/v1 Policy: its rules in order, the first that matches a request deciding its level
 * (None when none does), with the policy's omitStages added to every rule's, as kube's evaluator does.
 */
export class AuditPolicy {
  private constructor(
    private readonly rules: PolicyRule[],
    private readonly omitStages: ReadonlySet<AuditStage>,
    private readonly omitManagedFields: boolean,
  ) {}

  /**
   * Reads and validates a policy file (YAML or JSON). Throws kube-apiserver's start-up error, worded as
   * kube words it (`loading audit policy file: ...: from file PATH`), for an unreadable or invalid one.
   */
  static fromFile(path: string): AuditPolicy {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : err instanceof Error ? err.message : String(err);
      throw new Error(`loading audit policy file: failed to read file path "${path}": open ${path}: ${reason}`);
    }
    try {
      return AuditPolicy.parse(text);
    } catch (err) {
      throw new Error(`loading audit policy file: ${err instanceof Error ? err.message : String(err)}: from file ${path}`);
    }
  }

  /** Parses and validates a policy's text; throws kube's loader message for an invalid one. */
  static parse(text: string): AuditPolicy {
    let doc: unknown;
    try {
      doc = loadYaml(text);
    } catch (err) {
      throw new Error(`failed decoding: yaml: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
    }
    if (!isObject(doc))
      throw new Error(
        `failed decoding: couldn't get version/kind; json parse error: json: cannot unmarshal ${Array.isArray(doc) ? 'array' : typeof doc} into Go value of type struct`,
      );
    const apiVersion = typeof doc.apiVersion === 'string' ? doc.apiVersion : '';
    // As kube's decoder: the kind may be left out (the target type names it), the version may not.
    const kind = typeof doc.kind === 'string' && doc.kind !== '' ? doc.kind : 'Policy';
    if (apiVersion === '') throw new Error(`unknown group version field audit.k8s.io/__internal, Kind=${kind} in policy`);
    if (kind !== 'Policy' || apiVersion !== 'audit.k8s.io/v1') {
      throw new Error(`failed decoding: no kind "${kind}" is registered for version "${apiVersion}" in scheme "pkg/runtime/scheme.go:111"`);
    }
    const rawRules = Array.isArray(doc.rules) ? doc.rules.map((r) => (isObject(r) ? r : {})) : [];
    const errs = [...validateOmitStages(strings(doc.omitStages), 'omitStages'), ...rawRules.flatMap((r, i) => validateRule(r, `rules[${i}]`))];
    if (errs.length > 0) throw new Error(aggregate(errs));
    if (rawRules.length === 0) throw new Error('loaded illegal policy with 0 rules');
    const rules = rawRules.map((r): PolicyRule => ({
      level: r.level as AuditLevel,
      users: strings(r.users),
      userGroups: strings(r.userGroups),
      verbs: strings(r.verbs),
      resources: (Array.isArray(r.resources) ? r.resources.filter(isObject) : []).map((gr) => ({
        group: typeof gr.group === 'string' ? gr.group : '',
        resources: strings(gr.resources),
        resourceNames: strings(gr.resourceNames),
      })),
      namespaces: strings(r.namespaces),
      nonResourceURLs: strings(r.nonResourceURLs),
      omitStages: strings(r.omitStages) as AuditStage[],
      omitManagedFields: typeof r.omitManagedFields === 'boolean' ? r.omitManagedFields : undefined,
    }));
    return new AuditPolicy(rules, new Set(strings(doc.omitStages) as AuditStage[]), doc.omitManagedFields === true);
  }

  /** The level, omitted stages and managedFields choice of the first rule matching `attrs`. */
  evaluate(attrs: AuditAttributes): RequestAuditConfig {
    for (const rule of this.rules) {
      if (ruleMatches(rule, attrs)) {
        return {
          level: rule.level,
          omitStages: new Set([...this.omitStages, ...rule.omitStages]),
          omitManagedFields: rule.omitManagedFields ?? this.omitManagedFields,
        };
      }
    }
    return { level: 'None', omitStages: this.omitStages, omitManagedFields: this.omitManagedFields };
  }
}

function ruleMatches(rule: PolicyRule, attrs: AuditAttributes): boolean {
  if (rule.users.length > 0 && (attrs.user === undefined || !rule.users.includes(attrs.user.name))) return false;
  if (rule.userGroups.length > 0 && (attrs.user === undefined || !attrs.user.groups.some((g) => rule.userGroups.includes(g)))) return false;
  if (rule.verbs.length > 0 && !rule.verbs.includes(attrs.verb)) return false;
  if (rule.namespaces.length > 0 || rule.resources.length > 0) return resourceMatches(rule, attrs);
  if (rule.nonResourceURLs.length > 0) return !attrs.resourceRequest && rule.nonResourceURLs.some((spec) => pathMatches(attrs.path, spec));
  return true;
}

/** A non-resource URL rule: `*`, the exact path, or a prefix ending in `*`. */
function pathMatches(path: string, spec: string): boolean {
  if (spec === '*' || spec === path) return true;
  return spec.endsWith('*') && path.startsWith(spec.replace(/\*+$/, ''));
}

function resourceMatches(rule: PolicyRule, attrs: AuditAttributes): boolean {
  if (!attrs.resourceRequest) return false;
  // Cluster-scoped requests have the empty namespace.
  if (rule.namespaces.length > 0 && !rule.namespaces.includes(attrs.namespace)) return false;
  if (rule.resources.length === 0) return true;
  const { resource, subresource, name } = attrs;
  const combined = subresource === '' ? resource : `${resource}/${subresource}`;
  for (const gr of rule.resources) {
    if (gr.group !== attrs.apiGroup && gr.group !== '*') continue;
    if (gr.resources.length === 0) return true;
    if (gr.resourceNames.length > 0 && !gr.resourceNames.includes(name)) continue;
    for (const res of gr.resources) {
      if (res === combined || res === '*') return true;
      if (subresource !== '' && res.startsWith('*/') && subresource === res.slice(2)) return true;
      if (res.endsWith('/*') && resource === res.replace(/[/*]+$/, '')) return true;
    }
  }
  return false;
}
