import { badRequest, methodNotAllowed } from '../api/errors.js';
import type { IncludeObject } from '../codec/representations.js';
import type { OutputFormat } from '../codec/negotiation.js';
import { listOptionsFrom } from '../api/request-options.js';
import { writeList, writeObject } from '../codec/response-writer.js';
import { type ResourceRequest, outputFor, scaleKind } from './context.js';
import { type Obj } from '../api/object-util.js';
import { servedJsonForAsync, servedJsonsFor } from '../conversion/converting-io.js';
import type { Getter, Lister } from '../rest/rest-verbs.js';
import { selectionFor } from '../rest/selection.js';
import { selectConverted, selectsAfterConversion, storageSelectionFor } from '../rest/converted-selection.js';

const READABLE_SUBRESOURCES = new Set(['', 'status', 'scale', 'ephemeralcontainers', 'resize', 'approval']);

/** `includeObject` of Table output (400 as kube's Table conversion answers); ignored for other output. */
function includeObjectParam(query: URLSearchParams, format: OutputFormat): IncludeObject {
  const v = query.get('includeObject');
  if (v === null || v === '' || v === 'Metadata') return 'Metadata';
  if (v === 'None' || v === 'Object') return v;
  if (format.representation !== 'Table') return 'Metadata';
  throw badRequest(
    `Unable to convert to Table as requested: includeObject: Invalid value: ${JSON.stringify(v)}: must be 'Metadata', 'Object', 'None', or empty`,
  );
}

/** GET of one object (or of its status/scale view). */
export async function handleGet(r: ResourceRequest, store: Getter): Promise<void> {
  if (!READABLE_SUBRESOURCES.has(r.ri.subresource)) throw methodNotAllowed();
  const format = outputFor(r, 'object', ...scaleKind(r));
  const json = await store.get(r.ri.name, r.query);
  if (r.ri.subresource === 'scale') {
    // The scale store answers the Scale itself.
    writeObject(r.res, 200, json, format);
    return;
  }
  const includeObject = includeObjectParam(r.query, format);
  writeObject(
    r.res,
    200,
    await servedJsonForAsync(r.server.catalog.customResources, json, r.apiVersion, format.representation, includeObject),
    format,
    includeObject,
  );
}

/** LIST of a collection: consistent, optionally chunked with `limit`/`continue`, filtered by selectors. */
export async function handleList(r: ResourceRequest, store: Lister): Promise<void> {
  if (r.ri.subresource !== '') throw methodNotAllowed();
  const opts = listOptionsFrom(r.query, false, r.server.featureGates.WatchList);
  const format = outputFor(r, 'list');
  const includeObject = includeObjectParam(r.query, format);
  const selection = selectionFor(r, opts);
  // Field selectors on a webhook-converting kind select on the converted objects: a page may then
  // hold fewer than `limit` items, and the remaining count is unknown.
  const afterConversion = selectsAfterConversion(r.server.catalog.customResources, r.info, opts.fieldSelector);
  const page = await store.list(opts, afterConversion ? storageSelectionFor(r, opts.labelSelector) : selection);
  const metadata: Obj = { resourceVersion: page.resourceVersion };
  if (page.continue !== undefined) metadata.continue = page.continue;
  if (page.remainingItemCount !== undefined && !afterConversion) metadata.remainingItemCount = page.remainingItemCount;
  const items = afterConversion
    ? await selectConverted(r.server.catalog.customResources, page.items, r.apiVersion, selection)
    : await servedJsonsFor(r.server.catalog.customResources, page.items, r.apiVersion, format.representation, includeObject);
  const envelope = { kind: r.info.listKind ?? `${r.info.kind}List`, apiVersion: r.apiVersion, metadata, typedItems: r.info.custom === true };
  await writeList(r.res, envelope, items, format, includeObject);
}
