/** Parsers of flag values shared by the flag specs, refusing bad values with pflag's wording. */

/** `true` or `false`; anything else is refused as kube's boolean flags refuse it. */
export function boolFlag(name: string, v: string): boolean {
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new Error(`invalid argument "${v}" for "--${name}" flag: must be true or false`);
}

/** A comma-separated list: items trimmed, empty items dropped. */
export function listFlag(v: string): string[] {
  return v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
