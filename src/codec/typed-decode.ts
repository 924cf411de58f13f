import { canonicalQuantity } from '../api/quantity.js';
import { goTimeError } from './go-time.js';
import { QUANTITY_FORMAT_ERROR, parseQuantityText } from '../api/quantity-grammar.js';
import { base64ErrorOffset } from './go-base64.js';
import { goShape } from '../schema/go-shape.js';
import { kindValidator } from './kind-validators.js';
import type { SchemaNode } from '../schema/openapi-schema.js';
import { CBOR_TEXT_STRING } from './cbor/cbor-decoder.js';
import type { Obj } from '../api/object-util.js';
import { isObject } from '../api/values.js';

/**
 * Decoding a JSON value "into the kind", as kube-apiserver's typed decoder does with Go structs: every
 * field the schema does not declare is dropped (and reported for strict field validation), and every
 * value of the wrong JSON type fails the request with the error Go's `encoding/json` gives
 * (`json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32`),
 * including the types with their own decoders (Quantity, IntOrString, Time, MicroTime, base64 bytes).
 *
 * Like Go's decoder, a plain type mismatch is remembered and decoding goes on (the first one in document
 * order is reported at the end); a failure inside a type's own decoder (a bad Quantity or time) stops
 * at once and wins. Recursion is bounded by the body decoder's nesting limit.
 */

/** A body that cannot be decoded into its kind; `message` is Go's error text. */
export class TypedDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TypedDecodeError';
  }
}

/** What decoding left behind when it succeeded. */
export interface TypedDecodeOutcome {
  /** Paths of dropped fields as Go's strict decoding prints them (`spec.containers[0].foo`), in document order. */
  unknownFields: string[];
}

/** How the literal text of a number is found (see ParsedJson.numberLiterals). */
export type NumberLiteralLookup = (container: object, key: string | number) => string | undefined;

/** The Go type name a schema decodes into, as Go's errors print it (`v1.Container`, `[]string`, `int32`). */
export function goTypeName(schema: SchemaNode): string {
  const def = schema.definition;
  if (def !== undefined) {
    const parts = def.split('.');
    const name = parts[parts.length - 1];
    const pkg = parts[parts.length - 2];
    return `${pkg}.${name}`;
  }
  switch (schema.type()) {
    case 'integer':
      return schema.format() === 'int32' ? 'int32' : 'int64';
    case 'number':
      return schema.format() === 'float' ? 'float32' : 'float64';
    case 'boolean':
      return 'bool';
    case 'string':
      return schema.format() === 'byte' ? '[]uint8' : 'string';
    case 'array': {
      const items = schema.items();
      return `[]${items ? goTypeName(items) : 'interface {}'}`;
    }
    case 'object': {
      const values = schema.additionalProperties();
      if (values) return `map[string]${goTypeName(values)}`;
      return 'struct {}';
    }
    default:
      return 'interface {}';
  }
}

/** Go's name for the JSON kind of a value in "cannot unmarshal <kind> into". */
function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'bool';
    default:
      return 'object';
  }
}

function intRange(format: string | undefined): [number, number] {
  return format === 'int32' ? [-2147483648, 2147483647] : [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];
}

interface Context {
  /** Innermost Go struct holding the current field (without package). */
  struct: string;
  /** JSON field names from the root, without indices: Go's error field path. */
  fields: string[];
  /** Path with indices for unknown-field reports. */
  path: string;
}

/**
 * Whose words a type error is reported in: Go's `encoding/json` (request bodies, merge and JSON
 * patches), kube's CBOR decoder (fxamacker/cbor: CBOR request bodies) or kube's unstructured converter (strategic merge patches, which kube applies to maps and
 * converts to the typed object without JSON in between).
 */
export type DecodeWording = 'json' | 'unstructured' | 'cbor';

/**
 * fxamacker/cbor's name for the CBOR type a decoded value came from. Strings are byte strings, as
 * kube's encoder (client-go's included) writes them, unless their literal says text string; numbers
 * that are not whole, or whose literal is a float's (`2.0`), were floats.
 */
function cborKind(v: unknown, literal: string | undefined): string {
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'string':
      return literal === CBOR_TEXT_STRING ? 'UTF-8 text string' : 'byte string';
    case 'number':
      // Integers beyond int64 come with their literal text; a whole value beyond it without one was a float.
      if (literal !== undefined && /^-?\d+$/.test(literal)) return literal.startsWith('-') ? 'negative integer' : 'positive integer';
      if (literal !== undefined) return 'primitives';
      if (!Number.isInteger(v) || v >= 2 ** 63 || v < -(2 ** 63)) return 'primitives';
      return v < 0 ? 'negative integer' : 'positive integer';
    case 'boolean':
      return 'primitives';
    default:
      return 'map';
  }
}

