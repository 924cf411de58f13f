/**
 * kube-apiserver 1.36's Ingress validation beyond metadata (checked against test/golden/validation/):
 * a default backend or rules; rule hosts (DNS names or `*.` wildcards, never IPs); HTTP paths with a
 * supported pathType and a path of the right shape; backends naming exactly one of a service (DNS
 * label name — RelaxedServiceNameValidation is on in 1.36 — and a port name or number) or a typed
 * resource; TLS hosts and secret names; the ingressClassName; and, on create, an ingress-class
 * annotation that agrees with ingressClassName. On update, invalid TLS secret names and invalid
 * wildcard-host rules the old object already had are tolerated, as kube does.
 */
import type { StatusCause } from '../api/errors.js';
import { goJson, invalidField, notSupportedField, requiredField } from './field-errors.js';
import { parseIP } from './ip-formats.js';
import { byteLength, isDNS1123Label, isDNS1123Subdomain, isPathSegmentName, regexError } from './string-formats.js';
import { asArray, asObject, asString, type Obj, objectOrUndefined } from '../api/values.js';
import { objects } from './value-access.js';
import { portNameProblems, portNumberProblems } from './value-formats.js';

const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'];
const INVALID_PATH_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F'];
const INVALID_PATH_SUFFIXES = ['/..', '/.'];
const CLASS_ANNOTATION = 'kubernetes.io/ingress.class';
const WILDCARD_FMT = '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*';
const WILDCARD_RE = new RegExp(`^${WILDCARD_FMT}$`);

interface IngressOptions {
  allowInvalidSecretName: boolean;
  allowInvalidWildcardHostRule: boolean;
}

/** IsWildcardDNS1123Subdomain: `*.` followed by a DNS subdomain, at most 253 characters. */
function wildcardProblems(host: string): string[] {
  const errs: string[] = [];
  if (byteLength(host) > 253) errs.push('must be no more than 253 characters');
  if (!WILDCARD_RE.test(host)) {
    errs.push(
      regexError(
        "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
        WILDCARD_FMT,
        '*.example.com',
      ),
    );
  }
  return errs;
}

/** A host as TLS entries and rules take it: a wildcard or a plain DNS subdomain. */
function hostProblems(host: string): string[] {
  return host.includes('*') ? wildcardProblems(host) : isDNS1123Subdomain(host);
}

function typedReferenceCauses(ref: Obj, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (typeof ref.apiGroup === 'string') {
    const group = ref.apiGroup;
    causes.push(...isDNS1123Subdomain(group).map((m) => invalidField(`${at}.apiGroup`, group, m)));
  }
  for (const key of ['kind', 'name']) {
    const v = asString(ref[key]);
    if (v === '') causes.push(requiredField(`${at}.${key}`));
    else causes.push(...isPathSegmentName(v).map((m) => invalidField(`${at}.${key}`, v, m)));
  }
  return causes;
}

function backendCauses(backend: Obj, at: string): StatusCause[] {
  const resource = objectOrUndefined(backend.resource);
  const service = objectOrUndefined(backend.service);
  if (resource !== undefined && service !== undefined) return [invalidField(at, '', 'cannot set both resource and service backends')];
  if (resource !== undefined) return typedReferenceCauses(resource, `${at}.resource`);
  if (service === undefined) return [invalidField(at, '', 'resource or service backend is required')];
  const causes: StatusCause[] = [];
  const name = asString(service.name);
  if (name === '') causes.push(requiredField(`${at}.service.name`));
  else causes.push(...isDNS1123Label(name).map((m) => invalidField(`${at}.service.name`, name, m)));
  const port = asObject(service.port);
  const portName = asString(port.name);
  const portNumber = typeof port.number === 'number' ? port.number : 0;
  if (portName !== '' && portNumber !== 0) causes.push(invalidField(at, '', 'cannot set both port name & port number'));
  else if (portName !== '') causes.push(...portNameProblems(portName).map((m) => invalidField(`${at}.service.port.name`, portName, m)));
  else if (portNumber !== 0) causes.push(...portNumberProblems(portNumber).map((m) => invalidField(`${at}.service.port.number`, portNumber, m)));
  else causes.push(requiredField(at, 'port name or number is required'));
  return causes;
}

