import type { Obj } from '../api/object-util.js';

/** The schema of one served version of a CRD, with the key its compiled validator is cached under. */
export interface CustomSchema {
  /** CRD uid, resourceVersion and version name: changes whenever the CRD does. */
  cacheKey: string;
  /** `openAPIV3Schema`; undefined when the version has none. */
  schema: Obj | undefined;
}

const schemas = new Map<string, CustomSchema>();

/**
 * Records (or, with undefined, forgets) the schema objects of KIND in APIVERSION are validated,
 * pruned and defaulted by. The CRD registrar keeps this in step with the served resources.
 */
export function setCustomSchema(apiVersion: string, kind: string, schema: CustomSchema | undefined): void {
  const key = `${apiVersion}/${kind}`;
  if (schema === undefined) schemas.delete(key);
  else schemas.set(key, schema);
}

/** The schema of KIND in APIVERSION, if a CRD serves it. */
export function customSchemaOf(apiVersion: string, kind: string): CustomSchema | undefined {
  return schemas.get(`${apiVersion}/${kind}`);
}
