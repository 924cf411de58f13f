import { isObject, type Obj } from '../api/object-util.js';

/** A stored object's JSON decoded, or undefined when it is not a JSON object with metadata (corrupt). */
export function decodeStoredJson(json: string): Obj | undefined {
  try {
    const value: unknown = JSON.parse(json);
    return isObject(value) && isObject(value.metadata) ? value : undefined;
  } catch {
    return undefined;
  }
}
