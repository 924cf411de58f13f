/**
 * The rule kube-apiserver 1.36 applies to `metadata.name` (and `metadata.generateName`) of each
 * built-in type, and whether the type's strategy uses core's ObjectMeta validation (which adds the
 * "standard finalizer name" check). Unknown groups are treated as custom resources.
 */
import { isIP } from 'node:net';
import { isDNS1035Label, isDNS1123Label, isDNS1123Subdomain, isPathSegmentName, isPathSegmentPrefix, maskTrailingDash } from './string-formats.js';

export type NameRuleKind =
  /** NameIsDNSSubdomain: most types. */
  | 'dns1123-subdomain'
  /** NameIsDNSLabel: namespaces, statefulsets. */
  | 'dns1123-label'
  /** NameIsDNS1035Label (services before RelaxedServiceNameValidation). */
  | 'dns1035-label'
  /** Only the path-segment check: RBAC types, core events. */
  | 'path-segment'
  /** Any name (certificatesigningrequests); the path-segment check still applies. */
  | 'any'
  /** DNS subdomain and at most 52 bytes, so that Job names derived from it stay valid labels. */
  | 'cronjob'
  /** `<spec.names.plural>.<spec.group>` (customresourcedefinitions). */
  | 'crd'
  /** `<spec.version>.<spec.group>` (apiservices). */
  | 'apiservice'
  /** `<signerName with '/' as ':'>:<subdomain>` or a plain subdomain (clustertrustbundles). */
  | 'cluster-trust-bundle'
  /** A canonical IP address (ipaddresses). */
  | 'ip-address';

/** How one type's object names (and metadata) are validated. */
export interface NameRule {
  kind: NameRuleKind;
  /**
   * True when the type validates metadata through core's ValidateObjectMeta, which rejects a
   * finalizer without a '/' unless it is "kubernetes", "orphan" or "foregroundDeletion".
   */
  standardFinalizers: boolean;
}

const SUBDOMAIN: NameRule = { kind: 'dns1123-subdomain', standardFinalizers: true };

/** Groups served by kube-apiserver itself; any other group is a custom resource's. */
const BUILT_IN_GROUPS = new Set([
  '',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'apiregistration.k8s.io',
  'apps',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'autoscaling',
  'batch',
  'certificates.k8s.io',
  'coordination.k8s.io',
  'discovery.k8s.io',
  'events.k8s.io',
  'flowcontrol.apiserver.k8s.io',
  'internal.apiserver.k8s.io',
  'networking.k8s.io',
  'node.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'resource.k8s.io',
  'scheduling.k8s.io',
  'storage.k8s.io',
  'storagemigration.k8s.io',
]);

/** Groups whose validation uses apimachinery's generic ObjectMeta checks (no finalizer-name rule). */
const GENERIC_META_GROUPS = new Set(['admissionregistration.k8s.io', 'apiextensions.k8s.io', 'apiregistration.k8s.io']);

/** Built-in types whose strategy validates no metadata itself, leaving only the registry's generic checks. */
const GENERIC_META_TYPES = new Set(['policy/poddisruptionbudgets']);

const SPECIAL: Record<string, NameRuleKind> = {
  namespaces: 'dns1123-label',
  // RelaxedServiceNameValidation is on in 1.36: Service names are DNS-1123 labels (they may start with a digit).
  services: 'dns1123-label',
  events: 'path-segment',
  'policy/poddisruptionbudgets': 'path-segment',
  'apps/statefulsets': 'dns1123-label',
  'batch/cronjobs': 'cronjob',
  'rbac.authorization.k8s.io/roles': 'path-segment',
  'rbac.authorization.k8s.io/clusterroles': 'path-segment',
  'rbac.authorization.k8s.io/rolebindings': 'path-segment',
  'rbac.authorization.k8s.io/clusterrolebindings': 'path-segment',
  'certificates.k8s.io/certificatesigningrequests': 'any',
  'certificates.k8s.io/clustertrustbundles': 'cluster-trust-bundle',
  'apiextensions.k8s.io/customresourcedefinitions': 'crd',
  'apiregistration.k8s.io/apiservices': 'apiservice',
  'networking.k8s.io/ipaddresses': 'ip-address',
};

