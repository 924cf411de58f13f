import { listOptionsFrom, queryResourceVersion, type ListOptions } from '../api/request-options.js';

/** The longest `timeoutSeconds` honoured, as kube-apiserver caps it. */
const MAX_TIMEOUT_SECONDS = 2_000_000;

/** A watch request's options, validated and resolved to what the watch does. */
export interface WatchOptions {
  /** The request's list options (selectors among them), validated as kube validates a watch's. */
  list: ListOptions;
  /** The start version in canonical decimal form; undefined when the request leaves it unset. */
  resourceVersion: string | undefined;
  /** The `sendInitialEvents` parameter as given (the initial-events-end bookmark is sent only when true). */
  sendInitialEvents: boolean | undefined;
  /** Whether the client accepts BOOKMARK events. */
  allowBookmarks: boolean;
  /**
   * Whether the watch starts with synthetic ADDED events for the current state: as asked by
   * `sendInitialEvents`, otherwise when resourceVersion is unset or "0" (legacy watch semantics).
   */
  initialEvents: boolean;
  /** How long the watch stays open. */
  timeoutMs: number;
}

/**
 * A watch request's options from its query (400 for a malformed resourceVersion or number, 422 on
 * ListOptions for invalid combinations, before storage is touched). As kube-apiserver:
 * `timeoutSeconds` ends the watch after that long (at once when negative); zero or absent means a
 * random 1-2x of the server's minimum request timeout, so that watches do not all end together.
 */
export function watchOptionsFrom(query: URLSearchParams, watchListEnabled: boolean, minRequestTimeoutSeconds: number): WatchOptions {
  const list = listOptionsFrom(query, true, watchListEnabled);
  const resourceVersion =
    list.resourceVersion === undefined
      ? undefined
      : queryResourceVersion(new URLSearchParams({ resourceVersion: list.resourceVersion }), 'invalid resource version: ');
  let timeoutMs: number;
  if (list.timeoutSeconds !== undefined && list.timeoutSeconds !== 0) {
    timeoutMs = Math.max(0, Math.min(list.timeoutSeconds, MAX_TIMEOUT_SECONDS)) * 1000;
  } else {
    timeoutMs = Math.round((minRequestTimeoutSeconds + Math.random() * minRequestTimeoutSeconds) * 1000);
  }
  return {
    list,
    resourceVersion,
    sendInitialEvents: list.sendInitialEvents,
    allowBookmarks: list.allowWatchBookmarks,
    initialEvents: list.sendInitialEvents ?? (resourceVersion === undefined || resourceVersion === '0'),
    timeoutMs,
  };
}