function pathCauses(path: Obj, at: string): StatusCause[] {
  if (path.pathType === undefined || path.pathType === null) return [requiredField(`${at}.pathType`, 'pathType must be specified')];
  const causes: StatusCause[] = [];
  const pathType = asString(path.pathType);
  const p = asString(path.path);
  if (pathType === 'Exact' || pathType === 'Prefix') {
    if (!p.startsWith('/')) causes.push(invalidField(`${at}.path`, p, 'must be an absolute path'));
    for (const seq of INVALID_PATH_SEQUENCES) if (p.includes(seq)) causes.push(invalidField(`${at}.path`, p, `must not contain '${seq}'`));
    for (const suffix of INVALID_PATH_SUFFIXES) if (p.endsWith(suffix)) causes.push(invalidField(`${at}.path`, p, `cannot end with '${suffix}'`));
  } else if (pathType === 'ImplementationSpecific') {
    if (p !== '' && !p.startsWith('/')) causes.push(invalidField(`${at}.path`, p, 'must be an absolute path'));
  } else {
    causes.push(notSupportedField(`${at}.pathType`, pathType, PATH_TYPES));
  }
  causes.push(...backendCauses(asObject(path.backend), `${at}.backend`));
  return causes;
}

/** A rule's HTTP paths (nothing to check for a rule without `http`). */
function ruleValueCauses(rule: Obj, at: string): StatusCause[] {
  const http = objectOrUndefined(rule.http);
  if (http === undefined) return [];
  const paths = objects(http.paths);
  const causes = paths.length === 0 ? [requiredField(`${at}.http.paths`)] : [];
  paths.forEach((p, i) => causes.push(...pathCauses(p, `${at}.http.paths[${i}]`)));
  return causes;
}

function rulesCauses(rules: Obj[], opts: IngressOptions): StatusCause[] {
  const causes: StatusCause[] = [];
  rules.forEach((rule, i) => {
    const at = `spec.rules[${i}]`;
    const host = asString(rule.host);
    if (host !== '') {
      if (parseIP(host) !== undefined) causes.push(invalidField(`${at}.host`, host, 'must be a DNS name, not an IP address'));
      causes.push(...hostProblems(host).map((m) => invalidField(`${at}.host`, host, m)));
    }
    if (!host.includes('*') || !opts.allowInvalidWildcardHostRule) causes.push(...ruleValueCauses(rule, at));
  });
  return causes;
}

function tlsCauses(tls: Obj[], opts: IngressOptions): StatusCause[] {
  const causes: StatusCause[] = [];
  tls.forEach((entry, i) => {
    asArray(entry.hosts).forEach((h, hi) => {
      const host = asString(h);
      causes.push(...hostProblems(host).map((m) => invalidField(`spec.tls[${i}].hosts[${hi}]`, host, m)));
    });
    const secretName = asString(entry.secretName);
    if (!opts.allowInvalidSecretName && secretName !== '') {
      causes.push(...isDNS1123Subdomain(secretName).map((m) => invalidField(`spec.tls[${i}].secretName`, secretName, m)));
    }
  });
  return causes;
}

function specCauses(spec: Obj, opts: IngressOptions): StatusCause[] {
  const causes: StatusCause[] = [];
  const rules = objects(spec.rules);
  const defaultBackend = objectOrUndefined(spec.defaultBackend);
  if (rules.length === 0 && defaultBackend === undefined) {
    causes.push(invalidField('spec', goJson(Array.isArray(spec.rules) ? spec.rules : null), 'either `defaultBackend` or `rules` must be specified'));
  }
  if (defaultBackend !== undefined) causes.push(...backendCauses(defaultBackend, 'spec.defaultBackend'));
  causes.push(...rulesCauses(rules, opts));
  causes.push(...tlsCauses(objects(spec.tls), opts));
  if (typeof spec.ingressClassName === 'string') {
    const className = spec.ingressClassName;
    causes.push(...isDNS1123Subdomain(className).map((m) => invalidField('spec.ingressClassName', className, m)));
  }
  return causes;
}

/** kube keeps accepting what an already-stored Ingress had: invalid TLS secret names, invalid wildcard rules. */
function optionsFor(old: Obj | undefined): IngressOptions {
  if (old === undefined) return { allowInvalidSecretName: false, allowInvalidWildcardHostRule: false };
  const spec = asObject(old.spec);
  return {
    allowInvalidSecretName: objects(spec.tls).some((t) => asString(t.secretName) !== '' && isDNS1123Subdomain(asString(t.secretName)).length > 0),
    allowInvalidWildcardHostRule: objects(spec.rules).some((r) => asString(r.host).includes('*') && ruleValueCauses(r, '').length > 0),
  };
}

/** The causes of an Ingress's spec (and, on create, of its ingress-class annotation). */
export function validateIngress(ingress: Obj, old?: Obj): StatusCause[] {
  const spec = asObject(ingress.spec);
  const causes = specCauses(spec, optionsFor(old));
  if (old === undefined) {
    const annotations = asObject(asObject(ingress.metadata).annotations);
    const annotation = annotations[CLASS_ANNOTATION];
    if (typeof annotation === 'string' && typeof spec.ingressClassName === 'string' && annotation !== spec.ingressClassName) {
      causes.push(invalidField(`annotations.${CLASS_ANNOTATION}`, annotation, 'must match `ingressClassName` when both are specified'));
    }
  }
  return causes;
}
