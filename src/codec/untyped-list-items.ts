/**
 * Items of a built-in type's list, as kube-apiserver encodes them: without `kind` and `apiVersion`
 * (the list's items are typed Go structs whose TypeMeta is empty), in JSON, YAML and CBOR alike.
 * Custom resources' lists keep both on every item (kube serves them unstructured), as do watch
 * events, Tables and PartialObjectMetadataLists.
 */

/** `{"kind":"…","apiVersion":"…"` or the reverse at the start of a stored object, with the comma after it. */
const TYPE_META_FIRST = /^\{(?:"kind":"(?:[^"\\]|\\.)*","apiVersion":"(?:[^"\\]|\\.)*"|"apiVersion":"(?:[^"\\]|\\.)*","kind":"(?:[^"\\]|\\.)*")(,?)/;

/**
 * Where a stored object's text goes on after its leading `kind` and `apiVersion` (and the comma
 * after them): `{` and the text from there is the object without them. Undefined when the text
 * does not start with both.
 */
export function typeMetaEnd(json: string): number | undefined {
  const m = TYPE_META_FIRST.exec(json);
  return m === null ? undefined : m[0].length;
}

/**
 * The JSON text of an object without its top-level `kind` and `apiVersion`. Stored objects start
 * with both, which are cut off the text; any other text is parsed and written again.
 */
export function withoutTypeMeta(json: string): string {
  const end = typeMetaEnd(json);
  if (end !== undefined) return `{${json.slice(end)}`;
  const value: unknown = JSON.parse(json);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return json;
  const rest: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  delete rest.kind;
  delete rest.apiVersion;
  return JSON.stringify(rest);
}

/** An object without its top-level `kind` and `apiVersion` (a copy; `obj` is left as it is). */
export function objectWithoutTypeMeta(obj: Record<string, unknown>): Record<string, unknown> {
  const rest = { ...obj };
  delete rest.kind;
  delete rest.apiVersion;
  return rest;
}
