/**
 * Which built-in API versions are served, as kube-apiserver 1.36 decides it: every GA version by
 * default, no alpha or beta version (since Kubernetes 1.24 new beta APIs are off by default, and 1.36
 * has no older beta API left on), and `--runtime-config` to change that, in kube's syntax (checked
 * against kube-apiserver 1.36: with `api/all=true` both serve the same group versions and resources):
 *
 * - `api/all=true|false`, `api/ga=...`, `api/beta=...`, `api/alpha=...`: every version of that level;
 * - `GROUP/VERSION=true|false` (`v1` or `api/v1` for the core group): one group version;
 * - `GROUP/VERSION/RESOURCE=true|false`: one resource of a group version.
 *
 * A missing value means `true`. The broad keys apply first, then group versions, then resources,
 * whatever their order on the command line (later duplicates win).
 */

/** Stability level of a version name: `v1` is GA, `v1beta2` beta, `v1alpha3` alpha. */
export type VersionLevel = 'ga' | 'beta' | 'alpha';

export function levelOf(version: string): VersionLevel {
  if (/^v\d+alpha\d*$/.test(version)) return 'alpha';
  if (/^v\d+beta\d*$/.test(version)) return 'beta';
  return 'ga';
}

/** The parsed `--runtime-config`: which versions and resources are served. */
export interface RuntimeConfig {
  /** The flag's text, for caches keyed by configuration. */
  readonly text: string;
  /** Overrides of whole levels (`api/all` sets all three). */
  readonly levels: ReadonlyMap<VersionLevel, boolean>;
  /** `group/version` (core: `/v1`) to served or not. */
  readonly groupVersions: ReadonlyMap<string, boolean>;
  /** `group/version/resource` (core: `/v1/pods`) to served or not. */
  readonly resources: ReadonlyMap<string, boolean>;
}

/** kube-apiserver's defaults: GA served, alpha and beta not. */
export const DEFAULT_RUNTIME_CONFIG: RuntimeConfig = { text: '', levels: new Map(), groupVersions: new Map(), resources: new Map() };

const LEVEL_KEYS: Record<string, VersionLevel[]> = { 'api/all': ['ga', 'beta', 'alpha'], 'api/ga': ['ga'], 'api/beta': ['beta'], 'api/alpha': ['alpha'] };

/** Go's strconv.ParseBool, which kube-apiserver reads the values with. */
function parseGoBool(raw: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(raw)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(raw)) return false;
  return undefined;
}

/**
 * Parses a `--runtime-config` value. Throws kube-apiserver's one-line error for the first bad entry:
 * a value that is not a boolean, a key with more than three parts, a group that does not exist or a
 * version the group does not have (`exists(group)` and `known(group, version)` answer for every
 * built-in group version, served or not). A resource name is not checked, as kube does not.
 */
export function parseRuntimeConfig(text: string, known: (group: string, version: string) => boolean, exists: (group: string) => boolean): RuntimeConfig {
  const levels = new Map<VersionLevel, boolean>();
  const groupVersions = new Map<string, boolean>();
  const resources = new Map<string, boolean>();
  for (const entry of text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '')) {
    const eq = entry.indexOf('=');
    const key = (eq < 0 ? entry : entry.slice(0, eq)).trim();
    const raw = eq < 0 ? 'true' : entry.slice(eq + 1).trim();
    const on = parseGoBool(raw);
    const level = LEVEL_KEYS[key];
    if (level !== undefined) {
      if (on === undefined) throw new Error(`invalid value ${key}=${raw}`);
      for (const l of level) levels.set(l, on);
      continue;
    }
    if (on === undefined) throw new Error(`invalid value of ${key}: ${raw}, err: strconv.ParseBool: parsing "${raw}": invalid syntax`);
    const parts = key.split('/');
    if (parts.length > 3) throw new Error(`runtime-config invalid key ${key}`);
    // `v1` and `api/v1` name the core group; `api/v1/pods` one of its resources.
    const [group, version, resource] =
      parts.length === 1 ? ['', parts[0], undefined] : parts[0] === 'api' ? ['', parts[1], parts[2]] : [parts[0], parts[1], parts[2]];
    const groupVersion = group === '' ? version : `${group}/${version}`;
    if (!exists(group)) throw new Error(`unknown api groups ${groupVersion}`);
    if (version === '' || !known(group, version)) throw new Error(`group version ${groupVersion} that has not been registered`);
    if (resource === undefined) groupVersions.set(`${group}/${version}`, on);
    else resources.set(`${group}/${version}/${resource}`, on);
  }
  return { text, levels, groupVersions, resources };
}

/**
 * Group versions kube-apiserver 1.36 serves only with a feature gate that is off by default
 * (ClusterTrustBundle, PodCertificateRequest, the scheduling Workload API, StorageVersionMigrator).
 * Capstan has none of these gates, so, like kube-apiserver without them, it accepts them in
 * `--runtime-config` (even `api/all=true`) and does not serve them.
 */
const GATED_GROUP_VERSIONS = new Set([
  'certificates.k8s.io/v1beta1',
  'certificates.k8s.io/v1alpha1',
  'scheduling.k8s.io/v1alpha2',
  'storagemigration.k8s.io/v1beta1',
]);

/** Whether GROUP/VERSION is served under `config` (some of its resources may still be turned off). */
export function servesGroupVersion(config: RuntimeConfig, group: string, version: string): boolean {
  if (GATED_GROUP_VERSIONS.has(`${group}/${version}`)) return false;
  return config.groupVersions.get(`${group}/${version}`) ?? config.levels.get(levelOf(version)) ?? levelOf(version) === 'ga';
}

/** Whether RESOURCE of GROUP/VERSION is served under `config`. */
export function servesResource(config: RuntimeConfig, group: string, version: string, resource: string): boolean {
  if (GATED_GROUP_VERSIONS.has(`${group}/${version}`)) return false;
  const own = config.resources.get(`${group}/${version}/${resource}`);
  if (own !== undefined) return own;
  return servesGroupVersion(config, group, version);
}
