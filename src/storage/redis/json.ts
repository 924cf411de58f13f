import { randomBytes } from 'node:crypto';

/**
 * An object's JSON split around the value of `metadata.resourceVersion`, so that a Lua script can
 * splice in the version it allocates (`before + rv + after`) without decoding JSON: Redis' cjson
 * would turn `[]` into `{}` and round numbers.
 */
export interface SplitJson {
  /** JSON up to and including the opening quote of the resourceVersion string. */
  readonly before: string;
  /** JSON from the closing quote of the resourceVersion string on. */
  readonly after: string;
}

function nonce(): string {
  return `capstan-${randomBytes(12).toString('hex')}`;
}

/**
 * The placeholder tried first. Drawing a random one per write cost several times the
 * serialisation itself (randomBytes and hex for every create, update and delete); a fixed
 * one is correct whenever it occurs exactly once in the output, which is checked, and an
 * object whose data happens to contain it falls back to random ones.
 */
export const FIXED_MARKER = 'capstan-rv-placeholder-5f0c3a91d7e2b846';

/**
 * Serialises `object` exactly as MemoryStorage does (`JSON.stringify` of the object with
 * `metadata.resourceVersion` set, keeping key order) and splits it around that value.
 *
 * Guarantee: `before + rv + after` is byte-identical to MemoryStorage's JSON for the same object and
 * version. In addition, `bigint` values (which MemoryStorage rejects) are written as plain JSON
 * integers with all their digits, so integers beyond 2^53 survive storage byte-exact; ordinary
 * numbers are written as `JSON.stringify` writes them.
 */
export function splitAroundResourceVersion(object: Record<string, unknown>): SplitJson {
  const metadata = (typeof object.metadata === 'object' && object.metadata !== null ? object.metadata : {}) as Record<string, unknown>;
  for (let attempt = 0; ; attempt++) {
    const marker = attempt === 0 ? FIXED_MARKER : nonce();
    const json = stringify({ ...object, metadata: { ...metadata, resourceVersion: marker } });
    const quoted = `"${marker}"`;
    const at = json.indexOf(quoted);
    // A second occurrence means user data contains the marker: draw a random one and try again.
    if (at < 0 || json.indexOf(quoted, at + 1) >= 0) continue;
    return { before: json.slice(0, at + 1), after: json.slice(at + quoted.length - 1) };
  }
}

/** `JSON.stringify`, except that bigints become JSON integers instead of throwing. */
function stringify(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof TypeError) || !/BigInt/i.test(err.message)) throw err;
  }
  const marker = nonce();
  const json = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `${marker}:${v.toString()}` : v));
  return json.replace(new RegExp(`"${marker}:(-?[0-9]+)"`, 'g'), '$1');
}