const INT_BOUNDS: Record<string, [bigint, bigint]> = { int32: [-(2n ** 31n), 2n ** 31n - 1n], int64: [-(2n ** 63n), 2n ** 63n - 1n] };

/** True when a CBOR integer (its exact text) fits Go integer type `type`; floats never do. */
function cborIntegerFits(text: string, v: number, type: string): boolean {
  if (!Number.isInteger(v) || !/^-?\d+$/.test(text)) return false;
  const bounds = INT_BOUNDS[type] ?? INT_BOUNDS.int64;
  const n = BigInt(text);
  return n >= bounds[0] && n <= bounds[1];
}

/**
 * fxamacker/cbor's UnmarshalTypeError as kube's CBOR decoder returns it: the struct field is the top
 * type's field the error surfaced in (`v1.Deployment.spec`), the type the innermost Go type, and an
 * integer out of the field's range says so.
 */
function cborMismatchMessage(root: string, ctx: Context, value: unknown, type: string, literal?: string): string {
  const into = ctx.fields.length > 0 ? `Go struct field ${root}.${ctx.fields[0]}` : 'Go value';
  let overflow = '';
  const bounds = INT_BOUNDS[type];
  if (bounds !== undefined && literal !== undefined && /^-?\d+$/.test(literal)) {
    const n = BigInt(literal);
    if (n < bounds[0] || n > bounds[1]) overflow = ` (${literal} overflows ${type})`;
  }
  return `cbor: cannot unmarshal ${cborKind(value, literal)} into ${into} of type ${type}${overflow}`;
}

/** Go's UnmarshalTypeError text, with the field context Go's decoder adds. */
function mismatchMessage(ctx: Context, value: unknown, type: string, literal?: string, wording: DecodeWording = 'json', root = ''): string {
  if (wording === 'cbor') return cborMismatchMessage(root, ctx, value, type, literal);
  const what = literal !== undefined ? `number ${literal}` : jsonKind(value);
  const into = ctx.fields.length > 0 ? `Go struct field ${ctx.struct}.${ctx.fields.join('.')}` : 'Go value';
  return `json: cannot unmarshal ${what} into ${into} of type ${type}`;
}

/** The Go kind of a value in an unstructured map (JSON numbers: int64 when integral, else float64). */
function unstructuredKind(v: unknown): string {
  if (Array.isArray(v)) return 'slice';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'number':
      return Number.isInteger(v) ? 'int64' : 'float64';
    case 'boolean':
      return 'bool';
    default:
      return 'map';
  }
}

/** The unstructured converter's refusal to put `value` into a scalar of Go kind `dest`, or undefined when it converts. */
function scalarConversionError(value: unknown, dest: string): string | undefined {
  const src = unstructuredKind(value);
  if (src === dest) return undefined;
  const numeric = (k: string): boolean => k === 'int32' || k === 'int64' || k === 'float32' || k === 'float64';
  if (src === 'int64' && numeric(dest)) return undefined;
  if (src === 'float64' && numeric(dest)) {
    if (dest.startsWith('float') || Number.isInteger(value)) return undefined;
    return `cannot convert float64 to ${dest}`;
  }
  if (src === 'int64' && dest === 'string') return 'cannot convert int64 to string';
  return `unrecognized type: ${dest}`;
}

class Decoder {
  firstError: string | undefined;
  readonly unknown: string[] = [];

  constructor(
    private readonly literal: NumberLiteralLookup | undefined,
    private readonly wording: DecodeWording,
    /** The decoded type as Go names it (`v1.Pod`), for the CBOR wording. */
    private readonly root = '',
  ) {}

  private save(message: string): void {
    // The unstructured converter stops at its first error; Go's JSON decoder goes on and reports the first.
    if (this.wording === 'unstructured') throw new TypedDecodeError(message);
    this.firstError ??= message;
  }

  /** A value of the wrong JSON type for a scalar field of Go kind `kind` (named type `type`). */
  private scalarMismatch(ctx: Context, value: unknown, type: string, kind: string, literal?: string): void {
    if (this.wording === 'unstructured') {
      const err = scalarConversionError(value, kind);
      if (err !== undefined) this.save(err);
      return;
    }
    this.save(mismatchMessage(ctx, value, type, literal, this.wording, this.root));
  }

