import { ApiError, badRequest, notFound } from '../api/errors.js';
import type { ListOptions } from '../api/request-options.js';
import { objectKey } from '../api/object-util.js';
import type { Selection } from './selection.js';
import { CONTINUE_TOKEN_LIFETIME_MS, decodeContinue, encodeContinue, expiredContinue, LATEST_VERSION, type ContinueState } from '../storage/continue-token.js';
import { decodeStored, listReadError } from './corrupt-object.js';
import { getSemantic, listSemantic, waitForResourceVersion, type ReadSemantic } from './read-consistency.js';
import type { ResourceTarget } from './server-context.js';
import { storageErrorToApi, withStorage } from './storage-errors.js';
import { StorageError } from '../api/storage-error.js';
import type { StoredObject } from '../storage/storage.js';

/** One page of a list: stored objects' JSON (storage version) and the list metadata kube reports. */
export interface ListPage {
  resourceVersion: string;
  /** Continue token of the next page, when there is one. */
  continue?: string;
  /** Objects after this page, reported for unfiltered chunked lists as kube reports them. */
  remainingItemCount?: number;
  items: string[];
}

/**
 * Reads one object at the version the query asks for (SPEC 4.9: unset = most recent, "0" = any,
 * other = not older than, waiting for it or 504). Returns its stored JSON; 404 when absent.
 */
export async function getObject(target: ResourceTarget, name: string, query: URLSearchParams): Promise<string> {
  const semantic = getSemantic(query);
  if (semantic.kind === 'NotOlderThan') await waitForResourceVersion(target, semantic.resourceVersion);
  const key = objectKey(target.info.namespaced ? target.ri.namespace : '', name);
  const stored = await withStorage(target, name, () => target.server.storage.get(target.type, key));
  if (!stored) throw notFound({ group: target.info.group, resource: target.info.resource }, name);
  // An object whose stored bytes do not decode is kube's corrupt-object 500, never served as it is.
  if (!decodedObjects.has(stored)) {
    decodeStored(target, stored);
    decodedObjects.add(stored);
  }
  return stored.json;
}

/**
 * Stored objects a GET found decodable. The embedded store hands out one object per version, so
 * its objects are decoded by the first GET only; Redis reads a new one each time.
 */
const decodedObjects = new WeakSet<StoredObject>();

/**
 * The list's starting point: from a continue token (validated, signed, not expired) or from the
 * query's version semantic. `expired`: the token is too old (410 after expireSnapshot).
 */
function startOf(target: ResourceTarget, opts: ListOptions): { listRv?: string; afterKey?: string; issuedAt: number; token?: ContinueState; expired?: true } {
  const now = target.server.now();
  if (opts.continue === '') return { issuedAt: now };
  const rv = opts.resourceVersion ?? '';
  if (rv !== '' && rv !== '0') throw badRequest('specifying resource version is not allowed when using continue');
  const state = decodeContinue(opts.continue);
  // A token that continues at the latest state reads a new snapshot, and its next pages read that one.
  if (state.resourceVersion === LATEST_VERSION) return { afterKey: state.startAfter, issuedAt: now, token: state };
  if (now - state.issuedAt > CONTINUE_TOKEN_LIFETIME_MS) return { issuedAt: now, token: state, expired: true };
  return { listRv: state.resourceVersion, afterKey: state.startAfter, issuedAt: state.issuedAt, token: state };
}

/**
 * The 410 of a continue token that expired. kube's tokens expire when etcd compacts past their
 * revision, and its compactor writes a key of its own each time, so the latest state the 410's
 * token reads is always at a newer version than the expired one. Versions here are per type: when
 * nothing of the type was written since the token's snapshot, the type's version is moved on
 * (Storage.advanceVersion) so that the rest of the list is read at a version of its own as well.
 */
async function expireSnapshot(target: ResourceTarget, token: ContinueState): Promise<ApiError> {
  const storage = target.server.storage;
  await withStorage(target, '', async () => {
    if ((await storage.currentResourceVersion(target.type)) === token.resourceVersion) await storage.advanceVersion(target.type);
  });
  return expiredContinue(token, target.server.now());
}

/**
 * Lists a collection consistently, one page at a time with `limit`/`continue`, filtered by
 * `selection`. Continue tokens carry the snapshot's version, so every page reads the same snapshot;
 * a token or exact version older than the history answers 410.
 */
export async function listObjects(target: ResourceTarget, opts: ListOptions, selection: Selection): Promise<ListPage> {
  const start = startOf(target, opts);
  if (start.expired && start.token !== undefined) throw await expireSnapshot(target, start.token);
  let listRv = start.listRv;
  if (opts.continue === '') {
    const semantic: ReadSemantic = listSemantic(opts);
    if (semantic.kind === 'NotOlderThan') await waitForResourceVersion(target, semantic.resourceVersion);
    if (semantic.kind === 'Exact') listRv = semantic.resourceVersion;
  }
  const listOnce = () =>
    target.server.storage.list(target.type, {
      namespace: target.info.namespaced && target.ri.namespace !== '' ? target.ri.namespace : undefined,
      afterKey: start.afterKey,
      limit: opts.limit > 0 ? opts.limit : undefined,
      resourceVersion: listRv,
      filter: selection.matchesStored,
    });
  let result;
  try {
    result = await listOnce();
  } catch (err) {
    if (err instanceof StorageError && err.code === 'Gone') {
      if (start.token !== undefined) throw expiredContinue(start.token, target.server.now());
      throw new ApiError(410, 'Expired', `too old resource version: ${listRv ?? ''} (${err.resourceVersion ?? ''})`, {});
    }
    if (!(err instanceof StorageError && err.code === 'TooLarge' && listRv !== undefined)) throw storageErrorToApi(err, target, '');
    await waitForResourceVersion(target, listRv);
    result = await withStorage(target, '', listOnce);
  }
  const unreadable = listReadError(target, result.items);
  if (unreadable) throw unreadable;
  const page: ListPage = { resourceVersion: result.resourceVersion, items: result.items.map((i) => i.json) };
  const last = result.items[result.items.length - 1];
  if (result.hasMore && last) {
    page.continue = encodeContinue({ resourceVersion: result.resourceVersion, startAfter: last.key, issuedAt: start.issuedAt });
    if (!selection.active && result.remaining !== undefined) page.remainingItemCount = result.remaining;
  }
  return page;
}