/** The name rule kube-apiserver applies to objects of `resource` in `group` ('' for core). */
export function nameRuleFor(group: string, resource: string): NameRule {
  if (!BUILT_IN_GROUPS.has(group)) return { kind: 'dns1123-subdomain', standardFinalizers: false };
  const kind = SPECIAL[group ? `${group}/${resource}` : resource];
  // Core events are validated by legacyValidateEvent, which leaves metadata to the generic checks.
  const standardFinalizers = !GENERIC_META_GROUPS.has(group) && !(group === '' && resource === 'events') && !GENERIC_META_TYPES.has(`${group}/${resource}`);
  if (kind === undefined) return standardFinalizers ? SUBDOMAIN : { kind: 'dns1123-subdomain', standardFinalizers };
  return { kind, standardFinalizers };
}

function field(obj: Record<string, unknown> | undefined, path: string[]): string {
  let cur: unknown = obj;
  for (const p of path) {
    if (typeof cur !== 'object' || cur === null || Array.isArray(cur)) return '';
    cur = (cur as Record<string, unknown>)[p];
  }
  return typeof cur === 'string' ? cur : '';
}

/**
 * kube checks names with util/validation, whose length error says "characters" where the content
 * checks (labels, other fields) say "bytes"; the limit is the same byte count.
 */
function inCharacters(problems: string[]): string[] {
  return problems.map((p) => p.replace(/^must be no more than (\d+) bytes$/, 'must be no more than $1 characters'));
}

function subdomain(name: string, prefix: boolean): string[] {
  return inCharacters(isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name));
}

function canonicalIP(name: string): string[] {
  const family = isIP(name);
  if (family === 0) return ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'];
  if (family === 4) {
    if (name.split('.').some((octet) => octet.length > 1 && octet.startsWith('0'))) {
      return ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'];
    }
    return [];
  }
  const canonical = new URL(`http://[${name}]/`).hostname.slice(1, -1);
  return canonical === name ? [] : [`must be in canonical form ("${canonical}")`];
}

/**
 * The problems with `name` under `rule` (kube's ValidateNameFunc); `prefix` is true when checking
 * a generateName, which may end in '-'. `object` supplies the spec fields the CRD, APIService and
 * ClusterTrustBundle rules compare the name with.
 */
export function validateName(rule: NameRuleKind, name: string, prefix: boolean, object?: Record<string, unknown>): string[] {
  switch (rule) {
    case 'dns1123-subdomain':
      return subdomain(name, prefix);
    case 'dns1123-label':
      return inCharacters(isDNS1123Label(prefix ? maskTrailingDash(name) : name));
    case 'dns1035-label':
      return inCharacters(isDNS1035Label(prefix ? maskTrailingDash(name) : name));
    case 'path-segment':
      // kube's ValidateRBACName ignores prefix: a generateName is checked as a whole name.
      return isPathSegmentName(name);
    case 'any':
      return [];
    case 'cronjob': {
      const errs = subdomain(name, prefix);
      if (!prefix && Buffer.byteLength(name, 'utf8') > 52) errs.push('must be no more than 52 characters');
      return errs;
    }
    case 'crd': {
      const errs = subdomain(name, prefix);
      const required = `${field(object, ['spec', 'names', 'plural'])}.${field(object, ['spec', 'group'])}`;
      if (name !== required) errs.push('must be spec.names.plural+"."+spec.group');
      return errs;
    }
    case 'apiservice': {
      const minimal = isPathSegmentName(name);
      if (minimal.length > 0) return minimal;
      const required = `${field(object, ['spec', 'version'])}.${field(object, ['spec', 'group'])}`;
      return name === required ? [] : [`must be \`spec.version+"."+spec.group\`: "${required}"`];
    }
    case 'cluster-trust-bundle': {
      const signerName = field(object, ['spec', 'signerName']);
      if (signerName === '') {
        if (name.includes(':')) return ['ClusterTrustBundle without signer name must not have ":" in its name'];
        return subdomain(name, prefix);
      }
      const requiredPrefix = `${signerName.replaceAll('/', ':')}:`;
      if (!name.startsWith(requiredPrefix)) {
        return [`ClusterTrustBundle for signerName ${signerName} must be named with prefix ${requiredPrefix}`];
      }
      return subdomain(name.slice(requiredPrefix.length), prefix);
    }
    case 'ip-address':
      return prefix ? isPathSegmentPrefix(name) : canonicalIP(name);
  }
}

/**
 * The path-segment check kube-apiserver's BeforeCreate applies to every object after the type's own
 * validation passed (names must be usable as one URL path segment).
 */
export function validatePathSegment(name: string, prefix: boolean): string[] {
  return prefix ? isPathSegmentPrefix(name) : isPathSegmentName(name);
}