  /** A value that is not an object or array where a struct, map or slice is expected. */
  private shapeMismatch(ctx: Context, value: unknown, schema: SchemaNode, shape: 'struct' | 'map' | 'slice', literal?: string): void {
    if (this.wording === 'unstructured') {
      const src = unstructuredKind(value);
      this.save(shape === 'struct' ? `cannot restore struct from: ${src}` : `cannot restore ${shape} from ${src}`);
      return;
    }
    this.save(mismatchMessage(ctx, value, goTypeName(schema), literal, this.wording, this.root));
  }

  private numberText(container: object, key: string | number, value: number): string {
    return this.literal?.(container, key) ?? String(value);
  }

  /** Decodes `container[key]` as `schema`, dropping undeclared fields below it. */
  value(container: Obj | unknown[], key: string | number, schema: SchemaNode, ctx: Context): void {
    const v = (container as Record<string | number, unknown>)[key];
    if (v === null || v === undefined) return;
    // CBOR strings: whether the client sent a text or a byte string (type errors name it).
    const textLiteral = this.wording === 'cbor' && typeof v === 'string' ? this.literal?.(container, key) : undefined;
    switch (goShape(schema)) {
      case 'any':
        return;
      case 'quantity':
        return this.quantity(container, key, v);
      case 'int-or-string':
        return this.intOrString(container, key, v, ctx);
      case 'time':
        return this.time(v, ctx);
      case 'map':
      case 'struct': {
        const values = schema.propertyNames().length === 0 ? schema.additionalProperties() : undefined;
        if (!isObject(v)) {
          this.shapeMismatch(ctx, v, schema, values ? 'map' : 'struct', textLiteral);
          return;
        }
        if (values) return this.map(v, values, ctx);
        return this.struct(v, schema, ctx);
      }
      case 'slice': {
        if (!Array.isArray(v)) {
          this.shapeMismatch(ctx, v, schema, 'slice', textLiteral);
          return;
        }
        const items = schema.items();
        if (!items) return;
        for (let i = 0; i < v.length; i++) this.value(v, i, items, { ...ctx, path: `${ctx.path}[${i}]` });
        return;
      }
      case 'bytes':
        return this.bytes(v, ctx, schema);
      case 'string':
        if (typeof v !== 'string') this.scalarMismatch(ctx, v, goTypeName(schema), 'string');
        return;
      case 'bool':
        if (typeof v !== 'boolean') this.scalarMismatch(ctx, v, 'bool', 'bool', textLiteral);
        return;
      case 'integer': {
        const type = goTypeName(schema);
        if (typeof v !== 'number') {
          this.scalarMismatch(ctx, v, type, type, textLiteral);
          return;
        }
        const text = this.numberText(container, key, v);
        const [min, max] = intRange(schema.format());
        if (this.wording === 'unstructured') this.scalarMismatch(ctx, v, type, type);
        else if (this.wording === 'cbor' ? !cborIntegerFits(text, v, type) : !/^-?\d+$/.test(text) || !Number.isInteger(v) || v < min || v > max)
          this.scalarMismatch(ctx, v, type, type, text);
        return;
      }
      case 'float': {
        const type = goTypeName(schema);
        if (typeof v !== 'number') this.scalarMismatch(ctx, v, type, type, textLiteral);
        else if (!Number.isFinite(v)) this.scalarMismatch(ctx, v, type, type, this.numberText(container, key, v));
        return;
      }
    }
  }

  private struct(obj: Obj, schema: SchemaNode, ctx: Context): void {
    const name = goTypeName(schema);
    const struct = name.slice(name.indexOf('.') + 1);
    for (const k of Object.keys(obj)) {
      const child = schema.property(k);
      const path = ctx.path === '' ? k : `${ctx.path}.${k}`;
      if (!child) {
        this.unknown.push(path);
        delete obj[k];
        continue;
      }
      this.value(obj, k, child, { struct, fields: [...ctx.fields, k], path });
    }
  }

  private map(obj: Obj, values: SchemaNode, ctx: Context): void {
    for (const k of Object.keys(obj)) this.value(obj, k, values, { ...ctx, path: `${ctx.path}.${k}` });
  }

