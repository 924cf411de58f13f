/**
 * The least a Node.js HTTPS API server does per request, for the `floor` scenario: keep-alive TLS,
 * Node's HTTP/1.1 parser and response writer, the headers Capstan sends on every answer, a GET
 * answered with a stored object's JSON text, and a POST whose JSON body is read, parsed and written
 * back as the 201 answer. Nothing else: no routing, authentication, authorization, flow control,
 * admission, validation, storage or metrics. With `--express`, the requests pass through an Express
 * app with one middleware first, as Capstan's do.
 *
 * It also stands in for a watch fan-out: a GET of a collection (a path ending in `/configmaps`)
 * with `watch=1` holds a chunked 200 open, and every POST gets the next resourceVersion, a uid, a
 * creation time and managedFields (the metadata a stored object carries) before its 201, and goes
 * to every open watch as an ADDED line: encoded once, then one `res.write` per watch, Node's plain
 * way to stream a response. Without `watch`, such a GET answers an empty list at the current
 * resourceVersion.
 *
 * With `--http2` it serves HTTP/2 (and HTTP/1.1 to clients that do not offer h2) through
 * node:http2's compatibility API, so that many watches share one connection as client-go's do.
 *
 *   node dist/bench/floor-server.js --cert FILE --key FILE [--express] [--http2]
 *
 * Prints `listening PORT` once it accepts connections (on 127.0.0.1, a free port); SIGTERM ends it.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { createSecureServer } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import express from 'express';

const args = process.argv.slice(2);
const option = (name: string): string => {
  const at = args.indexOf(name);
  const value = at < 0 ? undefined : args[at + 1];
  if (value === undefined) throw new Error(`floor-server: ${name} FILE is required`);
  return value;
};

/** A stored ConfigMap of the size the scenario writes (1 KiB of data), as Capstan stores it. */
const STORED = JSON.stringify({
  kind: 'ConfigMap',
  apiVersion: 'v1',
  metadata: {
    name: 'floor',
    namespace: 'default',
    uid: randomUUID(),
    resourceVersion: '12345',
    creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    labels: { bench: 'floor' },
    managedFields: [
      {
        manager: 'bench',
        operation: 'Update',
        apiVersion: 'v1',
        time: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { '.': {}, 'f:payload': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:bench': {} } } },
      },
    ],
  },
  data: { payload: 'x'.repeat(1024) },
});

/** The headers every answer of Capstan (and kube-apiserver) carries. */
function answer(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'Audit-Id': randomUUID(),
    'Cache-Control': 'no-cache, private',
    'Content-Type': 'application/json',
    'X-Kubernetes-Pf-Flowschema-Uid': 'floor-flowschema',
    'X-Kubernetes-Pf-Prioritylevel-Uid': 'floor-prioritylevel',
  });
  res.end(body);
}

/** The open watches, and the resourceVersion of the last POST. */
const watches = new Set<ServerResponse>();
let resourceVersion = 1;

/** Whether `url` names a collection (watched and listed) rather than one object. */
function isCollection(url: string): boolean {
  const path = url.split('?', 1)[0];
  return path.endsWith('/configmaps');
}

function openWatch(res: ServerResponse): void {
  // HTTP/2 has no Transfer-Encoding (a stream's DATA frames carry it); HTTP/1.1 streams chunked.
  const chunked = res.req.httpVersionMajor === 1 ? { 'Transfer-Encoding': 'chunked' } : {};
  res.writeHead(200, { 'Cache-Control': 'no-cache, private', 'Content-Type': 'application/json', ...chunked });
  res.flushHeaders();
  watches.add(res);
  res.on('close', () => watches.delete(res));
}

/** `object` with what storing it adds to its metadata (the next resourceVersion among it). */
function stored(object: Record<string, unknown>): Record<string, unknown> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const metadata = (object.metadata ?? {}) as Record<string, unknown>;
  return {
    ...object,
    metadata: {
      ...metadata,
      uid: randomUUID(),
      resourceVersion: String(++resourceVersion),
      creationTimestamp: now,
      managedFields: [{ manager: 'bench', operation: 'Update', apiVersion: 'v1', time: now, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { '.': {} } } }],
    },
  };
}

function serve(req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'POST') {
    req.resume();
    const url = req.url ?? '';
    if (!isCollection(url)) answer(res, 200, STORED);
    else if (/[?&]watch=(1|true)/.test(url)) openWatch(res);
    else answer(res, 200, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"${resourceVersion}"},"items":[]}`);
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    try {
      const object = stored(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
      const json = JSON.stringify(object);
      if (watches.size > 0) {
        const frame = Buffer.from(`{"type":"ADDED","object":${json}}\n`);
        for (const watch of watches) watch.write(frame);
      }
      answer(res, 201, json);
    } catch {
      answer(res, 400, '{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"BadRequest","code":400}');
    }
  });
}

let handler: (req: IncomingMessage, res: ServerResponse) => void = serve;
if (args.includes('--express')) {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use((req, res) => serve(req, res));
  handler = app;
}

const tls = { cert: readFileSync(option('--cert')), key: readFileSync(option('--key')) };
const server = args.includes('--http2')
  ? // The compatibility API's request and response stand in for node:http's (the handler uses their common part).
    createSecureServer({ ...tls, allowHTTP1: true }, handler as unknown as Parameters<typeof createSecureServer>[1])
  : createServer({ ...tls, keepAliveTimeout: 65_000 }, handler);
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  if ('closeAllConnections' in server) server.closeAllConnections();
  server.close(() => process.exit(0));
  // HTTP/2 sessions (watches among them) keep close() waiting: nothing is left to finish.
  setTimeout(() => process.exit(0), 1000).unref();
});
