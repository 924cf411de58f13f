/**
 * A TokenReview webhook served by a test over HTTPS (its own CA, optionally requiring a client
 * certificate): it records every review it receives and answers with the status `answer` gives for
 * the token (or an HTTP error). Tests count its calls to see kube's caching and retries.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { generateCA, generateLeaf, type CertificateAndKey } from '../../src/tls/certificates.js';

/** What the webhook does for one review: a TokenReview status, or an HTTP error with a text body. */
export type WebhookAnswer = { status: Record<string, unknown> } | { httpError: number; text: string };

export interface ReceivedReview {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

export class TestTokenWebhook {
  readonly received: ReceivedReview[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly ca: CertificateAndKey,
    /** The client CA, when the webhook requires client certificates. */
    readonly clientCA: CertificateAndKey | undefined,
  ) {}

  /** Starts the webhook at https://127.0.0.1:PORT/review; with `requireClientCert`, callers must present a certificate of its client CA. */
  static async start(answer: (token: string, review: any) => WebhookAnswer, requireClientCert = false): Promise<TestTokenWebhook> {
    const ca = await generateCA('test-token-webhook-ca');
    const leaf = await generateLeaf(ca, { usage: 'server', commonName: '127.0.0.1', dnsNames: ['localhost'], ips: ['127.0.0.1'] });
    const clientCA = requireClientCert ? await generateCA('test-token-webhook-client-ca') : undefined;
    let webhook: TestTokenWebhook | undefined;
    const server = createServer(
      { cert: leaf.cert, key: leaf.key, ...(clientCA === undefined ? {} : { ca: clientCA.cert, requestCert: true, rejectUnauthorized: true }) },
      (req, res) => {
        let text = '';
        req.setEncoding('utf8');
        req.on('data', (d: string) => (text += d));
        req.on('end', () => {
          const body = JSON.parse(text);
          webhook?.received.push({ path: req.url ?? '', headers: req.headers, body });
          const out = answer(String(body?.spec?.token ?? ''), body);
          if ('httpError' in out) {
            res.writeHead(out.httpError, { 'content-type': 'text/plain' }).end(out.text);
            return;
          }
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ apiVersion: body.apiVersion, kind: 'TokenReview', status: out.status }));
        });
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    webhook = new TestTokenWebhook(server, `https://127.0.0.1:${port}/review`, ca, clientCA);
    return webhook;
  }

  /** Reviews received for `token`. */
  callsFor(token: string): ReceivedReview[] {
    return this.received.filter((r) => r.body?.spec?.token === token);
  }

  /**
   * Writes a kubeconfig naming this webhook to `path`, with `user` credentials (a token, or a client
   * certificate of the webhook's client CA).
   */
  async writeKubeconfig(path: string, user: { token: string } | { clientCertificate: true }): Promise<void> {
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    let userLines: string[];
    if ('token' in user) userLines = [`    token: ${user.token}`];
    else {
      if (this.clientCA === undefined) throw new Error('this webhook does not take client certificates');
      const cert = await generateLeaf(this.clientCA, { usage: 'client', user: 'capstan-apiserver', groups: [] });
      userLines = [`    client-certificate-data: ${b64(cert.cert)}`, `    client-key-data: ${b64(cert.key)}`];
    }
    writeFileSync(
      path,
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: webhook, cluster: {server: "${this.url}", certificate-authority-data: ${b64(this.ca.cert)}}}]`,
        'contexts: [{name: webhook, context: {cluster: webhook, user: apiserver}}]',
        'current-context: webhook',
        'users:',
        '- name: apiserver',
        '  user:',
        ...userLines,
        '',
      ].join('\n'),
    );
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
