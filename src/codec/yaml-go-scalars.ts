import { defineMappingTag, defineScalarTag, NOT_RESOLVED, YAML11_SCHEMA, type Schema } from 'js-yaml';
import { goFloat } from './json-value.js';

/**
 * Plain YAML scalars resolved as kube-apiserver resolves them: go-yaml v2's `resolve` (the fork in
 * sigs.k8s.io/yaml), then sigs.k8s.io/yaml's conversion of mapping keys to JSON object keys.
 * - Numbers: Go's `strconv.ParseInt`/`ParseUint` with base prefixes (`0x`, `0X`, `0o`, `0b`, a leading
 *   `0` for octal, underscores dropped), then go-yaml's float rule, which takes exponents without a
 *   dot or a sign (`1e5`, `15e-1`) and leading zeros (`08` is 8). What does not fit a float64
 *   (`1e400`) and base-60 forms (`1:30`) stay strings.
 * - Timestamps stay the text that was written (go-yaml keeps them as strings for untyped decoding).
 * - Keys become text as sigs.k8s.io/yaml writes them: integers in decimal, floats as Go prints a
 *   float32 (`1e+06`, `.inf`), booleans `true`/`false`; a null or an integer beyond int64 as a key is
 *   refused with its words.
 * The constructed values carry what JSON needs apart: a float is a `GoFloat` and an integer beyond
 * 2^53 a bigint until `jsonScalar` or `jsonKey` turns them into JSON.
 */

/** A float as go-yaml resolved it, kept apart from integers because Go prints float keys differently. */
export class GoFloat {
  constructor(readonly value: number) {}
}

/** An integer beyond int64 that go-yaml resolves as uint64: a number as a value, refused as a key. */
export class GoUint {
  constructor(readonly value: bigint) {}
}

/** The floats go-yaml looks up by their exact text before trying to parse anything. */
const SPECIAL_FLOATS = new Map<string, number>([
  ['.nan', NaN],
  ['.NaN', NaN],
  ['.NAN', NaN],
  ['.inf', Infinity],
  ['.Inf', Infinity],
  ['.INF', Infinity],
  ['+.inf', Infinity],
  ['+.Inf', Infinity],
  ['+.INF', Infinity],
  ['-.inf', -Infinity],
  ['-.Inf', -Infinity],
  ['-.INF', -Infinity],
]);

/** A decimal integer a float64 holds exactly, with no leading zero: most scalars that are numbers. */
const SMALL_DECIMAL = /^[-+]?(?:0|[1-9][0-9]{0,14})$/;
/** What Go's ParseInt and ParseUint read with base 0 (underscores already dropped). */
const GO_INTEGER = /^([-+]?)(?:0[xX]([0-9a-fA-F]+)|0[bB]([01]+)|0[oO]([0-7]+)|0([0-7]+)|([1-9][0-9]*|0))$/;
/** go-yaml's float rule, applied to the text without underscores. */
const GO_FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;
/** What Go's ParseFloat reads of a scalar starting with a dot: underscores only between digits. */
const GO_DOT_FLOAT = /^\.[0-9](?:_?[0-9])*(?:[eE][-+]?[0-9](?:_?[0-9])*)?$/;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

type Resolved = number | bigint | GoFloat | GoUint | typeof NOT_RESOLVED;

function finiteFloat(text: string): GoFloat | typeof NOT_RESOLVED {
  const value = Number(text);
  return Number.isFinite(value) ? new GoFloat(value) : NOT_RESOLVED;
}

/** An integer as Go's ParseInt, then ParseUint, read it with base 0; undefined when neither does. */
function goInteger(plain: string): number | bigint | GoUint | undefined {
  const m = GO_INTEGER.exec(plain);
  if (m === null) return undefined;
  const [, sign, hex, binary, octal, legacyOctal, decimal] = m;
  const magnitude =
    hex !== undefined
      ? BigInt(`0x${hex}`)
      : binary !== undefined
        ? BigInt(`0b${binary}`)
        : octal !== undefined
          ? BigInt(`0o${octal}`)
          : legacyOctal !== undefined
            ? BigInt(`0o${legacyOctal}`)
            : BigInt(decimal);
  const value = sign === '-' ? -magnitude : magnitude;
  if (value >= INT64_MIN && value <= INT64_MAX) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : value;
  }
  if (sign === '' && value <= UINT64_MAX) return new GoUint(value);
  return undefined;
}

/** A plain scalar starting with a digit, a sign or a dot, as go-yaml v2 resolves it. */
function resolveNumber(source: string): Resolved {
  if (SMALL_DECIMAL.test(source)) return Number(source) + 0; // + 0: `-0` is the integer 0 in Go
  const special = SPECIAL_FLOATS.get(source);
  if (special !== undefined) return new GoFloat(special);
  if (source.charCodeAt(0) === 0x2e) return GO_DOT_FLOAT.test(source) ? finiteFloat(source.replace(/_/g, '')) : NOT_RESOLVED;
  const plain = source.includes('_') ? source.replace(/_/g, '') : source;
  const integer = goInteger(plain);
  if (integer !== undefined) return integer;
  return GO_FLOAT.test(plain) ? finiteFloat(plain) : NOT_RESOLVED;
}

const NUMBER_FIRST_CHARS = ['-', '+', '.', ...'0123456789'];

