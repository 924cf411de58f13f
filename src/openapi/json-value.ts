/** The type of a parsed JSON object; read it with the accessors of src/api/values.ts. */
export type JsonObject = { [key: string]: unknown };
