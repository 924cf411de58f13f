/**
 * Go's `strconv.Quote` (what `%q` prints), for messages kube-apiserver words with `%q`: `unknown
 * field "x"`, `duplicate field "x"`. Printable characters, including non-ASCII ones, stay as they
 * are; `"` and `\` are escaped; control and other non-printable characters become `\n`, `\x01`,
 * `\u00a0`. Lone surrogates (impossible in decoded UTF-8) print as U+FFFD, as Go decodes them.
 */
const NAMED: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r' };
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

export function goQuote(text: string): string {
  let out = '"';
  for (const ch of text) {
    const cp = ch.codePointAt(0) as number;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (cp >= 0x20 && cp < 0x7f) out += ch;
    else if (cp < 0x80) out += NAMED[cp] ?? `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\ufffd';
    else if (PRINTABLE.test(ch)) out += ch;
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

/**
 * A `Warning` header value as kube-apiserver writes it: `299 - "<text>"` with `\` and `"` escaped.
 * Returned in the form Node writes byte for byte (each UTF-8 byte as one latin1 character), so
 * non-ASCII text goes out as UTF-8, as Go sends it.
 */
export function warningHeaderValue(text: string): string {
  const quoted = `299 - "${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  // Control characters cannot appear in a header: they are escaped as Go would quote them.
  const safe = quoted.replace(/[\x00-\x08\x0a-\x1f\x7f]/g, (c) => goQuote(c).slice(1, -1));
  return Buffer.from(safe, 'utf8').toString('latin1');
}
