import type { Server } from 'node:http';
import { Socket } from 'node:net';
import { logger } from '../logging/logger.js';
import {
  isConnectionMessage, type ConnectionRefusedMessage, type ConnectionTakenMessage, type DrainingMessage,
} from './messages.js';

/** Sends `message` to the primary; a closed channel (the primary is gone) is not an error here. */
function tell(message: ConnectionTakenMessage | ConnectionRefusedMessage | DrainingMessage): void {
  const send = process.send?.bind(process);
  if (send === undefined) return;
  send(message, undefined, {}, (err: Error | null) => {
    if (err !== null) logger.debug('could not reach the primary', { type: message.type, error: err });
  });
}

/**
 * The worker side of the primary's {@link ConnectionDistributor}. Guarantees:
 * - Every socket handed over is either served by the HTTP server and acknowledged
 *   (`capstan:connection-taken`), or refused (`capstan:connection-refused`, the primary hands it to
 *   another worker) once this worker's server has closed or when the message came without a socket.
 * - The acknowledgement is written in the same event-loop turn as the socket arrives, before the
 *   worker's first read from it: a socket the primary re-hands because this worker died unacknowledged
 *   has had nothing consumed.
 * - Sockets still on their way after {@link drain} are served (the server then answers with
 *   `Connection: close`).
 */
export class ConnectionReceiver {
  private server: Server | undefined;
  private closed = false;

  /** Starts serving handed connections with `server` (which must not listen itself). Call once. */
  serve(server: Server): void {
    if (this.server !== undefined) throw new Error('ConnectionReceiver.serve called twice');
    this.server = server;
    process.on('message', (msg: unknown, handle: unknown) => {
      if (!isConnectionMessage(msg)) return;
      if (this.closed || !(handle instanceof Socket)) {
        if (handle instanceof Socket) handle.destroy();
        tell({ type: 'capstan:connection-refused', id: msg.id });
        return;
      }
      server.emit('connection', handle);
      handle.resume();
      tell({ type: 'capstan:connection-taken', id: msg.id });
    });
  }

  /** The server starts draining: the primary sends no new connections to this worker. */
  drain(): void {
    tell({ type: 'capstan:draining' });
  }

  /** The server has closed: every connection still arriving is refused and goes to another worker. */
  close(): void {
    this.closed = true;
  }
}
