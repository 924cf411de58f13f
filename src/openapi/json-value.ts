/** A parsed JSON object whose members are still unchecked. */
export type JsonObject = { [key: string]: unknown };

/** Narrows a parsed JSON value to a plain object (not an array, not null). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The member KEY of VALUE when VALUE is an object and the member is an object; otherwise undefined. */
export function objectMember(value: unknown, key: string): JsonObject | undefined {
  if (!isJsonObject(value)) return undefined;
  const member = value[key];
  return isJsonObject(member) ? member : undefined;
}

/** The member KEY of VALUE when it is a string; otherwise undefined. */
export function stringMember(value: unknown, key: string): string | undefined {
  if (!isJsonObject(value)) return undefined;
  const member = value[key];
  return typeof member === 'string' ? member : undefined;
}
