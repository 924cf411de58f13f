/**
 * Field errors in the shape kube-apiserver puts in `Status.details.causes`: `reason` is the
 * field.ErrorType (FieldValueInvalid, ...), `field` the JSON path, and `message` the error body
 * kube prints after the field name (`Invalid value: "Foo": <detail>`).
 */
import type { StatusCause } from '../api/errors.js';

/** A value as kube's field.Error prints it: Go's %q for strings, %v for numbers and booleans. */
export type BadValue = string | number | boolean | null | { goSyntax: string };

/** Quotes a string as Go's strconv.Quote does (the `%q` verb). */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    switch (ch) {
      case '"':
        out += '\\"';
        continue;
      case '\\':
        out += '\\\\';
        continue;
      case '\x07':
        out += '\\a';
        continue;
      case '\b':
        out += '\\b';
        continue;
      case '\f':
        out += '\\f';
        continue;
      case '\n':
        out += '\\n';
        continue;
      case '\r':
        out += '\\r';
        continue;
      case '\t':
        out += '\\t';
        continue;
      case '\v':
        out += '\\v';
        continue;
      default:
        break;
    }
    if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if ((code >= 0x80 && code < 0xa0) || code === 0x2028 || code === 0x2029 || code === 0xfeff) {
      out += `\\u${code.toString(16).padStart(4, '0')}`;
    } else out += ch;
  }
  return out + '"';
}

/** Go's `%#v` of a []string, as kube formats lists inside detail messages. */
export function goStringSlice(values: readonly string[]): { goSyntax: string } {
  return { goSyntax: `[]string{${values.map(goQuote).join(', ')}}` };
}

/**
 * A bad value that is not a plain string, number or bool, as kube 1.36's field errors print it: Go's
 * json.Marshal (which escapes <, > and & as \u003c, \u003e, \u0026, and U+2028/U+2029).
 */
export function goJson(value: unknown): { goSyntax: string } {
  const text = JSON.stringify(value) ?? 'null';
  return { goSyntax: text.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) };
}

function printValue(value: BadValue): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return value.goSyntax;
}

function cause(reason: string, field: string, message: string): StatusCause {
  return { reason, message, field };
}

/** field.Invalid: `Invalid value: <value>: <detail>`. */
export function invalidField(field: string, value: BadValue, detail: string): StatusCause {
  const body = `Invalid value: ${printValue(value)}`;
  return cause('FieldValueInvalid', field, detail ? `${body}: ${detail}` : body);
}

/** field.Required: `Required value[: detail]`. */
export function requiredField(field: string, detail = ''): StatusCause {
  return cause('FieldValueRequired', field, detail ? `Required value: ${detail}` : 'Required value');
}

/** field.Forbidden: `Forbidden[: detail]`. */
export function forbiddenField(field: string, detail = ''): StatusCause {
  return cause('FieldValueForbidden', field, detail ? `Forbidden: ${detail}` : 'Forbidden');
}

/** field.TooLong: `Too long: may not be more than <max> bytes` (the value itself is never printed). */
export function tooLongField(field: string, maxBytes: number): StatusCause {
  return cause('FieldValueTooLong', field, `Too long: may not be more than ${maxBytes} ${maxBytes === 1 ? 'byte' : 'bytes'}`);
}

/** field.NotSupported: `Unsupported value: <value>[: supported values: "a", "b"]`. */
export function notSupportedField(field: string, value: BadValue, supported: readonly string[]): StatusCause {
  const body = `Unsupported value: ${printValue(value)}`;
  const detail = supported.length > 0 ? `supported values: ${supported.map(goQuote).join(', ')}` : '';
  return cause('FieldValueNotSupported', field, detail ? `${body}: ${detail}` : body);
}

/** field.Duplicate: `Duplicate value: <value>`. */
export function duplicateField(field: string, value: BadValue): StatusCause {
  return cause('FieldValueDuplicate', field, `Duplicate value: ${printValue(value)}`);
}

/** field.NotFound: `Not found: <value>`. */
export function notFoundField(field: string, value: BadValue): StatusCause {
  return cause('FieldValueNotFound', field, `Not found: ${printValue(value)}`);
}

/** `field: message` as kube's field.Error.Error() prints one cause. */
export function causeText(c: StatusCause): string {
  return c.field ? `${c.field}: ${c.message ?? ''}` : (c.message ?? '');
}

/** Joins several error texts the way kube's utilerrors aggregate does (deduplicated, `[a, b]`). */
export function aggregateText(texts: readonly string[]): string {
  const unique = [...new Set(texts)];
  if (unique.length === 1) return unique[0] ?? '';
  return `[${unique.join(', ')}]`;
}
