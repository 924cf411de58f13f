/**
 * One HTTP/2 connection to a server, as client-go holds it: every request and watch of the caller
 * are streams of this one connection, so a server with several workers serves them all in the
 * worker that accepted the connection. Certificates are not verified (bench servers are
 * self-signed); a bearer token, when given, goes with every request.
 */
import { connect, constants, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';

export interface Http2Response {
  status: number;
  body: string;
}

export class Http2Session {
  private constructor(
    private readonly session: ClientHttp2Session,
    private readonly token: string | undefined,
  ) {}

  /** Connects (TLS with ALPN h2 for https URLs, prior knowledge for http). */
  static open(url: string, token?: string): Promise<Http2Session> {
    return new Promise((resolve, reject) => {
      const session = connect(url, { rejectUnauthorized: false });
      session.once('error', reject);
      session.once('connect', () => {
        session.off('error', reject);
        session.on('error', () => undefined);
        resolve(new Http2Session(session, token));
      });
    });
  }

  private headers(method: string, path: string, extra: Record<string, string>): Record<string, string> {
    const headers: Record<string, string> = {
      [constants.HTTP2_HEADER_METHOD]: method,
      [constants.HTTP2_HEADER_PATH]: path,
      accept: 'application/json',
      ...extra,
    };
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    return headers;
  }

  /** One request (a body is sent as `contentType`, JSON by default); resolves with the whole response body as text. */
  request(method: string, path: string, body?: string, contentType = 'application/json'): Promise<Http2Response> {
    return new Promise((resolve, reject) => {
      const stream = this.session.request(this.headers(method, path, body === undefined ? {} : { 'content-type': contentType }));
      let status = 0;
      let text = '';
      stream.setEncoding('utf8');
      stream.on('response', (headers) => (status = Number(headers[constants.HTTP2_HEADER_STATUS])));
      stream.on('data', (chunk: string) => (text += chunk));
      stream.on('end', () => resolve({ status, body: text }));
      stream.on('error', reject);
      stream.end(body);
    });
  }

  /**
   * A streaming GET (a watch): resolves with the stream once the server answered 200 (rejects
   * otherwise); `onChunk` receives each chunk of text as it arrives.
   */
  stream(path: string, onChunk: (chunk: string) => void): Promise<ClientHttp2Stream> {
    return new Promise((resolve, reject) => {
      const stream = this.session.request(this.headers('GET', path, {}));
      stream.setEncoding('utf8');
      stream.on('response', (headers) => {
        const status = Number(headers[constants.HTTP2_HEADER_STATUS]);
        if (status !== 200) {
          stream.close();
          reject(new Error(`GET ${path}: HTTP ${status}`));
          return;
        }
        stream.on('data', onChunk);
        resolve(stream);
      });
      stream.on('error', reject);
      stream.end();
    });
  }

  /** Whether the connection is gone (closed by either side, or failed): requests on it fail. */
  get closed(): boolean {
    return this.session.closed || this.session.destroyed;
  }

  close(): void {
    this.session.close();
  }
}
