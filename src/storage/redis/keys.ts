/**
 * Redis key layout of one storage type. Every key carries the hash tag `{type}`, so all keys of a
 * type live in one Cluster slot and every script touching them is single-slot.
 */
export interface TypeKeys {
  /** String: the type's current resourceVersion; absent means 1 (an untouched type). */
  readonly counter: string;
  /** Hash: object key -> `<rv>:<offset>:<json>`, offset being where the rv starts in json. */
  readonly objects: string;
  /** Sorted set: object keys with score 0, giving byte-ordered ranges (ZRANGEBYLEX). */
  readonly index: string;
  /** Stream: one change event per version, id `<rv>-0`, trimmed only at the head. */
  readonly stream: string;
  /** String: when (ms) the stream's oldest event leaves the history window; the write scripts keep it (lua/lib/history.lua). */
  readonly trimDue: string;
}

/**
 * Keys of `type` under `prefix`. The prefix must not contain `{`, or it would become the hash tag
 * and put every type in one slot (still correct, no longer spread).
 */
export function typeKeys(prefix: string, type: string): TypeKeys {
  if (type === '') throw new Error('storage type must not be empty');
  const base = `${prefix}{${type}}`;
  return { counter: `${base}:rv`, objects: `${base}:objects`, index: `${base}:index`, stream: `${base}:changes`, trimDue: `${base}:changes:trim-due` };
}

/** Splits a stored hash value `<rv>:<offset>:<json>`; undefined when malformed. */
export function parseStoredValue(value: string): { resourceVersion: string; json: string } | undefined {
  const first = value.indexOf(':');
  const second = first < 0 ? -1 : value.indexOf(':', first + 1);
  if (second < 0) return undefined;
  return { resourceVersion: value.slice(0, first), json: value.slice(second + 1) };
}
