/** The type of a parsed JSON object; read it with the accessors of src/api/values.ts. */
export type JsonObject = { [key: string]: unknown };

// The shared isObject under its former name, still imported by src/controllers/crd-registrar.ts.
export { isObject as isJsonObject } from '../api/values.js';
