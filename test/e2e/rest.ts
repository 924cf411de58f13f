/** Small REST helpers over `api()` for e2e tests that talk HTTP directly. */
import assert from 'node:assert/strict';
import { api } from '../helpers/capstan.js';

export type ApiResult = Awaited<ReturnType<typeof api>>;

/** A client bound to one server URL. */
export interface Rest {
  get(path: string, headers?: Record<string, string>): Promise<ApiResult>;
  post(path: string, body: unknown, contentType?: string): Promise<ApiResult>;
  put(path: string, body: unknown, contentType?: string): Promise<ApiResult>;
  patch(path: string, body: unknown, contentType?: string): Promise<ApiResult>;
  del(path: string, body?: unknown): Promise<ApiResult>;
  /** POSTs and asserts 201. */
  create(path: string, body: unknown): Promise<any>;
  /** Creates a namespace with a unique name and returns the name. */
  namespace(prefix?: string): Promise<string>;
}

function encode(body: unknown): string {
  return typeof body === 'string' || Buffer.isBuffer(body) ? body.toString() : JSON.stringify(body);
}

export function restFor(url: string): Rest {
  const send = (method: string, path: string, body: unknown, contentType: string): Promise<ApiResult> =>
    api(url, path, { method, headers: { 'content-type': contentType }, body: encode(body) });
  const rest: Rest = {
    get: (path, headers = {}) => api(url, path, { headers }),
    post: (path, body, ct = 'application/json') => send('POST', path, body, ct),
    put: (path, body, ct = 'application/json') => send('PUT', path, body, ct),
    patch: (path, body, ct = 'application/merge-patch+json') => send('PATCH', path, body, ct),
    del: (path, body) => (body === undefined ? api(url, path, { method: 'DELETE' }) : send('DELETE', path, body, 'application/json')),
    create: async (path, body) => {
      const r = await rest.post(path, body);
      assert.equal(r.status, 201, `POST ${path}: ${r.text}`);
      return r.body;
    },
    namespace: async (prefix = 'ns') => {
      const name = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
      await rest.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      return name;
    },
  };
  return rest;
}

/** Polls `check` every 50 ms until it returns a value other than undefined (or fails after `timeoutMs`). */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Asserts a Status failure: code, reason and (when given) the message. */
export function assertStatus(r: ApiResult, code: number, reason: string, message?: string | RegExp): void {
  assert.equal(r.status, code, `expected ${code} ${reason}, got ${r.status}: ${r.text}`);
  assert.equal(r.headers.get('content-type')?.split(';')[0], 'application/json', r.text);
  assert.equal(r.body.kind, 'Status', r.text);
  assert.equal(r.body.apiVersion, 'v1');
  assert.equal(r.body.status, 'Failure');
  assert.equal(r.body.code, code);
  assert.equal(r.body.reason, reason, r.text);
  if (typeof message === 'string') assert.equal(r.body.message, message);
  else if (message) assert.match(r.body.message as string, message);
}
