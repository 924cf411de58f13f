import { goFormat } from './json-value.js';
import type { Obj } from '../api/object-util.js';
import { isObject } from '../api/values.js';

/**
 * YAML output, byte for byte as kube-apiserver writes it (sigs.k8s.io/yaml over go-yaml v2's emitter):
 * block style with two-space indents, sequences under a mapping key not indented, `{}` and `[]` for
 * empty collections, keys in go-yaml's natural order, and each string in the style go-yaml picks
 * (plain when it reads back as the same string, single- or double-quoted otherwise, `|` literal blocks
 * for multi-line text), folded at spaces past column 80.
 *
 * The writer scans each string with plain loops (no regular expressions), so a multi-megabyte value
 * costs linear time and no stack; recursion follows the object's nesting, which the request decoders
 * bound.
 */

const BEST_WIDTH = 80;
const BEST_INDENT = 2;
/** go-yaml writes a mapping key longer than this (or spanning lines) as an explicit `? key`. */
const MAX_SIMPLE_KEY_BYTES = 128;

const enum Style {
  Plain,
  Single,
  Double,
  Literal,
}

function isBreak(c: number): boolean {
  return c === 0x0a || c === 0x0d || c === 0x85 || c === 0x2028 || c === 0x2029;
}

/** go-yaml's is_printable, on code points. */
function isPrintable(c: number): boolean {
  return (
    c === 0x0a ||
    (c >= 0x20 && c <= 0x7e) ||
    c === 0x85 ||
    (c >= 0xa0 && c <= 0xd7ff) ||
    (c >= 0xe000 && c <= 0xfffd && c !== 0xfeff) ||
    (c >= 0x10000 && c <= 0x10ffff)
  );
}

const BOOL_OR_NULL = new Set([
  'y',
  'Y',
  'yes',
  'Yes',
  'YES',
  'true',
  'True',
  'TRUE',
  'on',
  'On',
  'ON',
  'n',
  'N',
  'no',
  'No',
  'NO',
  'false',
  'False',
  'FALSE',
  'off',
  'Off',
  'OFF',
  '',
  '~',
  'null',
  'Null',
  'NULL',
  '.nan',
  '.NaN',
  '.NAN',
  '.inf',
  '.Inf',
  '.INF',
  '+.inf',
  '+.Inf',
  '+.INF',
  '-.inf',
  '-.Inf',
  '-.INF',
  '<<',
]);
const YAML_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const GO_INT = /^[-+]?(0[xX][0-9a-fA-F]+|0[oO]?[0-7]*|[1-9][0-9]*|0[bB][01]+)$/;
const TIMESTAMP = /^\d{4}-\d{1,2}-\d{1,2}(([Tt]|[ \t]+)\d{1,2}:\d{1,2}:\d{1,2}(\.\d*)?([ \t]*(Z|[-+]\d{1,2}(:?\d{2})?))?)?$/;
const BASE60_FLOAT = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;

/** Characters a number or timestamp can be made of: a longer text outside them is certainly a string. */
function numberLike(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ok = (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e || c === 0x5f || c === 0x65 || c === 0x45;
    if (!ok) return false;
  }
  return true;
}

/** Whether go-yaml v2 would read `s` back as something other than a string if written plain. */
function resolvesToNonString(s: string): boolean {
  if (BOOL_OR_NULL.has(s)) return true;
  // The patterns below are linear, but a long text is only checked when it could be a number at all.
  if (s.length > 256 && !numberLike(s)) return false;
  const first = s.charCodeAt(0);
  const digitOrSign = (first >= 0x30 && first <= 0x39) || first === 0x2b || first === 0x2d;
  if (first === 0x2e) return !Number.isNaN(Number(s)) && YAML_FLOAT.test(s);
  if (!digitOrSign) return false;
  if (TIMESTAMP.test(s)) return true;
  const plain = s.replace(/_/g, '');
  return GO_INT.test(plain) || YAML_FLOAT.test(plain) || /^-0[bB][01]+$/.test(plain);
}

