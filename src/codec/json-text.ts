/**
 * The one JSON reader for request bodies and patches: a single pass over the text that builds the value
 * and enforces what `JSON.parse` cannot:
 * - a nesting limit (objects and arrays), checked while reading, so a hostile body never builds a value
 *   deeper than the server can walk;
 * - duplicate object keys, reported with their field path (`metadata.labels.a`) and merged as Go's
 *   decoder merges them into typed objects (a repeated object merges into the first, anything else
 *   replaces it), so strict field validation can name them as kube-apiserver does;
 * - forbidden keys (`__proto__`, `constructor`, `prototype`), compared after escapes are decoded, so
 *   `"\u005f_proto__"` is caught like `"__proto__"`;
 * - syntax errors worded as Go's `encoding/json` words them (`invalid character 'x' after object key`),
 *   which kube-apiserver puts into its 400 messages.
 *
 * The reader never recurses: work and stack use are linear in the input whatever its shape.
 */

import { goQuote } from './go-quote.js';
import { isObject } from '../api/values.js';

/** Keys refused in every decoded body: assigning them to a plain object would reach its prototype. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** A body that is not valid JSON; `message` is Go's `encoding/json` syntax error text. */
export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.name = 'JsonSyntaxError';
  }
}

/** A body that uses a key the server refuses (see FORBIDDEN_KEYS). */
export class ForbiddenKeyError extends Error {
  constructor(readonly key: string) {
    super(`invalid field name ${goQuote(key)}`);
    this.name = 'ForbiddenKeyError';
  }
}

/** A key that appeared twice in one object. */
export interface DuplicateField {
  /** Field path as Go's strict decoding prints it: `spec.containers[0].name`. */
  path: string;
  /** Offset of the second occurrence's key in the text (document order). */
  offset: number;
}

export interface ParsedJson {
  value: unknown;
  /** Keys repeated within one object, in document order. */
  duplicates: DuplicateField[];
  /**
   * Number literals whose JavaScript value differs from what Go's decoder sees: overflowing literals
   * (`1e400`, read as Infinity), integers beyond 2^53, and integral values written as floats (`1.0`,
   * `1e3`, which Go refuses for integer fields). Keyed by the container and the key or index the number
   * sits at, so a typed decoder can report the literal as Go does. Absent when there are none.
   */
  numberLiterals: Map<object, Map<string | number, string>> | undefined;
}

/** The literal text of the number at `container[key]` when it is recorded in `parsed.numberLiterals`. */
export function numberLiteral(parsed: Pick<ParsedJson, 'numberLiterals'>, container: object, key: string | number): string | undefined {
  return parsed.numberLiterals?.get(container)?.get(key);
}

export interface JsonReadOptions {
  /** Deepest nesting of objects and arrays allowed; the outermost container is depth 1. */
  maxDepth: number;
  /**
   * When given, receives the offset of every key's first occurrence by field path (as in
   * DuplicateField.path), so other reports about fields can be put in document order.
   */
  keyOffsets?: Map<string, number>;
}

type Container = Record<string, unknown> | unknown[];

interface Frame {
  container: Container;
  /** Key the next value is stored under (objects), or undefined while reading a key. */
  key: string | undefined;
  /** Offset of `key` in the text. */
  keyOffset: number;
  /** Path of this container, for duplicate reports. */
  path: string;
}

