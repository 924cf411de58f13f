/**
 * Field selectors (`fieldSelector=` query parameter) with the grammar, escaping and error texts of
 * k8s.io/apimachinery/pkg/fields: terms `f=v`, `f==v`, `f!=v` joined by commas; in values `\,`,
 * `\=` and `\\` are escapes, and unescaped `,`/`=` are errors. Terms are ANDed.
 */
import { badRequest } from '../api/errors.js';

/** The field-selector contract of one resource type. */
export interface FieldSelectorSpec {
  /** Labels accepted as written in a selector (aliases included). */
  readonly supported: readonly string[];
  /** The canonical label for `label`, or undefined when the type does not support it. */
  convert(label: string): string | undefined;
  /** kube's error text for an unsupported label (the message of the 400). */
  unsupportedMessage(label: string): string;
  /** The object's selectable fields, keyed by canonical label. */
  fieldsOf(obj: Record<string, unknown>): Record<string, string>;
}

/** One term; `field` is the canonical label after the type's conversion (aliases resolved). */
export interface FieldRequirement {
  field: string;
  operator: '=' | '!=';
  value: string;
}

export type ObjectMatcher = (obj: Record<string, unknown>) => boolean;

/** Splits on commas not escaped by a backslash, keeping the escapes in the terms. */
function splitTerms(selector: string): string[] {
  if (selector.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < selector.length; i++) {
    const c = selector.charAt(i);
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

/** The first operator occurrence splits the term; `!=` and `==` are tried before `=`. */
function splitTerm(term: string): { lhs: string; op: '=' | '==' | '!='; rhs: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of ['!=', '==', '='] as const) {
      if (term.startsWith(op, i)) return { lhs: term.slice(0, i), op, rhs: term.slice(i + op.length) };
    }
  }
  return undefined;
}

/** kube's fields.UnescapeValue. */
function unescapeValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c !== '\\' && c !== ',' && c !== '=') {
        throw badRequest(`invalid field selector: invalid escape sequence: \\${c}`);
      }
      out += c;
      inSlash = false;
      continue;
    }
    if (c === '\\') inSlash = true;
    else if (c === ',' || c === '=') {
      // Go prints the rune with %v, which is its code point.
      throw badRequest(`invalid field selector: unescaped character in value: ${c.codePointAt(0) ?? 0}`);
    } else out += c;
  }
  if (inSlash) throw badRequest('invalid field selector: invalid escape sequence: \\');
  return out;
}

/**
 * Parses the syntax of a field selector without checking field names. Terms come back sorted by
 * their text, as kube sorts them (this decides which bad term is reported first). Throws ApiError
 * 400 BadRequest with kube's message on a syntax error.
 */
export function parseFieldSelector(selector: string): FieldRequirement[] {
  const parts = splitTerms(selector).sort();
  const out: FieldRequirement[] = [];
  for (const part of parts) {
    if (part === '') continue;
    const term = splitTerm(part);
    if (term === undefined) throw badRequest(`invalid selector: '${selector}'; can't understand '${part}'`);
    const value = unescapeValue(term.rhs);
    out.push({ field: term.lhs, operator: term.op === '!=' ? '!=' : '=', value });
  }
  return out;
}

/**
 * Parses a field selector and converts each field through the type's supported labels (aliases
 * such as pods' `spec.host` become canonical). Throws ApiError 400 BadRequest with kube's message
 * for a syntax error or a field the type does not support.
 */
export function parseFieldSelectorFor(spec: FieldSelectorSpec, selector: string): FieldRequirement[] {
  return parseFieldSelector(selector).map((r) => {
    const canonical = spec.convert(r.field);
    if (canonical === undefined) throw badRequest(spec.unsupportedMessage(r.field));
    return { ...r, field: canonical };
  });
}

/** Whether every requirement holds for the object's selectable fields (a missing field reads as ""). */
export function fieldRequirementsMatch(requirements: readonly FieldRequirement[], fields: Record<string, string>): boolean {
  return requirements.every((r) => {
    const actual = fieldValue(fields, r.field);
    return r.operator === '=' ? actual === r.value : actual !== r.value;
  });
}

/** The value of selectable field `field` as selectors read it: a missing field reads as "". */
export function fieldValue(fields: Record<string, string>, field: string): string {
  return Object.prototype.hasOwnProperty.call(fields, field) ? (fields[field] ?? '') : '';
}

/**
 * Compiles a field selector for objects whose field-selector contract is `spec` into a matcher;
 * undefined or empty matches everything. Throws ApiError 400 BadRequest as parseFieldSelectorFor does.
 */
export function compileFieldSelector(selector: string | undefined, spec: FieldSelectorSpec): ObjectMatcher {
  if (selector === undefined || selector === '') return () => true;
  const requirements = parseFieldSelectorFor(spec, selector);
  if (requirements.length === 0) return () => true;
  return (obj) => fieldRequirementsMatch(requirements, spec.fieldsOf(obj));
}