interface ScalarAnalysis {
  multiline: boolean;
  blockPlainAllowed: boolean;
  singleQuotedAllowed: boolean;
  blockAllowed: boolean;
}

/** go-yaml's yaml_emitter_analyze_scalar, for block context. */
function analyze(s: string): ScalarAnalysis {
  if (s.length === 0) return { multiline: false, blockPlainAllowed: true, singleQuotedAllowed: true, blockAllowed: false };
  let blockIndicators = s.startsWith('---') || s.startsWith('...');
  let lineBreaks = false;
  let special = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let breakSpace = false;
  let spaceBreak = false;
  let precededByWhitespace = true;
  let previousSpace = false;
  let previousBreak = false;
  for (let i = 0; i < s.length;) {
    const c = s.codePointAt(i) as number;
    const w = c > 0xffff ? 2 : 1;
    const next = s.codePointAt(i + w);
    const last = i + w >= s.length;
    const followedByWhitespace = next === undefined || next === 0x20 || next === 0x09 || isBreak(next);
    if (i === 0) {
      switch (c) {
        case 0x23:
        case 0x2c:
        case 0x5b:
        case 0x5d:
        case 0x7b:
        case 0x7d:
        case 0x26:
        case 0x2a:
        case 0x21:
        case 0x7c:
        case 0x3e:
        case 0x27:
        case 0x22:
        case 0x25:
        case 0x40:
        case 0x60:
          blockIndicators = true;
          break;
        case 0x3f:
        case 0x3a:
          if (followedByWhitespace) blockIndicators = true;
          break;
        case 0x2d:
          if (followedByWhitespace) blockIndicators = true;
          break;
        default:
      }
    } else if ((c === 0x3a && followedByWhitespace) || (c === 0x23 && precededByWhitespace)) {
      blockIndicators = true;
    }
    if (!isPrintable(c)) special = true;
    if (c === 0x20) {
      if (i === 0) leadingSpace = true;
      if (last) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (isBreak(c)) {
      lineBreaks = true;
      if (i === 0) leadingBreak = true;
      if (last) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousSpace = false;
      previousBreak = true;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    precededByWhitespace = c === 0x20 || c === 0x09 || isBreak(c);
    i += w;
  }
  const out: ScalarAnalysis = { multiline: lineBreaks, blockPlainAllowed: true, singleQuotedAllowed: true, blockAllowed: true };
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) out.blockPlainAllowed = false;
  if (trailingSpace) out.blockAllowed = false;
  if (breakSpace) {
    out.blockPlainAllowed = false;
    out.singleQuotedAllowed = false;
  }
  if (spaceBreak || special) {
    out.blockPlainAllowed = false;
    out.singleQuotedAllowed = false;
    out.blockAllowed = false;
  }
  if (lineBreaks || blockIndicators) out.blockPlainAllowed = false;
  return out;
}

/** go-yaml's keyList.Less: letters after other characters, digit runs compared as numbers. */
function goKeyLess(a: string, b: string): boolean {
  const ar = Array.from(a);
  const br = Array.from(b);
  const isLetter = (ch: string): boolean => /\p{L}/u.test(ch);
  const isDigit = (ch: string | undefined): boolean => ch !== undefined && ch >= '0' && ch <= '9';
  for (let i = 0; i < ar.length && i < br.length; i++) {
    const x = ar[i];
    const y = br[i];
    if (x === y) continue;
    const xl = isLetter(x);
    const yl = isLetter(y);
    if (xl && yl) return (x.codePointAt(0) as number) < (y.codePointAt(0) as number);
    if (xl || yl) return yl;
    let an = 0n;
    let bn = 0n;
    if (x === '0' || y === '0') {
      for (let j = i - 1; j >= 0 && isDigit(ar[j]); j--) {
        if (ar[j] !== '0') {
          an = 1n;
          bn = 1n;
          break;
        }
      }
    }
    let ai = i;
    for (; ai < ar.length && isDigit(ar[ai]); ai++) an = an * 10n + BigInt(ar[ai].charCodeAt(0) - 48);
    let bi = i;
    for (; bi < br.length && isDigit(br[bi]); bi++) bn = bn * 10n + BigInt(br[bi].charCodeAt(0) - 48);
    if (an !== bn) return an < bn;
    if (ai !== bi) return ai < bi;
    return (x.codePointAt(0) as number) < (y.codePointAt(0) as number);
  }
  return ar.length < br.length;
}

function sortedKeys(obj: Obj): string[] {
  return Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort((a, b) => (goKeyLess(a, b) ? -1 : goKeyLess(b, a) ? 1 : 0));
}

/** The text of a number as go-yaml prints the value Go decoded from the JSON number. */
function numberText(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 2 ** 63) return BigInt(n).toString();
  if (Number.isNaN(n)) return '.nan';
  if (!Number.isFinite(n)) return n > 0 ? '.inf' : '-.inf';
  return goFormat(n);
}

