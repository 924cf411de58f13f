import { randomUUID } from 'node:crypto';
import { ApiError, type StatusCause } from '../api/errors.js';
import { isObject, stringField, type Obj } from '../api/object-util.js';
import { validateAnnotations, validateLabels } from '../validation/object-meta.js';
import { WebhookCallError, type WebhookClient, type WebhookClientConfig } from '../webhook/webhook-client.js';
import type { ConversionWebhook } from '../catalog/custom-resource-facts.js';

/**
 * CRD conversion webhooks (`spec.conversion.strategy: Webhook`), as kube's webhook converter
 * (apiextensions-apiserver pkg/apiserver/conversion/webhook_converter.go) calls them: one
 * ConversionReview (v1 or v1beta1, the first of the CRD's `conversionReviewVersions` that is known)
 * per batch of objects, sent only for the objects not already in the desired version. The answer is
 * checked as kube checks it (review kind and version, uid, result, object count, each object's
 * apiVersion, kind, name, namespace and uid); converted objects keep the original metadata except
 * labels and annotations, which the webhook may change (validated). Every failure is a 500 Status
 * without reason whose message is kube's (`conversion webhook for GROUP/VERSION, Kind=KIND failed: ...`).
 * Which CRD converts by which webhook is a fact of the catalogue (catalog/custom-resource-facts.ts).
 */

/** kube's REST client timeout for conversion webhooks. */
const CONVERSION_TIMEOUT_MS = 30_000;

/** Go's `%T` of a JSON value, as kube's messages name types. */
function goType(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return '[]interface {}';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int64' : 'float64';
  return 'map[string]interface {}';
}

function meta(obj: Obj): Obj {
  return isObject(obj.metadata) ? obj.metadata : {};
}

