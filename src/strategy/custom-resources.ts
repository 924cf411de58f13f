import type { StatusCause } from '../api/errors.js';
import { stringField, type Obj } from '../api/object-util.js';
import type { KindStrategy } from './kind-strategy.js';
import { defaultCustomResource } from '../crd/cr-defaulting.js';
import { pruneCustomResource } from '../crd/cr-pruning.js';
import { validateBySchema } from '../crd/cr-schema-validation.js';
import { validateByRules } from '../crd/cr-validation-rules.js';
import type { CustomResourceFacts, CustomSchema } from '../catalog/custom-resource-facts.js';

function schemaOf(facts: CustomResourceFacts, obj: Obj): (CustomSchema & { schema: Obj }) | undefined {
  const custom = facts.schemaOf(stringField(obj, 'apiVersion'), stringField(obj, 'kind'));
  return custom?.schema === undefined ? undefined : { cacheKey: custom.cacheKey, schema: custom.schema };
}

/**
 * Validates a custom resource against its CRD version's `openAPIV3Schema` (from `facts`), as kube's
 * schema validation does and words it (metadata is validated by the generic write path). Objects of versions
 * without a schema pass. On update, findings on unchanged values are ratcheted (dropped) as kube does.
 * `subresource` is '' for the object, 'status' or 'scale' for those writes:
 * kube validates the whole object in each case.
 */
export function validateCustomResource(obj: Obj, old: Obj | undefined, _subresource: string, facts: CustomResourceFacts): StatusCause[] {
  const custom = schemaOf(facts, obj);
  if (custom === undefined) return [];
  const causes = validateBySchema(obj, custom.cacheKey, custom.schema, old);
  return [...causes, ...validateByRules(obj, old, custom.cacheKey, custom.schema, causes)];
}

/** Applies the `default`s of the object's CRD version schema in place (kube's structural defaulting). */
export function defaultCustomResourceObject(obj: Obj, _version: string, facts: CustomResourceFacts): void {
  const custom = schemaOf(facts, obj);
  if (custom !== undefined) defaultCustomResource(obj, custom.schema);
}

/**
 * Prunes a decoded custom resource body of KIND in APIVERSION in place by its schema in `facts`, as
 * kube's decoder does: the fields the schema does not declare are removed and returned (sorted paths
 * such as `spec.foo`), for fieldValidation to report. Versions without a schema keep every field.
 */
export function pruneCustomResourceBody(facts: CustomResourceFacts, apiVersion: string, kind: string, obj: Obj): string[] {
  const custom = facts.schemaOf(apiVersion, kind);
  return custom?.schema === undefined ? [] : pruneCustomResource(obj, custom.schema);
}

/**
 * The KindStrategy of every custom resource, after kube's customresource strategy: generation tracked,
 * a status subresource keeps status out of main writes (resource-strategy.ts decides both for custom
 * types), defaults and validation from the CRD version's schema.
 */
export const customResources: KindStrategy = {
  tracksGeneration: true,
  defaults: defaultCustomResourceObject,
  validate: validateCustomResource,
};