/** Code points of a run of text (what go-yaml's column counts). */
function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff) n++;
  }
  return n;
}

class Emitter {
  private out = '';
  private column = 0;
  private indent = -1;
  private readonly indents: number[] = [];
  private whitespace = true;
  private indention = true;

  /** Ends the document as go-yaml does: with a line break, unless a block scalar just wrote one. */
  finish(): string {
    if (!this.indention || this.column > 0 || !this.whitespace) this.putBreak();
    return this.out;
  }

  private put(s: string): void {
    this.out += s;
    this.column += s.length === 1 ? 1 : codePoints(s);
  }

  private putBreak(): void {
    this.out += '\n';
    this.column = 0;
  }

  private writeIndent(): void {
    const indent = Math.max(this.indent, 0);
    if (!this.indention || this.column > indent || (this.column === indent && !this.whitespace)) this.putBreak();
    if (this.column < indent) this.put(' '.repeat(indent - this.column));
    this.whitespace = true;
    this.indention = true;
  }

  private indicator(s: string, needWhitespace: boolean, isWhitespace: boolean, isIndention: boolean): void {
    if (needWhitespace && !this.whitespace) this.put(' ');
    this.put(s);
    this.whitespace = isWhitespace;
    this.indention = this.indention && isIndention;
  }

  private increaseIndent(flow: boolean, indentless: boolean): void {
    this.indents.push(this.indent);
    if (this.indent < 0) this.indent = flow ? BEST_INDENT : 0;
    else if (!indentless) this.indent += BEST_INDENT;
  }

  private decreaseIndent(): void {
    this.indent = this.indents.pop() as number;
  }

  /** Emits any JSON value in block context. `inMapping`: the value of a mapping key. */
  node(v: unknown, inMapping: boolean, simpleKey = false): void {
    if (v === null || v === undefined) return this.scalar('null', Style.Plain, simpleKey);
    if (typeof v === 'boolean') return this.scalar(v ? 'true' : 'false', Style.Plain, simpleKey);
    if (typeof v === 'number') return this.scalar(numberText(v), Style.Plain, simpleKey);
    if (typeof v === 'string') return this.string(v, simpleKey);
    if (Array.isArray(v)) return this.sequence(v, inMapping);
    if (isObject(v)) return this.mapping(v);
    // No JSON value is left; a bigint prints as its digits, anything else as JSON's null.
    return this.scalar(typeof v === 'bigint' ? v.toString() : 'null', Style.Plain, simpleKey);
  }

  private string(s: string, simpleKey: boolean): void {
    let style: Style;
    if (s.includes('\n')) style = Style.Literal;
    else if (resolvesToNonString(s) || (s.length <= 256 && BASE60_FLOAT.test(s))) style = Style.Double;
    else style = Style.Plain;
    this.scalar(s, style, simpleKey);
  }

