/**
 * The pod runner's JSON client for Capstan's plain-HTTP loopback port (no authentication), or for an
 * HTTPS API server with a bearer token (the reference, for baselines; NODE_TLS_REJECT_UNAUTHORIZED=0
 * for its self-signed certificate). Every call resolves to the status code and parsed body; it never
 * throws on an HTTP error status.
 */

/** One answer: status code and parsed JSON body (undefined when the body is empty or not JSON). */
export interface ApiResponse {
  status: number;
  body: any;  
}

/** Calls the API server at `base` (e.g. http://127.0.0.1:8080). */
export class ApiClient {
  constructor(
    private readonly base: string,
    private readonly token?: string,
  ) {}

  async request(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<ApiResponse> {
    const res = await fetch(this.base + path, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'Content-Type': contentType }),
        ...(this.token === undefined ? {} : { Authorization: `Bearer ${this.token}` }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed };
  }

  get(path: string): Promise<ApiResponse> {
    return this.request('GET', path);
  }

  /** JSON merge patch (arrays are replaced whole). */
  mergePatch(path: string, patch: unknown): Promise<ApiResponse> {
    return this.request('PATCH', path, patch, 'application/merge-patch+json');
  }
}
