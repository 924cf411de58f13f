/** A small HTTPS client for the authentication tests: real TLS, optional client certificate. */
import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';

export interface TlsIdentity {
  ca: string;
  cert?: string;
  key?: string;
}

export interface HttpsAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any;
  /** SHA-256 fingerprint of the server's certificate. */
  serverFingerprint: string;
}

/** One request on a fresh connection (no agent), so each reaches the server's current certificate. */
export function httpsRequest(
  url: string,
  tls: TlsIdentity,
  init: { method?: string; headers?: Record<string, string | string[]>; body?: unknown } = {},
): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const payload = init.body === undefined ? undefined : JSON.stringify(init.body);
    const req = request(
      url,
      {
        method: init.method ?? (payload === undefined ? 'GET' : 'POST'),
        headers: { ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
        ca: tls.ca,
        cert: tls.cert,
        key: tls.key,
        agent: false,
      },
      (res) => {
        const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
        });
        res.on('end', () => {
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body, serverFingerprint: fingerprint });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
