import { ApiError } from '../api/errors.js';
import { listOptionsFrom, type ListOptions } from '../api/request-options.js';
import { negotiateOutput } from '../codec/negotiation.js';
import { compareResourceVersions } from '../storage/resource-version.js';
import { StorageError, type ChangeEvent, type StoredObject } from '../storage/storage.js';
import { WatchWriter } from '../watch/watch-writer.js';
import { recordWatchDropped, recordWatchEventSent } from '../metrics/metrics.js';
import {
  bookmarkFrame,
  encodedEvent,
  encodingKey,
  errorFrame,
  objectFrame,
  parsedObjects,
  type WatchEncoding,
  type WatchEventType,
} from '../watch/event-encoding.js';
import { supportsProtobuf, type ResourceRequest } from './context.js';
import { storageErrorToApi } from '../store/storage-errors.js';
import { listResourceVersion, waitForResourceVersion } from '../store/read-consistency.js';
import { selectionFor } from '../selectors/selection.js';

/** Initial events are handed to the socket in chunks of about this size, waiting for it to drain. */
const INITIAL_CHUNK_BYTES = 256 * 1024;

interface WatchParams {
  resourceVersion: string | undefined;
  sendInitialEvents: boolean | undefined;
  allowBookmarks: boolean;
  timeoutMs: number;
}

function parseParams(r: ResourceRequest, opts: ListOptions): WatchParams {
  const rv = listResourceVersion(opts);
  let timeoutMs: number;
  // As kube-apiserver: timeoutSeconds ends the watch after that long (at once when negative); zero or
  // absent means the server's randomised minimum request timeout.
  if (opts.timeoutSeconds !== undefined && opts.timeoutSeconds !== 0) {
    timeoutMs = Math.max(0, Math.min(opts.timeoutSeconds, 2_000_000)) * 1000;
  } else {
    const min = r.services.minRequestTimeoutSeconds;
    timeoutMs = Math.round((min + Math.random() * min) * 1000);
  }
  return { resourceVersion: rv, sendInitialEvents: opts.sendInitialEvents, allowBookmarks: opts.allowWatchBookmarks, timeoutMs };
}

/**
 * WATCH: a chunked stream of JSON events, one per line, flushed per event. Starts with synthetic
 * ADDED events when asked (rv unset or "0", or sendInitialEvents=true), then delivers every change
 * after its start version exactly once and in order. Ends on timeout, client disconnect, server
 * shutdown, or when the client falls too far behind.
 */
