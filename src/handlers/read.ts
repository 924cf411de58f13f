import { ApiError, badRequest, notFound } from '../api/errors.js';
import type { IncludeObject } from '../codec/representations.js';
import type { OutputFormat } from '../codec/negotiation.js';
import { listOptionsFrom } from '../api/request-options.js';
import { writeList, writeObject } from '../codec/response-writer.js';
import { StorageError } from '../storage/storage.js';
import { type ResourceRequest, outputFor, scaleKind } from './context.js';
import { storageErrorToApi, withStorage } from '../store/storage-errors.js';
import { CONTINUE_TOKEN_LIFETIME_MS, decodeContinue, encodeContinue, expiredContinue } from '../storage/continue-token.js';
import { objectKey, type Obj } from '../api/object-util.js';
import { servedJsonFor } from '../conversion/version-conversion.js';
import { getSemantic, listSemantic, waitForResourceVersion, type ReadSemantic } from './read-consistency.js';
import { toScale } from './scale.js';
import { decodeStored, listReadError } from '../store/corrupt-object.js';
import { selectionFor } from './selection.js';

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
export async function handleGet(r: ResourceRequest): Promise<void> {
  if (!READABLE_SUBRESOURCES.has(r.ri.subresource))
    throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
  const format = outputFor(r, 'object', ...scaleKind(r));
  const semantic = getSemantic(r.query);
  if (semantic.kind === 'NotOlderThan') await waitForResourceVersion(r, semantic.resourceVersion);
  const key = objectKey(r.info.namespaced ? r.ri.namespace : '', r.ri.name);
  const stored = await withStorage(r, r.ri.name, () => r.services.storage.get(r.type, key));
  if (!stored) throw notFound({ group: r.info.group, resource: r.info.resource }, r.ri.name);
  // An object whose stored bytes do not decode is kube's corrupt-object 500, never served as it is.
  const obj = decodeStored(r, stored);
  if (r.ri.subresource === 'scale') {
    writeObject(r.res, 200, toScale(r, obj), format);
    return;
  }
  const includeObject = includeObjectParam(r.query, format);
  writeObject(r.res, 200, servedJsonFor(stored.json, r.apiVersion, format.representation, includeObject), format, includeObject);
}

/** LIST of a collection: consistent, optionally chunked with `limit`/`continue`, filtered by selectors. */
export async function handleList(r: ResourceRequest): Promise<void> {
  if (r.ri.subresource !== '') throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
  const opts = listOptionsFrom(r.query, false, r.services.featureGates.WatchList);
  const format = outputFor(r, 'list');
  const includeObject = includeObjectParam(r.query, format);
  const limit = opts.limit > 0 ? opts.limit : undefined;
  const selection = selectionFor(r, opts);
  const continueToken = opts.continue;
  let listRv: string | undefined;
  let afterKey: string | undefined;
  if (continueToken !== '') {
    const rv = opts.resourceVersion ?? '';
    if (rv !== '' && rv !== '0') throw badRequest('specifying resource version is not allowed when using continue');
    const state = decodeContinue(continueToken);
    if (r.services.now() - state.issuedAt > CONTINUE_TOKEN_LIFETIME_MS) throw expiredContinue();
    listRv = state.resourceVersion;
    afterKey = state.startAfter;
  } else {
    const semantic: ReadSemantic = listSemantic(opts);
    if (semantic.kind === 'NotOlderThan') await waitForResourceVersion(r, semantic.resourceVersion);
    if (semantic.kind === 'Exact') listRv = semantic.resourceVersion;
  }
  let result;
  try {
    result = await r.services.storage.list(r.type, {
      namespace: r.info.namespaced && r.ri.namespace !== '' ? r.ri.namespace : undefined,
      afterKey,
      limit,
      resourceVersion: listRv,
      filter: selection.matchesStored,
    });
  } catch (err) {
    if (err instanceof StorageError && err.code === 'Gone') {
      if (continueToken !== '') throw expiredContinue();
      throw new ApiError(410, 'Expired', `too old resource version: ${listRv ?? ''} (${err.resourceVersion ?? ''})`, {});
    }
    if (err instanceof StorageError && err.code === 'TooLarge' && listRv !== undefined) {
      await waitForResourceVersion(r, listRv);
      result = await withStorage(r, '', () =>
        r.services.storage.list(r.type, {
          namespace: r.info.namespaced && r.ri.namespace !== '' ? r.ri.namespace : undefined,
          afterKey,
          limit,
          resourceVersion: listRv,
          filter: selection.matchesStored,
        }),
      );
    } else throw storageErrorToApi(err, r, '');
  }
  const unreadable = listReadError(r, result.items);
  if (unreadable) throw unreadable;
  const metadata: Obj = { resourceVersion: result.resourceVersion };
  const last = result.items[result.items.length - 1];
  if (result.hasMore && last) {
    metadata.continue = encodeContinue({
      resourceVersion: result.resourceVersion,
      startAfter: last.key,
      issuedAt: continueToken !== '' ? decodeContinue(continueToken).issuedAt : r.services.now(),
    });
    if (!selection.active && result.remaining !== undefined) metadata.remainingItemCount = result.remaining;
  }
  const items = result.items.map((i) => servedJsonFor(i.json, r.apiVersion, format.representation, includeObject));
  await writeList(r.res, { kind: `${r.info.kind}List`, apiVersion: r.apiVersion, metadata }, items, format, includeObject);
}
