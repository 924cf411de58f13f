/**
 * The `/version` document (`k8s.io/apimachinery/pkg/version.Info`). Capstan reports the Kubernetes
 * API level it implements (1.36) with `+capstan` build metadata in `gitVersion`, which semver parsers
 * (client-go's `version.ParseSemantic`, Helm) accept and which tells a human what answers.
 */

/** `version.Info`, in the field order kube-apiserver writes. */
export interface VersionInfo {
  major: string;
  minor: string;
  emulationMajor: string;
  emulationMinor: string;
  minCompatibilityMajor: string;
  minCompatibilityMinor: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  goVersion: string;
  compiler: string;
  platform: string;
}

/** Node's `process.arch` spelled as Go's GOARCH, since clients compare `platform` with that form. */
function goArch(arch: string): string {
  switch (arch) {
    case 'x64':
      return 'amd64';
    case 'ia32':
      return '386';
    case 'ppc64':
      return 'ppc64le';
    default:
      return arch;
  }
}

/**
 * The version Capstan reports. Build facts come from `CAPSTAN_GIT_COMMIT`, `CAPSTAN_GIT_TREE_STATE`
 * and `CAPSTAN_BUILD_DATE` when the build sets them; otherwise they carry kube's own "unset" values
 * (empty commit, epoch build date) rather than invented ones. `goVersion`/`compiler` name the real
 * runtime (Node.js, tsc): nothing parses them.
 */
export function defaultVersionInfo(env: NodeJS.ProcessEnv = process.env): VersionInfo {
  return {
    major: '1',
    minor: '36',
    emulationMajor: '1',
    emulationMinor: '36',
    minCompatibilityMajor: '1',
    minCompatibilityMinor: '35',
    gitVersion: 'v1.36.0+capstan',
    gitCommit: env['CAPSTAN_GIT_COMMIT'] ?? '',
    gitTreeState: env['CAPSTAN_GIT_TREE_STATE'] ?? '',
    buildDate: env['CAPSTAN_BUILD_DATE'] ?? '1970-01-01T00:00:00Z',
    goVersion: `node${process.version}`,
    compiler: 'tsc',
    platform: `${process.platform}/${goArch(process.arch)}`,
  };
}

/** The default version, computed once at load. */
export const DEFAULT_VERSION_INFO: VersionInfo = defaultVersionInfo();