/** `!!int`: implicit resolution gives whatever go-yaml gives (an integer or a float); explicit, integers only. */
const goIntTag = defineScalarTag<unknown>('tag:yaml.org,2002:int', {
  implicit: true,
  implicitFirstChars: NUMBER_FIRST_CHARS,
  resolve: (source, isExplicit) => {
    const value = resolveNumber(source);
    return isExplicit && value instanceof GoFloat ? NOT_RESOLVED : value;
  },
  identify: () => false,
});

/** `!!float`: go-yaml turns an integer written under an explicit `!!float` into a float. */
const goFloatTag = defineScalarTag<unknown>('tag:yaml.org,2002:float', {
  implicit: true,
  implicitFirstChars: NUMBER_FIRST_CHARS,
  resolve: (source) => {
    const value = resolveNumber(source);
    if (value === NOT_RESOLVED || value instanceof GoFloat) return value;
    return new GoFloat(Number(value instanceof GoUint ? value.value : value));
  },
  identify: () => false,
});

/** `!!timestamp`: the text as written, as go-yaml gives it for untyped decoding. */
const goTimestampTag = defineScalarTag<string>('tag:yaml.org,2002:timestamp', {
  resolve: (source) => source,
  identify: () => false,
});

/** A scalar as Go's `%+#v` prints it in sigs.k8s.io/yaml's key error (containers as `...`). */
function goSharpValue(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (value instanceof GoFloat) return goFloat(value.value);
  if (value instanceof GoUint) return `0x${value.value.toString(16)}`;
  return '...';
}

/** A mapping key as sigs.k8s.io/yaml writes it into JSON, or why it refuses the key. */
export function jsonKey(key: unknown, value: unknown): string | KeyError {
  if (typeof key === 'string') return key;
  if (typeof key === 'number' || typeof key === 'bigint') return String(key);
  if (typeof key === 'boolean') return key ? 'true' : 'false';
  if (key instanceof GoFloat) return floatKey(key.value);
  if (key === null) return new KeyError(`unsupported map key of type: %!s(<nil>), key: <nil>, value: ${goSharpValue(value)}`);
  if (key instanceof GoUint) return new KeyError(`unsupported map key of type: uint64, key: ${goSharpValue(key)}, value: ${goSharpValue(value)}`);
  return new KeyError('unsupported map key');
}

/** Why a mapping key cannot become a JSON key, in sigs.k8s.io/yaml's words. */
export class KeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyError';
  }
}

/** A scalar's JSON value: floats and integers beyond 2^53 become plain numbers. */
export function jsonScalar(value: GoFloat | GoUint | bigint): number {
  return value instanceof GoFloat ? value.value : Number(value instanceof GoUint ? value.value : value);
}

/** A float key as sigs.k8s.io/yaml writes it: Go's float32 `%g`, with YAML's names for the infinities and NaN. */
function floatKey(x: number): string {
  const text = goFloat(x, 32);
  return text === '+Inf' ? '.inf' : text === '-Inf' ? '-.inf' : text === 'NaN' ? '.nan' : text;
}

/**
 * Mappings as plain objects whose keys are already the JSON keys sigs.k8s.io/yaml writes. Repeated
 * keys overwrite (go-yaml's map decoding keeps the last); `__proto__` is an own property.
 */
const goMapTag = defineMappingTag<Record<string, unknown>>('tag:yaml.org,2002:map', {
  create: () => ({}),
  identify: () => false,
  addPair: (container, key, value) => {
    const name = jsonKey(key, value);
    // Thrown rather than returned: js-yaml would prefix its line, which kube's message has not.
    if (name instanceof KeyError) throw name;
    if (name === '__proto__') Object.defineProperty(container, name, { value, enumerable: true, configurable: true, writable: true });
    else container[name] = value;
    return '';
  },
  has: (container, key) => {
    const name = jsonKey(key, undefined);
    return typeof name === 'string' && Object.prototype.hasOwnProperty.call(container, name);
  },
  keys: (container) => Object.keys(container),
  get: (container, key) => {
    const name = jsonKey(key, undefined);
    return typeof name === 'string' && Object.prototype.hasOwnProperty.call(container, name) ? container[name] : null;
  },
});

/** js-yaml's YAML 1.1 schema with go-yaml v2's numbers, timestamps and mapping keys. */
export const GO_YAML_SCHEMA: Schema = YAML11_SCHEMA.withTags(goIntTag, goFloatTag, goTimestampTag, goMapTag);

/**
 * A plain key's form in go-yaml's duplicate-key report (Go's `%#v` of the resolved key) and its
 * identity for finding repeats: keys of different Go types never repeat one another.
 */
export function goKeyIdentity(raw: string): { form: string; identity: string } | undefined {
  const c = raw.charCodeAt(0);
  const numeric = c === 0x2b || c === 0x2d || c === 0x2e || (c >= 0x30 && c <= 0x39);
  if (!numeric) return undefined;
  const value = resolveNumber(raw);
  if (value === NOT_RESOLVED) return undefined;
  if (value instanceof GoFloat) return { form: goFloat(value.value), identity: `float:${value.value}` };
  if (value instanceof GoUint) return { form: `0x${value.value.toString(16)}`, identity: `uint:${value.value}` };
  return { form: String(value), identity: `int:${value}` };
}
