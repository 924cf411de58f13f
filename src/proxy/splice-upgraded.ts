import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { rawResponseHead } from './proxy-headers.js';

/**
 * Joins a client's connection to a backend that answered an upgrade (101), as kube's
 * UpgradeAwareHandler does: the answer's head goes to the client as it came, the bytes either side
 * read ahead are passed on, and the two connections are copied into each other until either ends or
 * fails, which ends the other (HTTP servers keep half-open sockets, kube's copy loops do not).
 */
export function spliceUpgraded(client: Socket, clientHead: Buffer, answer: IncomingMessage, backend: Socket, backendHead: Buffer): void {
  client.write(rawResponseHead(answer.statusCode ?? 101, answer.statusMessage ?? 'Switching Protocols', answer.rawHeaders));
  if (backendHead.length > 0) client.write(backendHead);
  if (clientHead.length > 0) backend.write(clientHead);
  backend.pipe(client);
  client.pipe(backend);
  backend.on('error', () => client.destroy());
  client.on('error', () => backend.destroy());
  backend.on('close', () => client.destroy());
  client.on('close', () => backend.destroy());
  client.on('end', () => {
    backend.destroy();
    client.end();
  });
  backend.on('end', () => client.end());
}
