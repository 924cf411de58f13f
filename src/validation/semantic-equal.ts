/**
 * Equality of decoded JSON values as kube's apiequality.Semantic.DeepEqual sees the Go structs they
 * decode to: key order does not matter, and an absent, null, empty list or empty map value equals
 * any other of those (Go's semantic equality treats nil and empty slices and maps alike).
 * Not modelled: an empty struct pointer differs from nil in Go but reads here as equal; quantities are
 * compared as text (they arrive canonical from the typed decoder).
 */
function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && Object.keys(v).length === 0;
}

/** Whether two decoded values are semantically equal. */
export function semanticEqual(a: unknown, b: unknown): boolean {
  if (isEmpty(a) && isEmpty(b)) return true;
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => semanticEqual(v, b[i]));
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  return [...keys].every((k) => semanticEqual(ao[k], bo[k]));
}

/**
 * The changed top-level fields of a spec, one per line (`  spec.<field>: <old> -> <new>`); Capstan's
 * stand-in for the Go struct diff kube appends to "spec is immutable" errors.
 */
export function changedSpecFields(next: Record<string, unknown>, old: Record<string, unknown>, prefix = 'spec'): string {
  const keys = [...new Set([...Object.keys(old), ...Object.keys(next)])].sort();
  return keys
    .filter((k) => !semanticEqual(next[k], old[k]))
    .map((k) => `  ${prefix}.${k}: ${JSON.stringify(old[k] ?? null)} -> ${JSON.stringify(next[k] ?? null)}`)
    .join('\n');
}
