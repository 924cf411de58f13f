/**
 * Watches of a client asked to reconnect elsewhere. When a worker moves an HTTP/2 client off itself
 * (GOAWAY, see SecureServer.shedSession), the client's next requests go to another worker while
 * the watches it had open would stay here until they time out, minutes later: its informers would
 * see its own writes only after they crossed from one worker to the other through Redis. Ending
 * those watches at the move sends them after the requests: the client opens them again from the
 * version it had, on its new connection.
 */
const moves = new WeakMap<object, AbortController>();

/** The HTTP/2 connection a request came on (Node's compatibility request keeps its stream), if any. */
function sessionOf(req: object): object | undefined {
  const stream = (req as { stream?: { session?: object } }).stream;
  return stream?.session ?? undefined;
}

/** Aborts when the client of `req`'s HTTP/2 connection is asked to reconnect; undefined over HTTP/1.1. */
export function connectionMovedSignal(req: object): AbortSignal | undefined {
  const session = sessionOf(req);
  if (session === undefined) return undefined;
  let controller = moves.get(session);
  if (controller === undefined) {
    controller = new AbortController();
    moves.set(session, controller);
  }
  return controller.signal;
}

/** Ends the watches of the HTTP/2 connection `session`, whose client was just asked to reconnect. */
export function connectionMoved(session: object): void {
  moves.get(session)?.abort();
}
