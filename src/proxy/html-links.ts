/**
 * The link rewriting kube's proxy transport applies to `text/html` answers (apimachinery
 * proxy.Transport.rewriteResponse): the page is read as Go's HTML tokenizer reads it, every start tag
 * is written again as Go writes a token (lower-case names, each attribute as `key="value"` with Go's
 * escaping), and the URL-valued attributes of the tags kube lists go through `rewrite`. Everything
 * else (text, end tags, comments, doctypes, the content of script, style and other raw-text
 * elements) is copied byte for byte. An unfinished tag at the end is dropped, as Go's tokenizer
 * drops it.
 */

/** The URL-valued attributes kube rewrites, per tag (apimachinery's atomsToAttrs). */
const URL_ATTRIBUTES: Readonly<Record<string, readonly string[]>> = {
  a: ['href'],
  applet: ['codebase'],
  area: ['href'],
  audio: ['src'],
  base: ['href'],
  blockquote: ['cite'],
  body: ['background'],
  button: ['formaction'],
  command: ['icon'],
  del: ['cite'],
  embed: ['src'],
  form: ['action'],
  frame: ['longdesc', 'src'],
  head: ['profile'],
  html: ['manifest'],
  iframe: ['longdesc', 'src'],
  img: ['longdesc', 'src', 'usemap'],
  input: ['src', 'usemap', 'formaction'],
  ins: ['cite'],
  link: ['href'],
  object: ['classid', 'codebase', 'data', 'usemap'],
  q: ['cite'],
  script: ['src'],
  source: ['src'],
  video: ['poster', 'src'],
};

/** Elements whose content Go's tokenizer reads as raw text, up to their own end tag. */
const RAW_TEXT = new Set(['iframe', 'noembed', 'noframes', 'noscript', 'plaintext', 'script', 'style', 'textarea', 'title', 'xmp']);

/** The Latin-1 named character references (U+00A0 to U+00FF, in order): HTML's legacy set, decoded even without `;`. */
const LATIN1 =
  'nbsp iexcl cent pound curren yen brvbar sect uml copy ordf laquo not shy reg macr deg plusmn sup2 sup3 acute micro para middot cedil sup1 ordm raquo frac14 frac12 frac34 iquest Agrave Aacute Acirc Atilde Auml Aring AElig Ccedil Egrave Eacute Ecirc Euml Igrave Iacute Icirc Iuml ETH Ntilde Ograve Oacute Ocirc Otilde Ouml times Oslash Ugrave Uacute Ucirc Uuml Yacute THORN szlig agrave aacute acirc atilde auml aring aelig ccedil egrave eacute ecirc euml igrave iacute icirc iuml eth ntilde ograve oacute ocirc otilde ouml divide oslash ugrave uacute ucirc uuml yacute thorn yuml'.split(
    ' ',
  );

/** Named character references decoded in attribute values (the legacy ones also without `;`); others stay text. */
const ENTITIES: ReadonlyMap<string, { text: string; legacy: boolean }> = new Map([
  ...LATIN1.map((name, i): [string, { text: string; legacy: boolean }] => [name, { text: String.fromCharCode(0xa0 + i), legacy: true }]),
  ['amp', { text: '&', legacy: true }],
  ['lt', { text: '<', legacy: true }],
  ['gt', { text: '>', legacy: true }],
  ['quot', { text: '"', legacy: true }],
  ['apos', { text: "'", legacy: false }],
]);

const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\f' || c === '\r';
const isLetter = (c: string): boolean => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');

/** An attribute value with its character references decoded (Go's unescape of attribute values). */
function unescapeValue(raw: string): string {
  return raw.replace(/&(#[xX][0-9a-fA-F]+|#[0-9]+|[A-Za-z][A-Za-z0-9]*)(;?)/g, (whole: string, ref: string, semicolon: string, at: number) => {
    if (ref.startsWith('#')) {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : '\ufffd';
    }
    const known = ENTITIES.get(ref);
    // Without `;` only a legacy reference decodes, and in an attribute not before `=` (HTML's rule).
    const decodes = known !== undefined && (semicolon === ';' || (known.legacy && raw[at + whole.length] !== '='));
    return decodes ? known.text : whole;
  });
}

/** Go's HTML escaping of a token's attribute value. */
function escapeValue(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/'/g, '&#39;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&#34;').replace(/\r/g, '&#13;');
}

interface StartTag {
  name: string;
  attributes: [string, string][];
  selfClosing: boolean;
  /** Index just past the tag's `>`. */
  end: number;
}

