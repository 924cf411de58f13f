/**
 * kube's watch initialization signal (apf_context.go WatchInitialized): flow control holds a
 * watch's seats until the watch has sent its initial state, then lets them go while the watch stays
 * open. The flow-control filter registers the release under the request's response object; the
 * watch handler signals once its initial events are written. Keyed weakly: a response that never
 * signals (not a watch, or no flow control) leaves nothing behind.
 */
const pending = new WeakMap<object, () => void>();

/** Runs `release` when the watch answering with `response` has initialised (at most once). */
export function onWatchInitialized(response: object, release: () => void): void {
  pending.set(response, release);
}

/** The watch answering with `response` has sent its initial state. */
export function signalWatchInitialized(response: object): void {
  const release = pending.get(response);
  if (release === undefined) return;
  pending.delete(response);
  release();
}
