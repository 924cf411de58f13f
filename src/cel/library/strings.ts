/**
 * Strings: cel-go's strings extension (version 2) is @bufbuild/cel's (charAt, indexOf,
 * lastIndexOf, lowerAscii, upperAscii, replace, split, substring, trim, join, format,
 * strings.quote). `split(sep, n)` is replaced here: Go's strings.SplitN keeps the rest of the
 * string in the last part (`'a b c'.split(' ', 2)` is `['a', 'b c']`).
 */
import { CelScalar, celMethod, listType, type CelFunc } from '@bufbuild/cel';

/** Go's strings.SplitN. */
export function splitN(s: string, sep: string, n: number): string[] {
  if (n === 0) return [];
  if (n < 0) return sep === '' ? Array.from(s) : s.split(sep);
  if (sep === '') {
    const chars = Array.from(s);
    return chars.length <= n ? chars : [...chars.slice(0, n - 1), chars.slice(n - 1).join('')];
  }
  const out: string[] = [];
  let rest = s;
  while (out.length < n - 1) {
    const i = rest.indexOf(sep);
    if (i < 0) break;
    out.push(rest.slice(0, i));
    rest = rest.slice(i + sep.length);
  }
  out.push(rest);
  return out;
}

/** Overrides of @bufbuild/cel's strings extension, registered after it (same overload ids). */
export const stringOverrides: CelFunc[] = [
  celMethod('split', CelScalar.STRING, [CelScalar.STRING, CelScalar.INT], listType(CelScalar.STRING), function (this: string, sep: string, n: bigint) {
    return splitN(this, sep, Number(n));
  }),
  celMethod('indexOf', CelScalar.STRING, [CelScalar.STRING, CelScalar.INT], CelScalar.INT, function (this: string, sub: string, offset: bigint) {
    return indexOfOffset(this, sub, offset);
  }),
];

/** cel-go's `s.indexOf(sub, offset)`, in code points: an offset past the end finds nothing (-1), a negative one is an error. */
export function indexOfOffset(s: string, sub: string, offset: bigint): bigint {
  if (sub === '') return offset;
  if (offset < 0n) throw new Error(`index out of range: ${offset}`);
  const runes = Array.from(s);
  const subRunes = Array.from(sub);
  const off = Number(offset);
  for (let i = off; i < runes.length - (subRunes.length - 1); i++) if (subRunes.every((r, j) => runes[i + j] === r)) return BigInt(i);
  return -1n;
}
