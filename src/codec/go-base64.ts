/**
 * Go's `base64.StdEncoding` decoding check, the one `encoding/json` applies to `[]byte` fields: newlines
 * are skipped, padding is required, and nothing may follow it.
 */

function isBase64Char(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2f;
}

function isNewline(c: number): boolean {
  return c === 0x0a || c === 0x0d;
}

/**
 * The offset Go's `illegal base64 data at input byte N` names for `s`, or -1 when Go decodes it.
 */
export function base64ErrorOffset(s: string): number {
  const n = s.length;
  let si = 0;
  for (;;) {
    let j = 0;
    while (j < 4) {
      if (si === n) return j === 0 ? -1 : si - j;
      const c = s.charCodeAt(si++);
      if (isNewline(c)) continue;
      if (isBase64Char(c)) {
        j++;
        continue;
      }
      if (c !== 0x3d) return si - 1;
      // Padding: only after two or three characters of a quantum, and it ends the input.
      if (j < 2) return si - 1;
      if (j === 2) {
        while (si < n && isNewline(s.charCodeAt(si))) si++;
        if (si === n) return n;
        if (s.charCodeAt(si) !== 0x3d) return si - 1;
        si++;
      }
      while (si < n && isNewline(s.charCodeAt(si))) si++;
      return si < n ? si : -1;
    }
  }
}
