import type { Socket } from 'node:net';

/** Receives the connection's bytes only so that Node delivers them through the socket's stream. */
function passThrough(): void {
  // The HTTP parser's own 'data' listener does the work.
}

/**
 * Makes Node's HTTP server read a TLS connection through the socket's stream instead of letting its
 * parser consume the TLS handle directly. Call once per accepted TLS socket, after the server's own
 * connection listener has run (any later 'secureConnection' listener).
 *
 * Why: when a request arrives while the previous response is still being flushed, Node pauses the
 * connection until it drains. A consumed TLS handle keeps handing the parser cleartext it had
 * already decrypted, the paused parser refuses it (HPE_PAUSED), and the request fails with a 400 and
 * a closed connection. Clients that write a large body after reading a large response on a kept-alive
 * connection (helm upgrading its release Secret, kubectl apply of big objects) hit it often. Read
 * through the stream, a paused socket buffers instead and the parser resumes where it stopped.
 * Node's server stops consuming a socket as soon as it gets a 'data' listener.
 */
export function readTlsThroughStream(socket: Socket): void {
  socket.on('data', passThrough);
}
