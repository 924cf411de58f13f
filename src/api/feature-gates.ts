/**
 * Feature gates (`--feature-gates=A=true,B=false`) with kube-apiserver 1.36's defaults for the gates
 * Capstan implements. Unknown gates are rejected at start-up, as kube-apiserver does.
 */
export const KNOWN_GATES: Record<string, boolean> = {
  APIResponseCompression: true,
  AllowUnsafeMalformedObjectDeletion: false,
  CBORServingAndStorage: false,
  WatchList: true,
  ListFromCacheSnapshot: true,
  ConsistentListFromCache: true,
  WatchFromStorageWithoutResourceVersion: false,
};

const NO_EFFECT = 'Accepted as kube-apiserver accepts it; it changes nothing in Capstan.';

/** What each gate of KNOWN_GATES changes in Capstan (for `--help` and docs/flags.md). */
const GATE_HELP: Record<string, string> = {
  APIResponseCompression:
    'As kube-apiserver: responses of 128 KiB or more, in every media type, are gzipped (level 1) when `Accept-Encoding` lists `gzip`; no other encoding is used. Watches, container logs and proxied answers pass uncompressed.',
  AllowUnsafeMalformedObjectDeletion:
    'DELETE with ignoreStoreReadErrorWithClusterBreakingPotential=true removes an object whose stored bytes no longer decode, skipping finalizers and preconditions, for users also allowed the unsafe-delete-ignore-read-errors verb.',
  CBORServingAndStorage:
    'Serves and accepts CBOR (application/cbor, application/cbor-seq watches, application/apply-patch+cbor). Objects are still stored as JSON.',
  WatchList: 'Streaming lists: watches with sendInitialEvents=true, as client-go informers use them.',
  ListFromCacheSnapshot: NO_EFFECT,
  ConsistentListFromCache: NO_EFFECT,
  WatchFromStorageWithoutResourceVersion: NO_EFFECT,
};

/** A known gate, its default and what it changes. */
export interface FeatureGateDescription {
  name: string;
  default: boolean;
  help: string;
}

/** Every gate `--feature-gates` accepts, in KNOWN_GATES order. */
export function describeFeatureGates(): FeatureGateDescription[] {
  return Object.entries(KNOWN_GATES).map(([name, on]) => ({ name, default: on, help: GATE_HELP[name] ?? '' }));
}

export type FeatureGates = Readonly<Record<string, boolean>>;

/** Parses a `--feature-gates` value; throws with a one-line reason on unknown gates or bad values. */
export function parseFeatureGates(value: string): FeatureGates {
  const gates: Record<string, boolean> = { ...KNOWN_GATES };
  for (const part of value
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const eq = part.indexOf('=');
    if (eq < 0) throw new Error(`missing bool value for ${part}`);
    const name = part.slice(0, eq).trim();
    const raw = part
      .slice(eq + 1)
      .trim()
      .toLowerCase();
    if (!(name in KNOWN_GATES)) throw new Error(`unrecognized feature gate: ${name}`);
    if (raw !== 'true' && raw !== 'false') throw new Error(`invalid value of ${name}=${raw}, err: strconv.ParseBool: parsing "${raw}": invalid syntax`);
    gates[name] = raw === 'true';
  }
  return gates;
}
