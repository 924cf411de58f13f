/**
 * An HTTPS webhook server inside the test process, with a CA generated for it (@peculiar/x509): the
 * serving certificate holds the names a test asks for (`localhost`, `127.0.0.1`, `NAME.NAMESPACE.svc`).
 * Handlers are plain functions from the parsed JSON body to a JSON answer, per path.
 */
import './reflect-metadata-shim.js';
import { webcrypto } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as x509 from '@peculiar/x509';
import assert from 'node:assert/strict';
import { WebhookCallError } from '../../src/webhook/webhook-client.js';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A CA and a serving certificate it signed, as PEM. */
export interface TestCertificates {
  caPem: string;
  /** base64 of caPem: what a WebhookClientConfig's caBundle holds. */
  caBundle: string;
  certPem: string;
  keyPem: string;
}

async function keyPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  const b64 = Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n');
  return `-----BEGIN PRIVATE KEY-----\n${b64.trimEnd()}\n-----END PRIVATE KEY-----\n`;
}

/** Generates a fresh CA and a serving certificate for `dnsNames` and `ips` (valid one day). */
export async function generateCertificates(dnsNames: string[], ips: string[] = ['127.0.0.1']): Promise<TestCertificates> {
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(Date.now() + 86_400_000);
  const caKeys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=capstan-test-webhook-ca',
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: ALG,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
  });
  const leafKeys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: '02',
    subject: `CN=${dnsNames[0] ?? 'webhook'}`,
    issuer: ca.subject,
    notBefore,
    notAfter,
    signingKey: caKeys.privateKey,
    publicKey: leafKeys.publicKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.SubjectAlternativeNameExtension([
        ...dnsNames.map((value) => ({ type: 'dns' as const, value })),
        ...ips.map((value) => ({ type: 'ip' as const, value })),
      ]),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
    ],
  });
  const caPem = ca.toString('pem');
  return { caPem, caBundle: Buffer.from(caPem).toString('base64'), certPem: leaf.toString('pem'), keyPem: await keyPem(leafKeys.privateKey) };
}

/** What a handler sees of one call. */
export interface WebhookCall {
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: unknown;
}

/** A handler's answer: a JSON body (status 200), or full control through `res`. */
export type WebhookHandler = (call: WebhookCall, res: ServerResponse) => unknown;

export interface TestWebhookServer {
  /** `https://127.0.0.1:PORT` */
  url: string;
  port: number;
  certs: TestCertificates;
  /** Sets (or replaces) the handler of a path. */
  handle(path: string, handler: WebhookHandler): void;
  /** Every call received so far, in order. */
  calls: WebhookCall[];
  stop(): Promise<void>;
}

/** Starts the server on 127.0.0.1 and a free port; unknown paths answer 404. */
export async function startWebhookServer(dnsNames: string[] = ['localhost']): Promise<TestWebhookServer> {
  const certs = await generateCertificates(dnsNames);
  const handlers = new Map<string, WebhookHandler>();
  const calls: WebhookCall[] = [];
  const server: Server = createServer({ cert: certs.certPem, key: certs.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'https://x');
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = undefined;
      }
      const call = { path: u.pathname, query: u.searchParams, headers: req.headers, body };
      calls.push(call);
      const handler = handlers.get(u.pathname);
      if (handler === undefined) {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found');
        return;
      }
      const answer = handler(call, res);
      if (answer === undefined || res.headersSent) return;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    certs,
    calls,
    handle: (path, handler) => handlers.set(path, handler),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The WebhookCallError a webhook call `p` rejects with (fails the test when it resolves or rejects otherwise). */
export async function webhookCallError(p: Promise<unknown>): Promise<WebhookCallError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof WebhookCallError, String(err));
    return err;
  }
  assert.fail('the call succeeded');
}
