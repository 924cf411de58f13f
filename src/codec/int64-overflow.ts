/**
 * Which numbers of a request body were int64 as written. kube decodes an integer literal into int64
 * when it fits and into float64 otherwise, and a custom resource's `integer` field accepts only the
 * former. JavaScript reads both 9223372036854775807 (int64's maximum) and 9223372036854775808 (one
 * beyond) as 2^63, so the body decoder notes the numbers that read as ±2^63 without being int64
 * (integers beyond its range, floats), and schema validation asks here. Precision beyond 2^53 is
 * still lost: only the decision int64 or not is kept.
 */

const TWO_63 = 2 ** 63;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Per container, the keys whose ±2^63 value was not an int64 as written. */
const notInt64 = new WeakMap<object, Set<string | number>>();

/** Notes, from a decoder's literal table (container → key → literal text), the ±2^63 values that overflowed int64. */
export function noteInt64Overflows(literals: Map<object, Map<string | number, string>> | undefined): void {
  if (literals === undefined) return;
  for (const [container, keys] of literals) {
    for (const [key, text] of keys) {
      const v = (container as Record<string | number, unknown>)[key];
      if (typeof v !== 'number' || Math.abs(v) !== TWO_63) continue;
      if (/^-?\d+$/.test(text)) {
        const n = BigInt(text);
        if (n >= INT64_MIN && n <= INT64_MAX) continue;
      }
      let set = notInt64.get(container);
      if (set === undefined) notInt64.set(container, (set = new Set()));
      set.add(key);
    }
  }
}

/**
 * Whether `value` (found at `container[key]`, when known) is an int64 as kube decoded it: a whole
 * number within ±2^63, where ±2^63 itself counts unless the decoder noted it as beyond int64.
 */
export function isInt64(value: number, container?: unknown, key?: string | number): boolean {
  if (!Number.isInteger(value)) return false;
  const magnitude = Math.abs(value);
  if (magnitude < TWO_63) return true;
  if (magnitude > TWO_63) return false;
  return !(typeof container === 'object' && container !== null && key !== undefined && notInt64.get(container)?.has(key) === true);
}
