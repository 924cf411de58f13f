import { badRequest, unsupportedMediaType } from '../api/errors.js';
import { parseMediaType } from '../codec/media-type.js';
import { parseJsonSafely } from '../codec/safe-json.js';
import { applyPatch } from '../patch/apply-patch.js';
import { schemaForDefinition } from '../schema/openapi-schema.js';
import type { ResourceRequest } from './context.js';

/** PATCH media types kube-apiserver accepts (server-side apply has its own issue). */
export const PATCH_MEDIA_TYPES = [
  'application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json',
];

const SCALE_DEFINITION = 'io.k8s.api.autoscaling.v1.Scale';

/**
 * Applies the request's patch body to `view` (the stored object or its Scale view) and returns the
 * patched value. 415 for media types other than the three patch types.
 */
export function patchObject(r: ResourceRequest, contentTypeHeader: string, view: unknown, body: Buffer): unknown {
  const type = parseMediaType(contentTypeHeader).type;
  if (!PATCH_MEDIA_TYPES.includes(type)) throw unsupportedMediaType(type, [...PATCH_MEDIA_TYPES, 'application/apply-patch+yaml']);
  let patch: unknown;
  try {
    patch = parseJsonSafely(body.toString('utf8'));
  } catch (err) {
    throw badRequest(`error decoding patch: ${err instanceof Error ? err.message : String(err)}`);
  }
  const definition = r.ri.subresource === 'scale' ? SCALE_DEFINITION : r.info.definition;
  const schema = r.info.custom === true || definition === '' ? undefined : schemaForDefinition(definition);
  return applyPatch(type, view, patch, schema);
}