/** Reads the start tag at `html[at] === '<'` (followed by a letter); undefined when the input ends inside it. */
function readStartTag(html: string, at: number): StartTag | undefined {
  let i = at + 1;
  const nameStart = i;
  while (i < html.length && !isSpace(html[i]) && html[i] !== '/' && html[i] !== '>') i++;
  const name = html.slice(nameStart, i).toLowerCase();
  const attributes: [string, string][] = [];
  for (;;) {
    while (i < html.length && (isSpace(html[i]) || (html[i] === '/' && html[i + 1] !== '>'))) i++;
    if (i >= html.length) return undefined;
    if (html[i] === '>') return { name, attributes, selfClosing: false, end: i + 1 };
    if (html[i] === '/') return i + 1 < html.length ? { name, attributes, selfClosing: true, end: i + 2 } : undefined;
    const keyStart = i;
    i++; // a key may begin with '='
    while (i < html.length && !isSpace(html[i]) && html[i] !== '/' && html[i] !== '=' && html[i] !== '>') i++;
    const key = html.slice(keyStart, i).toLowerCase();
    let j = i;
    while (j < html.length && isSpace(html[j])) j++;
    if (html[j] !== '=') {
      if (!attributes.some(([k]) => k === key)) attributes.push([key, '']);
      continue;
    }
    j++;
    while (j < html.length && isSpace(html[j])) j++;
    const quote = html[j];
    let value: string;
    if (quote === '"' || quote === "'") {
      const close = html.indexOf(quote, j + 1);
      if (close < 0) return undefined;
      value = html.slice(j + 1, close);
      i = close + 1;
    } else {
      const valueStart = j;
      while (j < html.length && !isSpace(html[j]) && html[j] !== '>') j++;
      value = html.slice(valueStart, j);
      i = j;
    }
    // Go's tokenizer keeps the first of repeated attributes.
    if (!attributes.some(([k]) => k === key)) attributes.push([key, unescapeValue(value)]);
  }
}

/** Index of the end tag `</name` (any case, then a space, `/` or `>`) at or after `from`; -1 if none. */
function rawTextEnd(html: string, lower: string, name: string, from: number): number {
  for (let i = lower.indexOf(`</${name}`, from); i >= 0; i = lower.indexOf(`</${name}`, i + 1)) {
    const after = html[i + 2 + name.length];
    if (after === undefined || isSpace(after) || after === '/' || after === '>') return i;
  }
  return -1;
}

/** Index just past the `>` that ends a comment, doctype or end tag starting at `at` (the input's end when none). */
function markupEnd(html: string, at: number): number {
  if (html.startsWith('<!--', at)) {
    const close = html.indexOf('-->', at + 4);
    return close < 0 ? html.length : close + 3;
  }
  const close = html.indexOf('>', at);
  return close < 0 ? html.length : close + 1;
}

/** `html` with the URL-valued attributes kube rewrites passed through `rewrite`, written as Go's tokenizer writes tags. */
export function rewriteHtmlLinks(html: string, rewrite: (url: string) => string): string {
  // Raw-text end tags are found in any case: one lower-case copy serves every search.
  const lower = html.toLowerCase();
  let out = '';
  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf('<', i);
    if (lt < 0) {
      out += html.slice(i);
      break;
    }
    out += html.slice(i, lt);
    const next = html[lt + 1] ?? '';
    if (!isLetter(next)) {
      if (next === '!' || next === '?' || (next === '/' && lt + 2 < html.length)) {
        const end = markupEnd(html, lt);
        out += html.slice(lt, end);
        i = end;
      } else {
        out += '<';
        i = lt + 1;
      }
      continue;
    }
    const tag = readStartTag(html, lt);
    if (tag === undefined) break;
    const urlAttributes = URL_ATTRIBUTES[tag.name] ?? [];
    out += `<${tag.name}`;
    for (const [key, value] of tag.attributes) out += ` ${key}="${escapeValue(urlAttributes.includes(key) ? rewrite(value) : value)}"`;
    out += tag.selfClosing ? '/>' : '>';
    i = tag.end;
    if (!tag.selfClosing && RAW_TEXT.has(tag.name)) {
      const end = tag.name === 'plaintext' ? -1 : rawTextEnd(html, lower, tag.name, i);
      const stop = end < 0 ? html.length : end;
      out += html.slice(i, stop);
      i = stop;
    }
  }
  return out;
}