export async function handleWatch(r: ResourceRequest): Promise<void> {
  if (r.ri.subresource !== '') throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
  if (!r.info.verbs.includes('watch')) throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
  const format = negotiateOutput(r.req.headers.accept, 'watch', false, supportsProtobuf(r));
  let encoding: WatchEncoding = { representation: format.representation, protobuf: format.encoding === 'protobuf' };
  let frameKey = encodingKey(r.apiVersion, encoding);
  /** After the first Table event, the rest carry no column definitions. */
  const headersSent = (): void => {
    if (encoding.representation !== 'Table' || encoding.noHeaders === true) return;
    encoding = { ...encoding, noHeaders: true };
    frameKey = encodingKey(r.apiVersion, encoding);
  };
  const opts = listOptionsFrom(r.query, true, r.services.featureGates.WatchList);
  const params = parseParams(r, opts);
  const selection = selectionFor(r, opts, r.ri.name);
  const nsPrefix = r.info.namespaced && r.ri.namespace !== '' ? `${r.ri.namespace}/` : '';
  const storage = r.services.storage;
  const res = r.res;

  const abort = new AbortController();
  const signal = abort.signal;
  const stop = (): void => abort.abort();
  r.req.on('close', stop);
  r.res.on('close', stop);
  r.services.shutdownSignal.addEventListener('abort', stop, { once: true });

  // Decide the start point and the initial state.
  let startRv: string;
  let initial: StoredObject[] = [];
  const synthetic = params.sendInitialEvents ?? (params.resourceVersion === undefined || params.resourceVersion === '0');
  try {
    if (synthetic) {
      if (params.resourceVersion !== undefined && params.resourceVersion !== '0') await waitForResourceVersion(r, params.resourceVersion, params.timeoutMs);
      const listed = await storage.list(r.type, {
        namespace: nsPrefix ? r.ri.namespace : undefined,
        filter: selection.matchesStored,
      });
      startRv = listed.resourceVersion;
      initial = listed.items;
    } else if (params.resourceVersion === undefined || params.resourceVersion === '0') {
      startRv = await storage.currentResourceVersion(r.type);
    } else {
      startRv = params.resourceVersion;
    }
  } catch (err) {
    throw storageErrorToApi(err, r, r.ri.name);
  }

  res.status(200);
  res.setHeader('Content-Type', format.contentType);
  res.setHeader('Cache-Control', 'no-cache, private');
  // A watch from a given version sends its headers once storage accepted it, so a storage outage
  // is an HTTP error (503) rather than a 200 stream with an ERROR event.
  if (synthetic) res.flushHeaders();

  let lastRv = startRv;
  let closed = false;
  const metricResource = r.info.resource;
  const out = new WatchWriter(
    res,
    r.services.maxWatchBacklogBytes,
    () => {
      recordWatchDropped(metricResource);
      finish();
    },
    (frames) => recordWatchEventSent(metricResource, frames),
  );
  const finish = (): void => {
    if (closed) return;
    closed = true;
    abort.abort();
    clearTimeout(timeoutTimer);
    clearTimeout(bookmarkTimer);
    r.services.shutdownSignal.removeEventListener('abort', stop);
    out.end();
    res.end();
  };
  signal.addEventListener('abort', finish, { once: true });

  const write = (frame: string | Buffer): void => {
    if (!closed) out.push(frame);
  };

  const sendBookmark = (annotations?: Record<string, string>): void => {
    if (params.allowBookmarks) write(bookmarkFrame(r.info.kind, r.apiVersion, lastRv, encoding, annotations));
  };

  const timeoutTimer = setTimeout(() => {
    sendBookmark();
    finish();
  }, params.timeoutMs);
  let bookmarkTimer: NodeJS.Timeout | undefined;
  const scheduleBookmark = (): void => {
    if (!params.allowBookmarks || closed) return;
    bookmarkTimer = setTimeout(
      () => {
        sendBookmark();
        scheduleBookmark();
      },
      r.services.bookmarkIntervalMs * (0.75 + Math.random() * 0.25),
    );
  };

  // Initial state streams with backpressure: at most about one socket buffer per watcher in memory.
  for (const item of initial) {
    if (closed) return;
    write(objectFrame('ADDED', item.json, r.apiVersion, encoding));
    headersSent();
    if (out.queuedBytes >= INITIAL_CHUNK_BYTES) await out.ready();
  }
  initial = [];
  if (params.sendInitialEvents === true) sendBookmark({ 'k8s.io/initial-events-end': 'true' });
  scheduleBookmark();
  if (signal.aborted) finish();

  const onEvent = (event: ChangeEvent): void => {
    if (closed) return;
    if (compareResourceVersions(event.resourceVersion, lastRv) > 0) lastRv = event.resourceVersion;
    if (nsPrefix && !event.key.startsWith(nsPrefix)) return;
    let type: WatchEventType | undefined = event.type;
    if (selection.active) {
      const { current, previous } = parsedObjects(event);
      const now = selection.matches(current);
      const before = previous !== undefined && selection.matches(previous);
      if (event.type === 'ADDED') type = now ? 'ADDED' : undefined;
      else if (event.type === 'DELETED') type = before ? 'DELETED' : undefined;
      else type = now && before ? 'MODIFIED' : now ? 'ADDED' : before ? 'DELETED' : undefined;
    }
    if (type === undefined) return;
    write(encodedEvent(event, type, r.apiVersion, encoding, frameKey));
    headersSent();
  };

  const goneLine = (err: StorageError, from: string): string | Buffer =>
    errorFrame(
      {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `too old resource version: ${from} (${err.resourceVersion ?? ''})`,
        reason: 'Expired',
        code: 410,
      },
      encoding,
    );
  const onStorageError = (err: StorageError): void => {
    write(goneLine(err, lastRv));
    finish();
  };
  try {
    await storage.watch(r.type, startRv, onEvent, signal, onStorageError);
    if (!res.headersSent && !closed) res.flushHeaders();
  } catch (err) {
    if (!res.headersSent && !(err instanceof StorageError && err.code === 'Gone')) {
      // Nothing was sent yet: end this watch's timers and answer with the error itself.
      closed = true;
      clearTimeout(timeoutTimer);
      clearTimeout(bookmarkTimer);
      r.services.shutdownSignal.removeEventListener('abort', stop);
      abort.abort();
      throw storageErrorToApi(err, r, r.ri.name);
    }
    if (err instanceof StorageError && err.code === 'Gone') {
      write(goneLine(err, startRv));
    } else {
      const apiErr = storageErrorToApi(err, r, r.ri.name);
      const status =
        apiErr instanceof ApiError
          ? apiErr.toStatus()
          : { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: String(apiErr), reason: 'InternalError', code: 500 };
      write(errorFrame(status as unknown as Record<string, unknown>, encoding));
    }
    finish();
  }
}
