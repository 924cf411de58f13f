import { isObject, type Obj } from '../api/object-util.js';
import { convertByWebhook, webhookConversionOf } from '../conversion/webhook-conversion.js';
import { apiVersionOf, type ResourceInfo } from '../registry/resource-types.js';
import { typeFor } from './track-write.js';
import type { VersionView, VersionViews } from './version-comparison.js';

/**
 * For an update of a custom resource whose CRD converts by webhook: the views of the other versions
 * its managers were recorded at, with `live` and `next` converted there by the webhook beforehand
 * (one ConversionReview per version), so that those managers lose what the write changes as seen at
 * their own version, as structured-merge-diff's Updater decides. `before` is the object compared
 * (an apply compares `live` without managedFields); the views also answer for copies of `before`
 * and `next`. Undefined when nothing needs it; a version whose conversion fails keeps the request's
 * comparison.
 */
export async function webhookVersionViews(info: ResourceInfo, live: Obj, next: Obj, before: Obj = live): Promise<VersionViews | undefined> {
  if (info.custom !== true) return undefined;
  const own = apiVersionOf(info.group, info.version);
  const conversion = webhookConversionOf(own, info.kind);
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
      const type = typeFor({ ...info, version: apiVersion.slice(apiVersion.lastIndexOf('/') + 1), definition: '' });
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
    } catch {
      // As for kinds without a view: the request's comparison applies to this version.
    }
  }
  return (apiVersion) => views.get(apiVersion);
}
