import { request as httpRequest, STATUS_CODES, type IncomingHttpHeaders } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import { goNetError } from '../../webhook/webhook-client.js';

/**
 * The HTTP client of one JWT issuer: GETs over keep-alive connections, TLS verified against the
 * issuer's certificateAuthority (else the host's roots), 30 s per request as kube's client, and the
 * discovery document read from discoveryURL when one is set. Failures read as Go's HTTP client
 * words them (`Get "https://...": dial tcp 127.0.0.1:1: connect: connection refused`).
 */

/** A response: Go's status line text (`404 Not Found`), headers and body. */
export interface HttpAnswer {
  status: number;
  statusLine: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const TIMEOUT_MS = 30_000;
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export class IssuerHttpClient {
  private readonly agent: Agent;

  /**
   * `ca`: PEM roots ('' for the host's). `rewrite`: the discovery URL that replaces `{issuer}/.well-known/openid-configuration`.
   */
  constructor(
    ca: string,
    private readonly rewrite?: { from: string; to: string },
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: 8, ca: ca === '' ? undefined : ca });
  }

  /** GETs `url`; throws an Error worded as Go's client error when no response arrives. */
  async get(url: string, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<HttpAnswer> {
    const target = this.rewrite !== undefined && url === this.rewrite.from ? this.rewrite.to : url;
    const timeout = AbortSignal.timeout(TIMEOUT_MS);
    const combined = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
    let parsed: URL;
    try {
      parsed = new URL(target);
    } catch {
      throw new Error(`Get ${JSON.stringify(url)}: unsupported protocol scheme ""`);
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
      throw new Error(`Get ${JSON.stringify(url)}: unsupported protocol scheme "${parsed.protocol.slice(0, -1)}"`);
    }
    const send = parsed.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<HttpAnswer>((resolve, reject) => {
      const req = send(
        parsed,
        {
          method: 'GET',
          headers: { 'User-Agent': 'capstan-oidc-authenticator', ...headers },
          signal: combined,
          ...(parsed.protocol === 'https:' ? { agent: this.agent } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_BODY_BYTES) req.destroy(new Error('response body too large'));
            else chunks.push(chunk);
          });
          res.on('error', (err) => reject(new Error(`unable to read response body: ${err.message}`)));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            resolve({
              status,
              statusLine: `${status} ${STATUS_CODES[status] ?? ''}`.trim(),
              headers: res.headers,
              body: Buffer.concat(chunks).toString('utf8'),
            });
          });
        },
      );
      req.on('error', (err) => {
        const why = timeout.aborted
          ? 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
          : combined.aborted
            ? 'context canceled'
            : goNetError(err);
        reject(new Error(`Get ${JSON.stringify(url)}: ${why}`));
      });
      req.end();
    });
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.agent.destroy();
  }
}

/**
 * go-oidc's unmarshalResp: the body as JSON, or its error naming the Content-Type when the body is
 * not JSON.
 */
export function jsonBody(answer: HttpAnswer): unknown {
  try {
    return JSON.parse(answer.body) as unknown;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    const type = String(answer.headers['content-type'] ?? '');
    if (type.split(';')[0].trim() === 'application/json') throw new Error(`got Content-Type = application/json, but could not unmarshal as JSON: ${why}`);
    throw new Error(`expected Content-Type = application/json, got ${JSON.stringify(type)}: ${why}`);
  }
}