/** Field errors as Go's `ErrorList.ToAggregate().Error()` reads. */
function aggregate(causes: StatusCause[]): string {
  const texts = [...new Set(causes.map((c) => `${c.field ?? ''}: ${c.message ?? ''}`))];
  return texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`;
}

/** kube's validateConvertedObject: what the webhook may not change. */
function identityChange(original: Obj, converted: Obj): string | undefined {
  if (stringField(original, 'kind') !== stringField(converted, 'kind'))
    return `must have the same kind: ${stringField(original, 'kind')} != ${stringField(converted, 'kind')}`;
  const [a, b] = [meta(original), meta(converted)];
  for (const [field, label] of [
    ['name', 'name'],
    ['namespace', 'namespace'],
    ['uid', 'UID'],
  ] as const) {
    if (stringField(a, field) !== stringField(b, field)) return `must have the same ${label}: ${stringField(a, field)} != ${stringField(b, field)}`;
  }
  return undefined;
}

/**
 * kube's restoreObjectMeta: `converted` takes the original's metadata, with the labels and annotations
 * the webhook answered (validated when they changed). Returns the error text, if any.
 */
function restoreMetadata(original: Obj, converted: Obj): string | undefined {
  if (!('metadata' in converted)) return 'missing metadata in converted object';
  const answered = converted.metadata;
  if (!isObject(answered)) return `invalid metadata of type ${goType(answered)} in converted object`;
  const restored: Obj = isObject(original.metadata) ? structuredClone(original.metadata) : {};
  for (const field of ['labels', 'annotations'] as const) {
    const value = answered[field];
    if (value === undefined || value === null) {
      delete restored[field];
      continue;
    }
    if (!isObject(value)) return `invalid metadata.${field} of type ${goType(value)} in converted object`;
    const before = isObject(restored[field]) ? restored[field] : {};
    let changed = Object.keys(before).length !== Object.keys(value).length;
    for (const [k, v] of Object.entries(value)) {
      if (typeof v !== 'string') return `metadata.${field}[${k}] must be a string, but is ${goType(v)} in converted object`;
      if (before[k] !== v) changed = true;
    }
    if (changed) {
      const causes = field === 'labels' ? validateLabels(value, 'metadata.labels') : validateAnnotations(value, 'metadata.annotation');
      if (causes.length > 0) return aggregate(causes);
    }
    restored[field] = value;
  }
  converted.metadata = restored;
  return undefined;
}

const REVIEW_GROUP = 'apiextensions.k8s.io';

/** The converted objects of a ConversionReview answer, or the error text kube gives for it. */
function convertedObjectsOf(answer: unknown, reviewVersion: string, uid: string): unknown[] | string {
  const review = isObject(answer) ? answer : {};
  const kind = stringField(review, 'kind');
  const apiVersion = stringField(review, 'apiVersion');
  if (kind !== 'ConversionReview' || (apiVersion !== `${REVIEW_GROUP}/v1` && apiVersion !== `${REVIEW_GROUP}/v1beta1`)) {
    return `no kind "${kind}" is registered for version "${apiVersion}" in scheme "pkg/runtime/scheme.go:111"`;
  }
  if (reviewVersion === 'v1' && apiVersion !== `${REVIEW_GROUP}/v1`) {
    return `expected webhook response of ${REVIEW_GROUP}/v1, Kind=ConversionReview, got ${apiVersion}, Kind=ConversionReview`;
  }
  const response = review.response;
  if (!isObject(response)) return 'no response provided';
  if (reviewVersion === 'v1' && stringField(response, 'uid') !== uid)
    return `expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(stringField(response, 'uid'))}`;
  const result = isObject(response.result) ? response.result : {};
  if (stringField(result, 'status') !== 'Success') {
    const message = stringField(result, 'message');
    return message !== '' ? message : `response.result.status was '${stringField(result, 'status')}', not 'Success'`;
  }
  return Array.isArray(response.convertedObjects) ? (response.convertedObjects as unknown[]) : [];
}

function failure(message: string): ApiError {
  return new ApiError(500, '', message);
}

/**
 * `objects` (custom resources of one kind) in `desiredApiVersion`, converted by `conversion`'s webhook
 * in one ConversionReview; objects already in that version are not sent. `batch` words errors as
 * kube's list conversion does (`converted object at index N`). Rejects with a 500 ApiError.
 */
export async function convertByWebhook(conversion: ConversionWebhook, objects: readonly Obj[], desiredApiVersion: string, batch = false): Promise<Obj[]> {
  const toSend = objects.filter((o) => o.apiVersion !== desiredApiVersion);
  if (toSend.length === 0) return [...objects];
  const first = toSend[0];
  const gvk = `${stringField(first, 'apiVersion')}, Kind=${stringField(first, 'kind')}`;
  const reviewVersion = conversion.reviewVersions.find((v) => v === 'v1' || v === 'v1beta1');
  if (reviewVersion === undefined) throw failure('no supported conversion review versions');
  const uid = randomUUID();
  const body = {
    kind: 'ConversionReview',
    apiVersion: `${REVIEW_GROUP}/${reviewVersion}`,
    request: { uid, desiredAPIVersion: desiredApiVersion, objects: toSend },
    response: { uid: '', convertedObjects: null, result: { metadata: {} } },
  };
  let answer: unknown;
  try {
    answer = await conversion.post(body, CONVERSION_TIMEOUT_MS);
  } catch (err) {
    const why = err instanceof WebhookCallError || err instanceof Error ? err.message : String(err);
    throw failure(`conversion webhook for ${gvk} failed: ${why}`);
  }
  const converted = convertedObjectsOf(answer, reviewVersion, uid);
  if (typeof converted === 'string') throw failure(`conversion webhook for ${gvk} failed: ${converted}`);
  if (converted.length !== toSend.length) throw failure(`conversion webhook for ${gvk} returned ${converted.length} objects, expected ${toSend.length}`);
  const invalid = batch ? 'invalid converted object at index' : 'invalid object at index';
  const out = new Map<Obj, Obj>();
  toSend.forEach((original, i) => {
    const value = converted[i];
    if (!isObject(value)) throw failure(`conversion webhook for ${gvk} returned ${invalid} ${i}: Object 'Kind' is missing in '${JSON.stringify(value)}'`);
    const result = structuredClone(value);
    if (stringField(result, 'apiVersion') !== desiredApiVersion) {
      throw failure(
        `conversion webhook for ${gvk} returned ${invalid} ${i}: invalid groupVersion (expected ${desiredApiVersion}, received ${stringField(result, 'apiVersion')})`,
      );
    }
    if (stringField(result, 'kind') !== stringField(original, 'kind')) {
      throw failure(
        `conversion webhook for ${gvk} returned ${invalid} ${i}: invalid kind (expected ${stringField(original, 'kind')}, received ${stringField(result, 'kind')})`,
      );
    }
    const changed = identityChange(original, result);
    if (changed !== undefined) throw failure(`conversion webhook for ${gvk} returned ${batch ? `${invalid} ${i}` : 'invalid object'}: ${changed}`);
    const badMeta = restoreMetadata(original, result);
    if (badMeta !== undefined) throw failure(`conversion webhook for ${gvk} returned invalid metadata${batch ? ` in object at index ${i}` : ''}: ${badMeta}`);
    out.set(original, result);
  });
  return objects.map((o) => out.get(o) ?? o);
}

/**
 * The webhook conversion a stored CRD object asks for (`spec.conversion.strategy: Webhook`), or
 * undefined for `None`; its `post` calls the CRD's clientConfig through `client`. kube treats a
 * caBundle of only whitespace as none.
 */
export function webhookConversionOfCrd(crd: Obj, client: WebhookClient): ConversionWebhook | undefined {
  const spec = isObject(crd.spec) ? crd.spec : {};
  const conversion = isObject(spec.conversion) ? spec.conversion : {};
  if (conversion.strategy !== 'Webhook' || !isObject(conversion.webhook)) return undefined;
  const webhook = conversion.webhook;
  const config = isObject(webhook.clientConfig) ? webhook.clientConfig : {};
  const clientConfig: WebhookClientConfig = {};
  if (typeof config.url === 'string') clientConfig.url = config.url;
  if (isObject(config.service)) {
    const s = config.service;
    clientConfig.service = { namespace: stringField(s, 'namespace'), name: stringField(s, 'name'), port: typeof s.port === 'number' ? s.port : 443 };
    if (typeof s.path === 'string') clientConfig.service.path = s.path;
  }
  if (typeof config.caBundle === 'string' && Buffer.from(config.caBundle, 'base64').toString('utf8').trim() !== '') clientConfig.caBundle = config.caBundle;
  const reviewVersions = Array.isArray(webhook.conversionReviewVersions)
    ? webhook.conversionReviewVersions.filter((v): v is string => typeof v === 'string')
    : [];
  return {
    crdName: stringField(isObject(crd.metadata) ? crd.metadata : {}, 'name'),
    reviewVersions,
    post: (review, timeoutMs) => client.post(clientConfig, review, { timeoutMs }),
  };
}
