import { methodNotAllowed } from '../api/errors.js';
import { negotiateOutput } from '../codec/negotiation.js';
import type { Watcher } from '../rest/rest-verbs.js';
import { INITIAL_EVENTS_END, WatchBookmarks } from '../watch/bookmarks.js';
import { watchEventFilter } from '../watch/event-filter.js';
import { sendInitialEvents } from '../watch/initial-events.js';
import { WatchEncoder } from '../watch/watch-encoder.js';
import { signalWatchInitialized } from '../flowcontrol/watch-initialization.js';
import { WatchLifetime } from '../watch/watch-lifetime.js';
import { watchOptionsFrom } from '../watch/watch-options.js';
import { WatchOutput } from '../watch/watch-output.js';
import { WatchProgress } from '../watch/watch-progress.js';
import { stopWhenRemoved } from '../watch/watch-removal.js';
import { connectionMovedSignal, countWatch } from '../watch/connection-moves.js';
import { followChanges } from '../watch/watch-subscription.js';
import { supportsProtobuf, type ResourceRequest } from './context.js';
import { selectionFor } from '../rest/selection.js';
import { selectConvertedStored, selectsAfterConversion, storageSelectionFor } from '../rest/converted-selection.js';
import { printerOf, watchIndexFieldOf } from '../strategy/strategies.js';
import { watchTrigger } from '../watch/watch-trigger.js';

/**
 * WATCH: a chunked stream of events (JSON lines or Protobuf frames), flushed in short batches.
 * Starts with synthetic ADDED events when asked (rv unset or "0", or sendInitialEvents=true), then
 * delivers every change after its start version exactly once and in order. Ends on timeout, client
 * disconnect, server shutdown, lost history (410 ERROR event), when the client falls too far
 * behind, when its HTTP/2 client is moved to another worker, or (custom resources) when the type stops being served. Invalid options answer 400/422 and a storage outage before the stream starts 503.
 */
export async function handleWatch(r: ResourceRequest, store: Watcher): Promise<void> {
  if (r.ri.subresource !== '' || !r.info.verbs.includes('watch')) throw methodNotAllowed();
  const negotiated = negotiateOutput(r.req.headers.accept, 'watch', {
    protobuf: () => supportsProtobuf(r),
    cbor: r.server.featureGates.CBORServingAndStorage === true,
    restfulRoute: r.info.custom !== true,
  });
  const format = negotiated.representation === 'Table' ? { ...negotiated, printer: printerOf(r.info) } : negotiated;
  const options = watchOptionsFrom(r.query, r.server.featureGates.WatchList, r.server.minRequestTimeoutSeconds);
  const selection = selectionFor(r, options.list, r.ri.name);
  // Field selectors on a webhook-converting kind select on the objects converted to the watch's version.
  const afterConversion = selectsAfterConversion(r.server.catalog.customResources, r.info, options.list.fieldSelector);
  const namespace = r.info.namespaced && r.ri.namespace !== '' ? r.ri.namespace : undefined;
  // A custom resource's watches end when its CRD goes, as kube ends them when it drops the CRD's storage.
  const removed = r.info.custom === true ? r.server.catalog.removedSignal(r.info.group, r.info.version, r.info.resource) : undefined;
  const removal = removed === undefined ? undefined : new AbortController();
  // A watch also ends when its client is asked to reconnect to another worker (connection-moves.ts).
  const moved = connectionMovedSignal(r.req);
  const stops = [r.server.shutdownSignal, ...(removal === undefined ? [] : [removal.signal]), ...(moved === undefined ? [] : [moved])];
  const lifetime = new WatchLifetime(stops, r.req, r.res);
  countWatch(r.req, lifetime.signal);
  const filter = afterConversion ? storageSelectionFor(r, options.list.labelSelector).matchesStored : selection.matchesStored;
  const feed = await store
    .watch({ resourceVersion: options.resourceVersion, initialEvents: options.initialEvents, timeoutMs: options.timeoutMs }, filter)
    .catch((err: unknown) => {
      lifetime.abandon();
      throw err;
    });
  // A watch from a given version sends its headers once storage accepted it, so a storage outage
  // is an HTTP error (503) rather than a 200 stream with an ERROR event.
  const out = new WatchOutput(r.res, lifetime, {
    contentType: format.contentType,
    flushHeaders: options.initialEvents,
    maxBacklogBytes: r.server.maxWatchBacklogBytes,
    metricResource: r.info.resource,
  });
  const encoder = new WatchEncoder(r.info.kind, r.apiVersion, format, r.server.catalog.customResources);
  const progress = new WatchProgress(feed.resourceVersion);
  if (removed !== undefined && removal !== undefined)
    stopWhenRemoved(removed, removal, {
      storage: r.server.storage,
      type: r.type,
      progress,
      produced: () => out.produced(),
      ended: lifetime.signal,
    });
  const bookmarks = new WatchBookmarks(options.allowBookmarks, r.server.bookmarkIntervalMs, encoder, progress, out);
  lifetime.begin(options.timeoutMs, () => bookmarks.send());
  const initial = afterConversion ? await selectConvertedStored(r.server.catalog.customResources, feed.initial, r.apiVersion, selection) : feed.initial;
  if (!(await sendInitialEvents(initial, encoder, out, lifetime))) return;
  if (options.sendInitialEvents === true) bookmarks.send(INITIAL_EVENTS_END);
  // Flow control held the watch's seats while it initialised; the open stream holds none.
  signalWatchInitialized(r.res);
  bookmarks.start(lifetime.signal);
  if (lifetime.signal.aborted) lifetime.end();
  await followChanges(r, feed, {
    lifetime,
    out,
    encoder,
    progress,
    filter: watchEventFilter(namespace, selection, afterConversion ? { apiVersion: r.apiVersion, facts: r.server.catalog.customResources } : undefined),
    ...(!afterConversion &&
      selection.exactField !== undefined &&
      selection.exactField.field === watchIndexFieldOf(r.info) && { trigger: watchTrigger(selection.exactField, (clock) => progress.follow(clock)) }),
  });
}
