import { Redis, type Cluster } from 'ioredis';

/**
 * One socket write for all the commands a process sends on a connection in one turn of its event
 * loop. The turn's first command corks the connection's socket; once the turn's I/O callbacks have
 * run (setImmediate), the socket is uncorked and everything written meanwhile leaves in one `writev`,
 * in the order it was written. Under load a worker serves many requests at once: one write (and one
 * read on Redis' side) for all their commands costs both processes much less than one each. A
 * command is never held longer than that turn, and replies are not waited for, so a batch never
 * waits for an earlier one. A connection that is not ready (its commands queue inside the client)
 * and a Cluster (whose commands go to several sockets) are left as they are.
 */
const corked = new WeakSet<object>();

/** Corks `client`'s socket until the end of this turn, unless it already is. */
export function batchWritesThisTurn(client: Redis | Cluster): void {
  if (!(client instanceof Redis) || client.status !== 'ready') return;
  const socket = client.stream;
  if (corked.has(socket)) return;
  corked.add(socket);
  socket.cork();
  setImmediate(() => {
    corked.delete(socket);
    socket.uncork();
  });
}
