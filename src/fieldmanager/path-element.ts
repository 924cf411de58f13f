/**
 * Path elements of structured-merge-diff's field paths, with its total order and its string form
 * (`f:name`, `k:{"name":"c","protocol":"TCP"}`, `v:"x"`, `i:3`), as fieldsV1 keys spell them.
 */

/** One step of a field path: a struct field or map key, a keyed list item, a set item or a list index. */
export type PathElement =
  | { readonly kind: 'field'; readonly name: string }
  | { readonly kind: 'key'; readonly fields: readonly (readonly [string, unknown])[] }
  | { readonly kind: 'value'; readonly value: unknown }
  | { readonly kind: 'index'; readonly index: number };

/** A field (struct member or map key) element. */
export function fieldElement(name: string): PathElement {
  return { kind: 'field', name };
}

/** A field element with its string form (its fieldsV1 key). */
export interface FieldEntry {
  readonly pe: PathElement;
  readonly key: string;
}

/**
 * Field elements made before, by name: an object's field names recur in every object of its kind,
 * and a comparison visits each field of both objects. Names of at most FIELD_NAME_MAX_LENGTH
 * characters, at most FIELD_ENTRIES_BOUND of them (emptied when full: map keys come from clients).
 */
const fieldEntries = new Map<string, FieldEntry>();
const FIELD_ENTRIES_BOUND = 4096;
const FIELD_NAME_MAX_LENGTH = 128;

/** The element of field (or map key) `name` and its string form, shared: never mutate it. */
export function fieldEntry(name: string): FieldEntry {
  const known = fieldEntries.get(name);
  if (known !== undefined) return known;
  const entry: FieldEntry = { pe: fieldElement(name), key: `f:${name}` };
  if (name.length <= FIELD_NAME_MAX_LENGTH) {
    if (fieldEntries.size >= FIELD_ENTRIES_BOUND) fieldEntries.clear();
    fieldEntries.set(name, entry);
  }
  return entry;
}

/** A keyed list item; the key fields are sorted by name, as structured-merge-diff sorts them. */
export function keyElement(fields: readonly (readonly [string, unknown])[]): PathElement {
  const sorted = [...fields].sort((a, b) => compareStrings(a[0], b[0]));
  return { kind: 'key', fields: sorted };
}

/** Go's byte-wise string order (UTF-8), which differs from UTF-16 order only past the BMP. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  // Below U+D800 a code unit is a code point whose UTF-8 bytes sort as the code point does, and an
  // equal prefix encodes equally: the first differing unit decides. Surrogates (pairs, or lone
  // ones that UTF-8 writes as U+FFFD) and the units after them take the byte comparison.
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x >= 0xd800 || y >= 0xd800) return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length < b.length ? -1 : 1;
}

function typeRank(v: unknown): number {
  if (typeof v === 'number') return 0;
  if (typeof v === 'string') return 2;
  if (typeof v === 'boolean') return 3;
  if (Array.isArray(v)) return 4;
  if (typeof v === 'object' && v !== null) return 5;
  return 6;
}

/** structured-merge-diff's value order: numbers < strings < booleans < lists < maps < null. */
export function compareValues(a: unknown, b: unknown): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = compareValues(a[i], b[i]);
      if (c !== 0) return c;
    }
    return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
  }
  if (ra === 5) {
    const ao = a as Record<string, unknown>;
    const bo = b as Record<string, unknown>;
    const ak = Object.keys(ao).sort(compareStrings);
    const bk = Object.keys(bo).sort(compareStrings);
    for (let i = 0; i < Math.min(ak.length, bk.length); i++) {
      const ka = ak[i];
      const kb = bk[i];
      const c = compareStrings(ka, kb);
      if (c !== 0) return c;
      const v = compareValues(ao[ka], bo[kb]);
      if (v !== 0) return v;
    }
    return ak.length === bk.length ? 0 : ak.length < bk.length ? -1 : 1;
  }
  return 0;
}

const KIND_RANK = { field: 0, key: 1, value: 2, index: 3 } as const;

/** structured-merge-diff's PathElement order: fields, then keys, then values, then indexes. */
export function comparePathElements(a: PathElement, b: PathElement): number {
  if (a.kind !== b.kind) return KIND_RANK[a.kind] < KIND_RANK[b.kind] ? -1 : 1;
  switch (a.kind) {
    case 'field':
      return compareStrings(a.name, (b as { name: string }).name);
    case 'key': {
      const bf = (b as { fields: readonly (readonly [string, unknown])[] }).fields;
      for (let i = 0; ; i++) {
        const x = a.fields[i];
        const y = bf[i];
        if (x === undefined && y === undefined) return 0;
        if (x === undefined) return -1;
        if (y === undefined) return 1;
        const c = compareStrings(x[0], y[0]);
        if (c !== 0) return c;
        const v = compareValues(x[1], y[1]);
        if (v !== 0) return v;
      }
    }
    case 'value':
      return compareValues(a.value, (b as { value: unknown }).value);
    case 'index': {
      const bi = (b as { index: number }).index;
      return a.index < bi ? -1 : a.index > bi ? 1 : 0;
    }
  }
}

/**
 * JSON as Go's encoder writes a value inside a path element: map keys sorted, `<`, `>`, `&`,
 * U+2028 and U+2029 escaped.
 */
const GO_ESCAPED = /[<>&\u2028\u2029]/;

export function goJson(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  const text = (typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(sortKeys(value))) ?? 'null';
  if (!GO_ESCAPED.test(text)) return text;
  return text.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort(compareStrings)) out[k] = sortKeys((value as Record<string, unknown>)[k]);
    return out;
  }
  return value;
}

/** The element's fieldsV1 key: `f:name` (raw), `k:{...}`, `v:...`, `i:N`. */
export function serializePathElement(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `f:${pe.name}`;
    case 'key':
      return `k:{${pe.fields.map(([name, v]) => `${goJson(name)}:${goJson(v)}`).join(',')}}`;
    case 'value':
      return `v:${goJson(pe.value)}`;
    case 'index':
      return `i:${pe.index}`;
  }
}

/** Why a fieldsV1 key could not be read; `unknownType` keys are skipped, as kube skips them. */
export class PathElementError extends Error {
  constructor(
    message: string,
    readonly unknownType = false,
  ) {
    super(message);
  }
}

/** Reads a fieldsV1 key back into its element; throws PathElementError on malformed keys. */
export function deserializePathElement(s: string): PathElement {
  if (s.length < 2) throw new PathElementError('key must be 2 characters long:');
  if (s[1] !== ':') throw new PathElementError(`missing colon: ${s}`);
  const rest = s.slice(2);
  switch (s[0]) {
    case 'f':
      return fieldElement(rest);
    case 'v':
      return { kind: 'value', value: parseJson(rest) };
    case 'k': {
      const parsed = parseJson(rest);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new PathElementError(`key is not an object: ${s}`);
      return keyElement(Object.entries(parsed));
    }
    case 'i': {
      if (!/^[+-]?\d+$/.test(rest)) throw new PathElementError(`strconv.Atoi: parsing ${JSON.stringify(rest)}: invalid syntax`);
      return { kind: 'index', index: Number(rest) };
    }
    default:
      throw new PathElementError('unknown path element type', true);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new PathElementError(err instanceof Error ? err.message : String(err));
  }
}