/** Go's strconv.Quote of one character, in single quotes, as `encoding/json` prints an offending byte. */
export function goQuoteChar(ch: string): string {
  if (ch === "'") return "'\\''";
  if (ch === '"') return "'\"'";
  const quoted = JSON.stringify(ch);
  let inner = quoted.slice(1, -1);
  const code = ch.charCodeAt(0);
  if (code < 0x20 || code === 0x7f) {
    const named: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r' };
    inner = named[code] ?? `\\x${code.toString(16).padStart(2, '0')}`;
  }
  return `'${inner}'`;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function childPath(parent: string, key: string): string {
  return parent === '' ? key : `${parent}.${key}`;
}

/** Go's decoding of a repeated key: objects merge into the first occurrence, anything else replaces it. */
function mergeRepeated(first: unknown, second: unknown): unknown {
  if (!isObject(first) || !isObject(second)) return second;
  for (const k of Object.keys(second)) first[k] = mergeRepeated(first[k], second[k]);
  return first;
}

/**
 * Reads one JSON document. Throws JsonSyntaxError (Go's wording; nesting beyond `maxDepth` is
 * "invalid character '{' exceeded max depth"), or ForbiddenKeyError.
 */
export function readJson(text: string, options: JsonReadOptions): ParsedJson {
  const n = text.length;
  const stack: Frame[] = [];
  const duplicates: DuplicateField[] = [];
  let i = 0;
  let result: unknown;
  let haveResult = false;
  let numberLiterals: Map<object, Map<string | number, string>> | undefined;
  /** Literal of the number just read, when it must be recorded (see ParsedJson.numberLiterals). */
  let pendingLiteral: string | undefined;

  const fail = (context: string, at: number): never => {
    if (at >= n) throw new JsonSyntaxError('unexpected end of JSON input', n);
    throw new JsonSyntaxError(`invalid character ${goQuoteChar(text.charAt(at))} ${context}`, at);
  };
  const skipSpace = (): void => {
    while (i < n && isSpace(text.charCodeAt(i))) i++;
  };

  /** Reads a string starting at the opening quote; returns its decoded value. */
  const readString = (): string => {
    const start = ++i;
    // Fast path: no escapes.
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        const s = text.slice(start, i);
        i++;
        return s;
      }
      if (c === 0x5c) break;
      if (c < 0x20) fail('in string literal', i);
      i++;
    }
    let out = text.slice(start, i);
    let run = i;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(run, i);
        i++;
        return out;
      }
      if (c < 0x20) fail('in string literal', i);
      if (c !== 0x5c) {
        i++;
        continue;
      }
      out += text.slice(run, i);
      i++;
      if (i >= n) fail('in string escape code', i);
      const e = text.charAt(i);
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          let code = 0;
          for (let k = 1; k <= 4; k++) {
            const h = text.charCodeAt(i + k);
            const v = h >= 0x30 && h <= 0x39 ? h - 0x30 : h >= 0x61 && h <= 0x66 ? h - 0x57 : h >= 0x41 && h <= 0x46 ? h - 0x37 : -1;
            if (v < 0) fail('in \\u hexadecimal character escape', i + k);
            code = code * 16 + v;
          }
          out += String.fromCharCode(code);
          i += 4;
          break;
        }
        default:
          fail('in string escape code', i);
      }
      i++;
      run = i;
    }
    return fail('in string literal', n);
  };

  /** Reads a number literal (Go's grammar); returns its value (non-finite for overflowing literals). */
  const readNumber = (): number => {
    const start = i;
    if (text.charCodeAt(i) === 0x2d) {
      i++;
      if (!isDigit(text.charCodeAt(i))) fail('in numeric literal', i);
    }
    if (text.charCodeAt(i) === 0x30) i++;
    else while (isDigit(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) === 0x2e) {
      i++;
      if (!isDigit(text.charCodeAt(i))) fail('after decimal point in numeric literal', i);
      while (isDigit(text.charCodeAt(i))) i++;
    }
    const e = text.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      i++;
      const s = text.charCodeAt(i);
      if (s === 0x2b || s === 0x2d) i++;
      if (!isDigit(text.charCodeAt(i))) fail('in exponent of numeric literal', i);
      while (isDigit(text.charCodeAt(i))) i++;
    }
    const literal = text.slice(start, i);
    const value = literal === '-0' ? 0 : Number(literal); // Go reads `-0` as the integer 0
    if (!Number.isSafeInteger(value) ? !Number.isFinite(value) || Number.isInteger(value) : literal.length > 15 || /[.eE]/.test(literal)) {
      if (String(value) !== literal) pendingLiteral = literal;
    }
    return value;
  };

  const readLiteral = (word: string, value: unknown): unknown => {
    for (let k = 1; k < word.length; k++) {
      if (text.charAt(i + k) !== word.charAt(k)) fail(`in literal ${word} (expecting '${word.charAt(k)}')`, i + k);
    }
    i += word.length;
    return value;
  };

  /** Stores a finished value in the innermost container (or as the result). */
  const store = (value: unknown): void => {
    const top = stack[stack.length - 1];
    if (pendingLiteral !== undefined) {
      const literal = pendingLiteral;
      pendingLiteral = undefined;
      // A top-level number is refused later as a body that is not an object; nothing to record.
      if (top !== undefined) {
        const where = Array.isArray(top.container) ? top.container.length : (top.key as string);
        numberLiterals ??= new Map();
        let inContainer = numberLiterals.get(top.container);
        if (inContainer === undefined) numberLiterals.set(top.container, (inContainer = new Map<string | number, string>()));
        inContainer.set(where, literal);
      }
    }
    if (top === undefined) {
      result = value;
      haveResult = true;
      return;
    }
    const c = top.container;
    if (Array.isArray(c)) {
      c.push(value);
      return;
    }
    const key = top.key as string;
    // Forbidden keys never get here, so an own-property check cannot meet the prototype.
    if (Object.prototype.hasOwnProperty.call(c, key)) {
      duplicates.push({ path: childPath(top.path, key), offset: top.keyOffset });
      c[key] = mergeRepeated(c[key], value);
    } else {
      c[key] = value;
    }
    top.key = undefined;
  };

  const open = (container: Container): void => {
    if (stack.length >= options.maxDepth) fail('exceeded max depth', i);
    const top = stack[stack.length - 1];
    let path = '';
    if (top !== undefined) {
      path = Array.isArray(top.container) ? `${top.path}[${top.container.length}]` : childPath(top.path, top.key as string);
    }
    stack.push({ container, key: undefined, keyOffset: 0, path });
    i++;
  };

  /** Reads an object key and its colon, leaving `i` at the value. */
  const readKey = (frame: Frame): void => {
    skipSpace();
    if (text.charCodeAt(i) !== 0x22) fail('looking for beginning of object key string', i);
    const keyOffset = i;
    const key = readString();
    if (FORBIDDEN_KEYS.has(key)) throw new ForbiddenKeyError(key);
    skipSpace();
    if (text.charCodeAt(i) !== 0x3a) fail('after object key', i);
    i++;
    frame.key = key;
    frame.keyOffset = keyOffset;
    if (options.keyOffsets !== undefined) {
      const path = childPath(frame.path, key);
      if (!options.keyOffsets.has(path)) options.keyOffsets.set(path, keyOffset);
    }
  };

  // Each turn reads one value (opening a container counts as reading its start).
  for (;;) {
    skipSpace();
    const c = text.charCodeAt(i);
    let value: unknown;
    let opened = false;
    if (c === 0x7b) {
      open({});
      opened = true;
      skipSpace();
      if (text.charCodeAt(i) === 0x7d) {
        i++;
        value = (stack.pop() as Frame).container;
        opened = false;
      } else {
        readKey(stack[stack.length - 1]);
        continue;
      }
    } else if (c === 0x5b) {
      open([]);
      skipSpace();
      if (text.charCodeAt(i) === 0x5d) {
        i++;
        value = (stack.pop() as Frame).container;
      } else {
        continue;
      }
    } else if (c === 0x22) {
      value = readString();
    } else if (c === 0x2d || isDigit(c)) {
      value = readNumber();
    } else if (c === 0x74) {
      value = readLiteral('true', true);
    } else if (c === 0x66) {
      value = readLiteral('false', false);
    } else if (c === 0x6e) {
      value = readLiteral('null', null);
    } else {
      fail('looking for beginning of value', i);
    }
    if (opened) continue;
    store(value);
    // Close every container that ends here; stop at a comma (next element) or the end of input.
    for (;;) {
      const top = stack[stack.length - 1];
      if (top === undefined) {
        skipSpace();
        if (i < n) fail('after top-level value', i);
        return { value: haveResult ? result : undefined, duplicates, numberLiterals };
      }
      skipSpace();
      const d = text.charCodeAt(i);
      if (Array.isArray(top.container)) {
        if (d === 0x2c) {
          i++;
          break;
        }
        if (d === 0x5d) {
          i++;
          stack.pop();
          store(top.container);
          continue;
        }
        fail('after array element', i);
      } else {
        if (d === 0x2c) {
          i++;
          readKey(top);
          break;
        }
        if (d === 0x7d) {
          i++;
          stack.pop();
          store(top.container);
          continue;
        }
        fail('after object key:value pair', i);
      }
    }
  }
}
