import { ApiError } from '../api/errors.js';
import { isObject, type Obj } from '../api/object-util.js';
import { undeclaredFields } from './custom-smd-type.js';
import { convertByWebhook } from '../conversion/webhook-conversion.js';
import type { CustomResourceFacts } from '../catalog/custom-resource-facts.js';
import { apiVersionOf, type ResourceInfo } from '../api/resource-info.js';
import { typeFor } from './track-write.js';
import { VersionConversionError, type VersionView, type VersionViews } from './version-comparison.js';
import { DEDUCED } from './smd-type.js';

class UndeclaredFieldsError extends Error {}

/**
 * For a write of a custom resource whose CRD converts by webhook (as `facts` say): the views of the other versions
 * its managers were recorded at, with the objects compared (`before`, by default `live`, and
 * `next`) converted there by the webhook beforehand (one ConversionReview per version), so that
 * those managers lose, or conflict on, what the write changes as seen at their own version, as
 * structured-merge-diff's Updater decides. The views also answer for copies of `before` and `next`
 * (an apply compares copies). A version whose conversion fails, or whose converted objects have
 * fields its schema does not declare, gives a view that throws VersionConversionError (an update
 * is then stored without managedFields, as kube's UpdateNoErrors does); with `strict` (apply) the
 * write fails instead with kube's 500: the webhook's error, or `.spec.x: field not declared in
 * schema`. Undefined when nothing needs it.
 */
export async function webhookVersionViews(
  facts: CustomResourceFacts,
  info: ResourceInfo,
  live: Obj,
  next: Obj,
  before: Obj = live,
  strict = false,
): Promise<VersionViews | undefined> {
  if (info.custom !== true) return undefined;
  const own = apiVersionOf(info.group, info.version);
  const conversion = facts.conversionOf(own, info.kind);
  if (conversion === undefined) return undefined;
  const entries = isObject(live.metadata) && Array.isArray(live.metadata.managedFields) ? live.metadata.managedFields : [];
  const versions = new Set<string>();
  for (const e of entries) {
    const v = isObject(e) && typeof e.apiVersion === 'string' ? e.apiVersion : '';
    if (v !== own && v.startsWith(`${info.group}/`)) versions.add(v);
  }
  if (versions.size === 0) return undefined;
  const views = new Map<string, VersionView>();
  let beforeJson: string | undefined;
  let nextJson: string | undefined;
  for (const apiVersion of versions) {
    try {
      const [liveThere, nextThere] = await convertByWebhook(conversion, [before, next], apiVersion, true);
      const type = typeFor({ ...info, version: apiVersion.slice(apiVersion.lastIndexOf('/') + 1), definition: '' }, facts);
      const undeclared = [...undeclaredFields(liveThere, type), ...undeclaredFields(nextThere, type)];
      if (undeclared.length > 0) {
        const problems = [...new Set(undeclared)];
        throw new UndeclaredFieldsError(problems.length === 1 ? problems[0] : `errors:\n${problems.map((p) => `  ${p}`).join('\n')}`);
      }
      views.set(apiVersion, {
        type,
        convert: (value) => {
          if (value === before || value === live) return liveThere;
          if (value === next) return nextThere;
          // An apply compares copies of the objects converted beforehand.
          const json = JSON.stringify(value);
          if (json === (beforeJson ??= JSON.stringify(before))) return liveThere;
          if (json === (nextJson ??= JSON.stringify(next))) return nextThere;
          throw new Error('object not converted beforehand');
        },
      });
    } catch (err) {
      // An apply fails with the 500; an update's managedFields cannot be tracked (kube's UpdateNoErrors
      // stores the object without them).
      if (strict && err instanceof UndeclaredFieldsError) throw new ApiError(500, '', err.message);
      if (strict || !(err instanceof ApiError || err instanceof UndeclaredFieldsError)) throw err;
      const failed = err;
      views.set(apiVersion, {
        type: DEDUCED,
        convert: () => {
          throw new VersionConversionError(failed.message);
        },
      });
    }
  }
  return (apiVersion) => views.get(apiVersion);
}
