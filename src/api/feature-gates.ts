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
