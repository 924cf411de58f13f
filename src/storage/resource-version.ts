/** resourceVersions are decimal integers without leading zeros: compare by length, then lexically. */

const DECIMAL = /^(0|[1-9][0-9]*)$/;

/** Whether `rv` is a well-formed resourceVersion. */
export function isResourceVersion(rv: string): boolean {
  return DECIMAL.test(rv);
}

/** Negative, zero or positive as a is older than, equal to or newer than b. */
export function compareResourceVersions(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}
