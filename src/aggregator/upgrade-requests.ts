import { IncomingMessage, ServerResponse, type Server } from 'node:http';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { markHijacked } from '../api/hijacked-responses.js';

/** A connection taken over from the HTTP server for an upgrade: the socket and what was read past the headers. */
export interface UpgradeConnection {
  socket: Socket;
  head: Buffer;
}

const upgrades = new WeakMap<IncomingMessage, UpgradeConnection>();

/**
 * The request class of Capstan's HTTP servers. Node hands a request with `Connection: Upgrade` to
 * the server's 'upgrade' listeners (the socket leaves the HTTP parser) only while its `upgrade` flag
 * is set; this class keeps the flag only for requests `isProxiedUpgrade` claims (by URL: paths of
 * aggregated API servers), so every other upgrade request is served as a plain request, as before.
 */
export function upgradeFilteringIncomingMessage(isProxiedUpgrade: (url: string) => boolean): typeof IncomingMessage {
  // The flag is an accessor of the class, not of each request: requests keep one shape, and making
  // one costs no property definition.
  return class FilteredIncomingMessage extends IncomingMessage {
    private proxiedUpgrade = false;

    get upgrade(): boolean {
      return this.proxiedUpgrade;
    }

    set upgrade(value: unknown) {
      this.proxiedUpgrade = value === true && isProxiedUpgrade(this.url ?? '');
    }
  };
}

/**
 * Serves the upgrade requests Node hands to `server`'s 'upgrade' event through `handle`, as plain
 * requests would be: a response bound to the connection (closed once it is sent). A handler that
 * proxies the upgrade takes the connection over with {@link takeUpgradeConnection}.
 */
export function serveUpgradeRequests(server: Server, handle: (req: IncomingMessage, res: ServerResponse) => void): void {
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!(socket instanceof Socket)) {
      socket.destroy();
      return;
    }
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    upgrades.set(req, { socket, head });
    res.on('finish', () => {
      if (upgrades.has(req)) socket.end();
    });
    socket.on('error', () => socket.destroy());
    handle(req, res);
  });
}

/**
 * The connection of an upgrade request that came through {@link serveUpgradeRequests}, detached from
 * its response (nothing more is written through `res`, which counts as hijacked: see
 * hijacked-responses.ts); undefined for a request served as a plain one.
 */
export function takeUpgradeConnection(req: IncomingMessage, res: ServerResponse): UpgradeConnection | undefined {
  const connection = upgrades.get(req);
  if (connection === undefined) return undefined;
  upgrades.delete(req);
  res.detachSocket(connection.socket);
  markHijacked(res, connection.socket);
  return connection;
}

/** Whether `req` came through {@link serveUpgradeRequests} and its connection can still be taken. */
export function hasUpgradeConnection(req: IncomingMessage): boolean {
  return upgrades.has(req);
}
