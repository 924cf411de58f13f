import { canonicalize, type Obj } from '../api/object-util.js';
import { withReadDefaults } from '../crd/cr-read-defaults.js';
import { pruneCustomResource } from '../crd/cr-pruning.js';
import { servedJsonFor, servedObject, toStorageVersion } from './version-conversion.js';
import { convertByWebhook } from './webhook-conversion.js';
import type { ConversionWebhook, CustomResourceFacts } from '../catalog/custom-resource-facts.js';

/**
 * The asynchronous forms of the storage-boundary conversions (version-conversion.ts) that handlers,
 * stores and watches call: for custom resources whose CRD converts by webhook they call the webhook
 * (one ConversionReview per object or per list page), then prune to the target version's schema and
 * apply its defaults, as kube's decoding of custom resources does. Every other kind takes the
 * synchronous path unchanged (one size check when no CRD converts by webhook). Each function takes
 * the catalogue's CustomResourceFacts, which say which CRD converts by which webhook and which schema
 * each served version has. Rejections are the webhook's 500 ApiErrors.
 */

const HEAD = /^\{"kind":"([^"\\]*)","apiVersion":"([^"\\]*)"/;

/** The webhook conversion a stored JSON object needs to be served at `apiVersion`, if any. */
function conversionNeeded(facts: CustomResourceFacts, json: string, apiVersion: string): ConversionWebhook | undefined {
  if (!facts.anyConversion()) return undefined;
  const head = HEAD.exec(json);
  if (head === null || head[2] === apiVersion) return undefined;
  return facts.conversionOf(head[2], head[1]);
}

/** Whether stored JSON must go through its CRD's conversion webhook to be served at `apiVersion`. */
export function needsWebhookConversion(facts: CustomResourceFacts, json: string, apiVersion: string): boolean {
  return conversionNeeded(facts, json, apiVersion) !== undefined;
}

/** A converted object as kube decodes it in `apiVersion`: canonical order, pruned to the version's schema. */
function settle(facts: CustomResourceFacts, obj: Obj, apiVersion: string): Obj {
  const kind = typeof obj.kind === 'string' ? obj.kind : '';
  const out = canonicalize(obj, kind, apiVersion);
  const schema = facts.schemaOf(apiVersion, kind)?.schema;
  if (schema !== undefined) pruneCustomResource(out, schema);
  return out;
}

/** Stored JSON objects as served at `apiVersion` in `representation` (see `servedJsonFor`), converted in one batch. */
export async function servedJsonsFor(
  facts: CustomResourceFacts,
  jsons: readonly string[],
  apiVersion: string,
  representation: string,
  includeObject = 'Metadata',
): Promise<string[]> {
  const pending: number[] = [];
  let conversion: ConversionWebhook | undefined;
  jsons.forEach((json, i) => {
    const needed = conversionNeeded(facts, json, apiVersion);
    if (needed === undefined) return;
    conversion = needed;
    pending.push(i);
  });
  if (conversion === undefined) return jsons.map((json) => servedJsonFor(facts, json, apiVersion, representation, includeObject));
  const converted = await convertByWebhook(
    conversion,
    pending.map((i) => JSON.parse(jsons[i]) as Obj),
    apiVersion,
    jsons.length > 1,
  );
  const out = jsons.map((json) => servedJsonFor(facts, json, apiVersion, representation, includeObject));
  // Metadata-only answers (PartialObjectMetadata, Tables) are built from the converted object too:
  // kube decodes custom resources in the request's version before anything else.
  pending.forEach((index, k) => {
    out[index] = withReadDefaults(facts, JSON.stringify(settle(facts, converted[k], apiVersion)));
  });
  return out;
}

/** One stored JSON object as served at `apiVersion` in `representation`. */
export async function servedJsonForAsync(
  facts: CustomResourceFacts,
  json: string,
  apiVersion: string,
  representation: string,
  includeObject = 'Metadata',
): Promise<string> {
  if (conversionNeeded(facts, json, apiVersion) === undefined) return servedJsonFor(facts, json, apiVersion, representation, includeObject);
  return (await servedJsonsFor(facts, [json], apiVersion, representation, includeObject))[0];
}

/** A stored object (parsed) as served at `apiVersion` (custom resources with their read defaults). */
export async function servedObjectAsync(facts: CustomResourceFacts, stored: Obj, apiVersion: string): Promise<Obj> {
  const kind = typeof stored.kind === 'string' ? stored.kind : '';
  const from = typeof stored.apiVersion === 'string' ? stored.apiVersion : '';
  const conversion = from === apiVersion ? undefined : facts.conversionOf(from, kind);
  if (conversion === undefined) {
    const served = servedObject(stored, apiVersion);
    // Custom resources are defaulted as kube decodes them from storage (a default the stored object lacks shows).
    if (facts.schemaOf(apiVersion, kind) === undefined) return served;
    const json = JSON.stringify(served);
    const defaulted = withReadDefaults(facts, json);
    return defaulted === json ? served : (JSON.parse(defaulted) as Obj);
  }
  const [converted] = await convertByWebhook(conversion, [stored], apiVersion);
  return JSON.parse(withReadDefaults(facts, JSON.stringify(settle(facts, converted, apiVersion)))) as Obj;
}

/**
 * The object to store for `obj`, an object of `info`'s kind and version: custom resources go to the
 * CRD's storage version (by webhook, or relabelled for `conversion: None`).
 */
export async function toStorageVersionAsync(
  facts: CustomResourceFacts,
  obj: Obj,
  info: { group: string; version: string; kind: string; custom?: boolean; storageVersion?: string },
): Promise<Obj> {
  if (info.custom !== true || info.storageVersion === undefined || info.storageVersion === info.version) return toStorageVersion(obj, info);
  const storageApiVersion = `${info.group}/${info.storageVersion}`;
  const conversion = facts.conversionOf(storageApiVersion, info.kind);
  if (conversion === undefined) return { ...obj, apiVersion: storageApiVersion };
  const [converted] = await convertByWebhook(conversion, [obj], storageApiVersion);
  return settle(facts, converted, storageApiVersion);
}

/** How long a watch event waits for its conversion webhook to succeed before its watches end with the error. */
const WATCH_CONVERSION_PATIENCE_MS = 5 * 60_000;
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5_000;

/**
 * `attempt` (a conversion of a watch event) retried with backoff until it succeeds, as kube's watch
 * cache keeps decoding a change until the webhook converts it: a failing webhook delays the
 * watch's events, which arrive in order once it recovers. After five minutes of failures the last
 * error is thrown (the watch ends with it).
 */
export async function untilConverted<T>(attempt: () => Promise<T>): Promise<T> {
  const started = Date.now();
  let delay = RETRY_FIRST_MS;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (Date.now() - started + delay > WATCH_CONVERSION_PATIENCE_MS) throw err;
      await new Promise((resolve) => setTimeout(resolve, delay).unref());
      delay = Math.min(delay * 2, RETRY_MAX_MS);
    }
  }
}