  private bytes(v: unknown, ctx: Context, schema: SchemaNode): void {
    if (typeof v !== 'string') {
      if (this.wording === 'unstructured') this.save(`cannot restore slice from ${unstructuredKind(v)}`);
      else this.save(mismatchMessage(ctx, v, goTypeName(schema), undefined, this.wording, this.root));
      return;
    }
    const at = base64ErrorOffset(v);
    if (at < 0) return;
    const err = `illegal base64 data at input byte ${at}`;
    this.save(this.wording === 'unstructured' ? `error decoding from json: ${err}` : err);
  }

  /** A Quantity is stored in kube's canonical form ("1000m" is "1", "1024Mi" is "1Gi"), as Go re-encodes it. */
  private quantity(container: Obj | unknown[], key: string | number, v: unknown): void {
    let text: string;
    if (typeof v === 'number') text = this.numberText(container, key, v);
    else if (typeof v === 'string') text = v;
    else throw new TypedDecodeError(QUANTITY_FORMAT_ERROR);
    // Go's parser, not the pattern in its error message, decides: `1e` or `1.5.5Gi` match the pattern
    // and would be stored, and then fail every client-go list of the resource.
    const parsed = parseQuantityText(text.trim());
    if (typeof parsed === 'string') throw new TypedDecodeError(parsed);
    (container as Record<string | number, unknown>)[key] = canonicalQuantity(text);
  }

  private intOrString(container: Obj | unknown[], key: string | number, v: unknown, ctx: Context): void {
    if (typeof v === 'string') return;
    if (typeof v !== 'number') {
      this.hard(ctx, v, 'int32');
      return;
    }
    const text = this.numberText(container, key, v);
    if (!/^-?\d+$/.test(text) || !Number.isInteger(v) || v < -2147483648 || v > 2147483647) this.hard(ctx, v, 'int32', text);
  }

  private time(v: unknown, ctx: Context): void {
    if (typeof v !== 'string') {
      this.hard(ctx, v, 'string');
      return;
    }
    const error = goTimeError(v);
    if (error !== undefined) throw new TypedDecodeError(error);
  }

  /**
   * A mismatch inside a type's own JSON decoder (IntOrString, Time): reported at once. Go's decoder adds
   * the field's context to it; the unstructured converter, which calls that decoder on its own, does not.
   */
  private hard(ctx: Context, value: unknown, type: string, literal?: string): never {
    const context = this.wording === 'unstructured' ? { ...ctx, fields: [] } : ctx;
    throw new TypedDecodeError(mismatchMessage(context, value, type, literal, this.wording, this.root));
  }
}

/**
 * Decodes `obj` (a parsed body) into the type `schema` describes, in place: unknown fields are removed
 * and returned; a type error throws TypedDecodeError worded as `wording` says.
 *
 * `literal` finds the text of numbers the body parser recorded (ParsedJson.numberLiterals); pass
 * undefined when none were recorded. Then the kind's compiled ajv validator (src/codec/kind-validators.ts)
 * checks the value first, and when it accepts, the value has no type error and no unknown field and the
 * walk is skipped. Otherwise, or when literals were recorded (Go reads them differently from JavaScript),
 * the walk decodes the value and produces Go's exact error, in document order.
 */
export function decodeInto(obj: Obj, schema: SchemaNode, literal?: NumberLiteralLookup, wording: DecodeWording = 'json'): TypedDecodeOutcome {
  // The validators accept what Go's JSON decoder accepts, which kube's CBOR decoder accepts too.
  const accepting = wording === 'cbor' ? 'json' : wording;
  if (literal === undefined && schema.definition !== undefined && kindValidator(schema.definition, accepting)?.(obj) === true) {
    return { unknownFields: [] };
  }
  return walkInto(obj, schema, literal, wording);
}

/**
 * The hand-written walk alone (no schema fast path): the reference decodeInto's validators must agree
 * with, exported for the agreement test and the benchmark.
 */
export function walkInto(obj: Obj, schema: SchemaNode, literal?: NumberLiteralLookup, wording: DecodeWording = 'json'): TypedDecodeOutcome {
  const name = goTypeName(schema);
  const decoder = new Decoder(literal, wording, name);
  const root = { value: obj };
  decoder.value(root, 'value', schema, { struct: name.slice(name.indexOf('.') + 1), fields: [], path: '' });
  if (decoder.firstError !== undefined) throw new TypedDecodeError(decoder.firstError);
  return { unknownFields: decoder.unknown };
}
