/**
 * A small extension API server inside the test process, over real HTTPS: it serves one group
 * version (`widgets`) with discovery, OpenAPI v2, a streaming watch, an upgrade endpoint and an echo
 * of what the aggregator sent, and authenticates the aggregator as an extension server does: its
 * client certificate must verify against the front-proxy CA, else the request is 401. Every request
 * is recorded.
 */
import { X509Certificate } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { TLSSocket } from 'node:tls';
import { generateCertificates, type TestCertificates } from './webhook-server.js';

/** One request the extension server received. */
export interface ExtensionRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  /** Common name of the verified client certificate ('' when none verified). */
  clientName: string;
}

export interface ExtensionServer {
  port: number;
  certs: TestCertificates;
  requests: ExtensionRequest[];
  /** Writes one watch event to every open watch of widgets. */
  emit(event: unknown): void;
  /** Open watches of widgets. */
  watchers(): number;
  stop(): Promise<void>;
}

/** Starts the server on 127.0.0.1 and a free port for GROUP/VERSION, trusting `frontProxyCA` (PEM). */
export async function startExtensionServer(
  group: string,
  version: string,
  frontProxyCA: string,
  serviceName: string,
  host = '127.0.0.1',
): Promise<ExtensionServer> {
  const certs = await generateCertificates([serviceName, 'localhost']);
  const requests: ExtensionRequest[] = [];
  const watches = new Set<ServerResponse>();
  const upgraded = new Set<Socket>();
  const base = `/apis/${group}/${version}`;
  const json = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  };
  const clientNameOf = (socket: Socket): string => {
    const tls = socket as TLSSocket;
    if (!tls.authorized) return '';
    const raw = tls.getPeerCertificate().raw;
    return raw === undefined ? '' : (/CN=([^\n,]*)/.exec(new X509Certificate(raw).subject)?.[1] ?? '');
  };
  const openapi = {
    swagger: '2.0',
    info: { title: 'widgets', version: 'v0' },
    paths: {
      [`${base}/namespaces/{namespace}/widgets`]: {
        get: { operationId: 'listWidgets', responses: { '200': { description: 'OK', schema: { $ref: '#/definitions/example.widgets.v1.WidgetList' } } } },
      },
      '/apis/unrelated.example.com/v1/things': { get: { operationId: 'listThings', responses: { '200': { description: 'OK' } } } },
    },
    definitions: {
      'example.widgets.v1.WidgetList': {
        type: 'object',
        properties: { items: { type: 'array', items: { $ref: '#/definitions/example.widgets.v1.Widget' } } },
      },
      'example.widgets.v1.Widget': {
        description: 'A widget.',
        type: 'object',
        properties: { metadata: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }, size: { type: 'integer' } },
        'x-kubernetes-group-version-kind': [{ group, version, kind: 'Widget' }],
      },
      // Not what the built-in ObjectMeta says: kube-openapi's merge renames it.
      'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': { type: 'object', properties: { name: { type: 'string' } } },
    },
  };
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'https://x');
    const clientName = clientNameOf(req.socket);
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, clientName });
    if (clientName === '' || req.headers['x-remote-user'] === undefined) {
      json(res, 401, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
      return;
    }
    const path = url.pathname;
    if (path === base || path === `${base}/`) {
      json(res, 200, {
        kind: 'APIResourceList',
        apiVersion: 'v1',
        groupVersion: `${group}/${version}`,
        resources: [
          { name: 'widgets', singularName: 'widget', namespaced: true, kind: 'Widget', verbs: ['get', 'list', 'watch'], shortNames: ['wd'] },
          { name: 'widgets/status', singularName: '', namespaced: true, kind: 'Widget', verbs: ['get'] },
        ],
      });
    } else if (path === `${base}/echo`) {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => json(res, 200, { method: req.method, url: req.url, headers: req.headers, clientName, body }));
    } else if (path === `${base}/redirect`) {
      res.writeHead(302, { Location: 'https://example.com/' }).end();
    } else if (path.startsWith(`${base}/namespaces/`) && path.endsWith('/widgets') && url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
      res.flushHeaders();
      watches.add(res);
      res.on('close', () => watches.delete(res));
    } else if (path.startsWith(`${base}/namespaces/`) && path.endsWith('/widgets')) {
      json(res, 200, { kind: 'WidgetList', apiVersion: `${group}/${version}`, metadata: { resourceVersion: '1' }, items: [] });
    } else if (path === '/openapi/v2') {
      json(res, 200, openapi);
    } else {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
    }
  };
  const server: Server = createServer({ cert: certs.certPem, key: certs.keyPem, ca: frontProxyCA, requestCert: true, rejectUnauthorized: false }, handle);
  // Upgrades: a 101 and then every byte echoed back, as a stream protocol would exchange them.
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const clientName = clientNameOf(socket);
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, clientName });
    if (clientName === '') {
      socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    upgraded.add(socket);
    socket.on('close', () => upgraded.delete(socket));
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${String(req.headers.upgrade)}\r\nConnection: Upgrade\r\nX-Remote-User-Seen: ${String(req.headers['x-remote-user'])}\r\n\r\n`,
    );
    if (head.length > 0) socket.write(head);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    certs,
    requests,
    emit: (event) => {
      for (const w of watches) w.write(`${JSON.stringify(event)}\n`);
    },
    watchers: () => watches.size,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        for (const s of upgraded) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The host's first non-loopback IPv4 address (EndpointSlices may not name loopback addresses). */
export function hostAddress(): string {
  for (const addresses of Object.values(networkInterfaces())) for (const a of addresses ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  throw new Error('this test needs a non-loopback IPv4 address on the host');
}
