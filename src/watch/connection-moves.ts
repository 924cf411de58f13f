import { setMaxListeners } from 'node:events';

/**
 * Watches of a client asked to reconnect elsewhere. When a worker moves an HTTP/2 client off itself
 * (GOAWAY, see SecureServer.shedSession), the client's next requests go to another worker while
 * the watches it had open would stay here until they time out, minutes later: its informers would
 * see its own writes only after they crossed from one worker to the other through Redis. Ending
 * those watches at the move sends them after the requests: the client opens them again from the
 * version it had, on its new connection. The open watches of each connection are counted, so that
 * only a connection carrying its client's watches is moved (see connectionToMove).
 */
interface ConnectionWatches {
  readonly moved: AbortController;
  open: number;
}

const connections = new WeakMap<object, ConnectionWatches>();

/** The HTTP/2 connection a request came on (Node's compatibility request keeps its stream), if any. */
function sessionOf(req: object): object | undefined {
  const stream = (req as { stream?: { session?: object } }).stream;
  return stream?.session ?? undefined;
}

function watchesOf(session: object): ConnectionWatches {
  let c = connections.get(session);
  if (c === undefined) {
    c = { moved: new AbortController(), open: 0 };
    // Every watch of the connection listens (kube-controller-manager opens some forty on one).
    setMaxListeners(0, c.moved.signal);
    connections.set(session, c);
  }
  return c;
}

/** Aborts when the client of `req`'s HTTP/2 connection is asked to reconnect; undefined over HTTP/1.1. */
export function connectionMovedSignal(req: object): AbortSignal | undefined {
  const session = sessionOf(req);
  return session === undefined ? undefined : watchesOf(session).moved.signal;
}

/** Counts the watch of `req` as open on its HTTP/2 connection until `over` aborts. */
export function countWatch(req: object, over: AbortSignal): void {
  const session = sessionOf(req);
  if (session === undefined || over.aborted) return;
  const c = watchesOf(session);
  c.open++;
  over.addEventListener('abort', () => c.open--, { once: true });
}

/** How many watches are open on the HTTP/2 connection `session`. */
export function openWatches(session: object): number {
  return connections.get(session)?.open ?? 0;
}

/** Ends the watches of the HTTP/2 connection `session`, whose client was just asked to reconnect. */
export function connectionMoved(session: object): void {
  connections.get(session)?.moved.abort();
}
