import type { ServerResponse } from 'node:http';

/**
 * Responses whose connection a handler took over (an upgrade spliced to a backend, a WebSocket), as
 * Go's http.Hijacker hands a connection away in kube-apiserver. Such a response is never written or
 * finished through Node: it counts as switched protocols (101, what kube's audit records) from the
 * moment it is taken, and it emits 'close' once the connection closes, so that everything waiting
 * for the request's end (metrics, audit, the long-running gauge) sees it end then.
 */
const hijacked = new WeakSet<ServerResponse>();
const listeners = new WeakMap<ServerResponse, (() => void)[]>();

/** Marks `res` as hijacked now; it emits 'close' when `connection` closes. Idempotent. */
export function markHijacked(res: ServerResponse, connection: { once(event: 'close', listener: () => void): unknown }): void {
  if (hijacked.has(res)) return;
  hijacked.add(res);
  res.statusCode = 101;
  connection.once('close', () => res.emit('close'));
  const waiting = listeners.get(res);
  listeners.delete(res);
  for (const listener of waiting ?? []) listener();
}

/** Whether a handler took `res`'s connection over. */
export function isHijacked(res: ServerResponse): boolean {
  return hijacked.has(res);
}

/** Calls `listener` once, when `res`'s connection is taken over (never, if it is not). */
export function onHijacked(res: ServerResponse, listener: () => void): void {
  if (hijacked.has(res)) {
    listener();
    return;
  }
  const waiting = listeners.get(res);
  if (waiting === undefined) listeners.set(res, [listener]);
  else waiting.push(listener);
}
