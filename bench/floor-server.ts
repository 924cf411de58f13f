/**
 * The least a Node.js HTTPS API server does per request, for the `floor` scenario: keep-alive TLS,
 * Node's HTTP/1.1 parser and response writer, the headers Capstan sends on every answer, a GET
 * answered with a stored object's JSON text, and a POST whose JSON body is read, parsed and written
 * back as the 201 answer. Nothing else: no routing, authentication, authorization, flow control,
 * admission, validation, storage or metrics. With `--express`, the requests pass through an Express
 * app with one middleware first, as Capstan's do.
 *
 *   node dist/bench/floor-server.js --cert FILE --key FILE [--express]
 *
 * Prints `listening PORT` once it accepts connections (on 127.0.0.1, a free port); SIGTERM ends it.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
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

function serve(req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'POST') {
    req.resume();
    answer(res, 200, STORED);
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    try {
      const object = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      answer(res, 201, JSON.stringify(object));
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

const server = createServer({ cert: readFileSync(option('--cert')), key: readFileSync(option('--key')), keepAliveTimeout: 65_000 }, handler);
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