  /** go-yaml's select_scalar_style and process_scalar for one scalar. */
  private scalar(s: string, wanted: Style, simpleKey: boolean): void {
    const a = analyze(s);
    let style = wanted;
    if (simpleKey && a.multiline) style = Style.Double;
    if (style === Style.Plain && (!a.blockPlainAllowed || (s.length === 0 && simpleKey))) style = Style.Single;
    if (style === Style.Single && !a.singleQuotedAllowed) style = Style.Double;
    if (style === Style.Literal && (!a.blockAllowed || simpleKey)) style = Style.Double;
    this.increaseIndent(true, false);
    const allowBreaks = !simpleKey;
    switch (style) {
      case Style.Plain:
        this.quoted(s, '', allowBreaks);
        break;
      case Style.Single:
        this.quoted(s, "'", allowBreaks);
        break;
      case Style.Double:
        this.quoted(s, '"', allowBreaks);
        break;
      case Style.Literal:
        this.literal(s);
        break;
    }
    this.decreaseIndent();
  }

  /**
   * A plain (`quote` ''), single- or double-quoted scalar on one line, folded at a space once past
   * column 80 (go-yaml's write_plain/single_quoted/double_quoted_scalar). Text between spaces is
   * written in runs, so a long value costs one pass.
   */
  private quoted(s: string, quote: '' | "'" | '"', allowBreaks: boolean): void {
    if (quote === '') {
      if (!this.whitespace) this.put(' ');
    } else this.indicator(quote, true, false, false);
    let spaces = false;
    let run = '';
    const flush = (): void => {
      if (run !== '') {
        this.put(run);
        run = '';
      }
    };
    for (let i = 0; i < s.length;) {
      const c = s.codePointAt(i) as number;
      const w = c > 0xffff ? 2 : 1;
      const ch = s.slice(i, i + w);
      const atEdge = i === 0 || i + w >= s.length;
      if (quote === '"' && (!isPrintable(c) || c === 0xfeff || isBreak(c) || c === 0x22 || c === 0x5c)) {
        run += `\\${escapeFor(c)}`;
        spaces = false;
      } else if (c === 0x20) {
        flush();
        const nextIsSpace = s.charCodeAt(i + 1) === 0x20;
        const fold =
          quote === '"'
            ? allowBreaks && !spaces && this.column > BEST_WIDTH && !atEdge
            : allowBreaks && !spaces && this.column > BEST_WIDTH && !nextIsSpace && (quote === '' || !atEdge);
        if (fold) {
          this.writeIndent();
          if (quote === '"' && nextIsSpace) this.put('\\');
        } else this.put(' ');
        spaces = true;
      } else {
        run += quote === "'" && c === 0x27 ? "''" : ch;
        spaces = false;
      }
      i += w;
    }
    flush();
    if (quote !== '') this.indicator(quote, false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  private literal(s: string): void {
    this.indicator('|', true, false, false);
    const first = s.codePointAt(0) as number;
    if (first === 0x20 || isBreak(first)) this.indicator(String(BEST_INDENT), false, false, false);
    const lastIsBreak = isBreak(s.charCodeAt(s.length - 1));
    if (!lastIsBreak) this.indicator('-', false, false, false);
    else if (s.length === 1 || isBreak(s.charCodeAt(s.length - 2))) this.indicator('+', false, false, false);
    this.putBreak();
    this.indention = true;
    this.whitespace = true;
    let start = 0;
    for (let i = 0; i <= s.length; i++) {
      if (i < s.length && !isBreak(s.charCodeAt(i))) continue;
      if (i > start) {
        this.writeIndent();
        this.put(s.slice(start, i));
        this.indention = false;
      }
      if (i < s.length) {
        this.putBreak();
        this.indention = true;
      }
      start = i + 1;
    }
  }

  private mapping(obj: Obj): void {
    const keys = sortedKeys(obj);
    if (keys.length === 0) {
      this.indicator('{}', true, false, false);
      return;
    }
    this.increaseIndent(false, false);
    for (const k of keys) {
      this.mappingKey(k);
      this.node(obj[k], true);
    }
    this.decreaseIndent();
  }

  /** A mapping's key and its `:`, before its value. */
  private mappingKey(k: string): void {
    this.writeIndent();
    const simple = Buffer.byteLength(k) <= MAX_SIMPLE_KEY_BYTES && !k.includes('\n');
    if (simple) {
      this.node(k, false, true);
      this.indicator(':', false, false, false);
    } else {
      this.indicator('?', true, false, true);
      this.node(k, false);
      this.writeIndent();
      this.indicator(':', true, false, true);
    }
  }

  private sequence(items: unknown[], inMapping: boolean): void {
    if (items.length === 0) {
      this.indicator('[]', true, false, false);
      return;
    }
    this.increaseIndent(false, inMapping && !this.indention);
    for (const item of items) this.sequenceItem(item);
    this.decreaseIndent();
  }

  private sequenceItem(item: unknown): void {
    this.writeIndent();
    this.indicator('-', true, false, true);
    this.node(item, false);
  }

  /** The text written since the last call (the emitter's state stays: more may follow). */
  take(): string {
    const out = this.out;
    this.out = '';
    return out;
  }

  /**
   * `node(obj)` for a mapping whose field `key` is a sequence of `count` elements, made when they are
   * written; yields the text so far each time it reaches `pieceLength`.
   */
  *mappingWithSequence(obj: Obj, key: string, count: number, element: (i: number) => unknown, pieceLength: number): Generator<string> {
    this.increaseIndent(false, false);
    for (const k of sortedKeys({ ...obj, [key]: null })) {
      this.mappingKey(k);
      if (k !== key) {
        this.node(obj[k], true);
        continue;
      }
      if (count === 0) {
        this.sequence([], true);
        continue;
      }
      this.increaseIndent(false, !this.indention);
      for (let i = 0; i < count; i++) {
        this.sequenceItem(element(i));
        if (this.out.length >= pieceLength) yield this.take();
      }
      this.decreaseIndent();
    }
    this.decreaseIndent();
  }
}

/** go-yaml's double-quoted escape for one code point (without the backslash). */
function escapeFor(c: number): string {
  switch (c) {
    case 0x00:
      return '0';
    case 0x07:
      return 'a';
    case 0x08:
      return 'b';
    case 0x09:
      return 't';
    case 0x0a:
      return 'n';
    case 0x0b:
      return 'v';
    case 0x0c:
      return 'f';
    case 0x0d:
      return 'r';
    case 0x1b:
      return 'e';
    case 0x22:
      return '"';
    case 0x5c:
      return '\\';
    case 0x85:
      return 'N';
    case 0xa0:
      return '_';
    case 0x2028:
      return 'L';
    case 0x2029:
      return 'P';
    default:
      if (c <= 0xff) return `x${c.toString(16).toUpperCase().padStart(2, '0')}`;
      if (c <= 0xffff) return `u${c.toString(16).toUpperCase().padStart(4, '0')}`;
      return `U${c.toString(16).toUpperCase().padStart(8, '0')}`;
  }
}

/** `value` as YAML, as kube-apiserver's YAML serializer writes it (ends with a newline). */
export function toYaml(value: unknown): string {
  const e = new Emitter();
  e.node(value, false);
  return e.finish();
}

/**
 * `toYaml({...head, [key]: elements})` in pieces of about `pieceLength` characters, the elements
 * made as they are written (for large lists written piece by piece).
 */
export function* yamlPieces(head: Obj, key: string, count: number, element: (i: number) => unknown, pieceLength: number): Generator<string> {
  const e = new Emitter();
  yield* e.mappingWithSequence(head, key, count, element, pieceLength);
  yield e.finish();
}
