/**
 * Runs generated hostile requests against a server and checks each answer: a 4xx `Status` (or the
 * plain-text 400/404 Go's server and kube's mux send) for `reject`, never a 5xx, an answer or a
 * close within the bound, never a hang. Before and after, canary objects are read raw: they must be
 * byte-identical. The caller checks that the processes survived.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { generate, type FuzzLayout, type FuzzRequest } from './generators.js';

export interface FuzzOptions {
  url: string;
  seed: number;
  count: number;
  /** Requests in flight at once. */
  concurrency?: number;
  /** An answer (or a close) must come within this many ms. */
  boundMs?: number;
}

export interface Outcome {
  index: number;
  kind: string;
  status?: number;
  /** The connection closed without a response (raw framing only). */
  closed?: boolean;
  hung?: boolean;
  error?: string;
  ms: number;
  /** Why this outcome breaks the rules, when it does. */
  problem?: string;
}

export interface FuzzSummary {
  seed: number;
  count: number;
  byKind: Record<string, { count: number; '2xx': number; '4xx': number; '5xx': number; closed: number; problems: number }>;
  status5xx: number;
  hangs: number;
  problems: Outcome[];
  maxMs: number;
  p99Ms: number;
  canariesIntact: boolean;
  canaryDiffs: string[];
}

const CANARIES = (ns: string): Array<[string, string, unknown]> => [
  [
    `/api/v1/namespaces/${ns}/configmaps`,
    'canary-cm',
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'canary-cm', labels: { canary: 'yes' } }, data: { keep: 'this', nested: '{"a":1}' } },
  ],
  [
    `/api/v1/namespaces/${ns}/secrets`,
    'canary-secret',
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'canary-secret' }, data: { token: Buffer.from('s3cret').toString('base64') } },
  ],
  [
    `/apis/apps/v1/namespaces/${ns}/deployments`,
    'canary-deploy',
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'canary-deploy' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'c' } },
        template: { metadata: { labels: { app: 'c' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    },
  ],
];

interface Answer {
  status?: number;
  contentType?: string;
  body: Buffer;
  closed?: boolean;
  hung?: boolean;
  error?: string;
}

function httpRequest(url: string, method: string, path: string, headers: Record<string, string>, body: Buffer | undefined, boundMs: number): Promise<Answer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      req.destroy();
      resolve({ hung: true, body: Buffer.alloc(0) });
    }, boundMs);
    // Node announces no length for a DELETE body unless told: say it, as every real client does.
    const length: Record<string, string> = body === undefined ? {} : { 'content-length': String(body.length) };
    const req = request({ host: hostname, port: Number(port), method, path, agent: false, headers: { connection: 'close', ...length, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode, contentType: res.headers['content-type'], body: Buffer.concat(chunks) });
      });
      res.on('error', (err) => {
        clearTimeout(timer);
        resolve({ status: res.statusCode, error: err.message, body: Buffer.concat(chunks) });
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      // The server may answer (413, 400) and close before the whole body is sent: EPIPE/ECONNRESET
      // after a response are fine; without one the connection was closed on the client.
      resolve({ closed: true, error: err.code ?? err.message, body: Buffer.alloc(0) });
    });
    req.end(body);
  });
}

/** The payload of a chunked HTTP/1.1 body (as much as arrived). */
function unchunk(raw: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(raw.subarray(at, eol).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(raw.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/** Writes `raw`, half-closes, and reads until the server closes. */
function rawRequest(url: string, raw: Buffer, boundMs: number): Promise<Answer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (a: Answer): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(a);
    };
    const timer = setTimeout(() => finish({ hung: true, body: Buffer.concat(chunks) }), boundMs);
    const socket = connect(Number(port), hostname, () => socket.end(raw));
    socket.on('data', (d: Buffer) => chunks.push(d));
    const close = (): void => {
      const data = Buffer.concat(chunks);
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(data.subarray(0, 20).toString('latin1'));
      if (m) {
        const head = data.toString('latin1');
        const ct = /\r\ncontent-type: *([^\r\n]*)/i.exec(head)?.[1];
        const bodyStart = data.indexOf('\r\n\r\n');
        const raw = bodyStart >= 0 ? data.subarray(bodyStart + 4) : Buffer.alloc(0);
        const headers = head.slice(0, bodyStart);
        const chunked = /\r\ntransfer-encoding: *chunked/i.test(headers);
        // A Content-Length answer ends where it says: what follows is the answer to the next bytes sent.
        const length = /\r\ncontent-length: *(\d+)/i.exec(headers)?.[1];
        finish({ status: Number(m[1]), contentType: ct, body: chunked ? unchunk(raw) : length !== undefined ? raw.subarray(0, Number(length)) : raw });
      } else {
        finish({ closed: true, body: data });
      }
    };
    socket.on('end', close);
    socket.on('close', close);
    socket.on('error', () => close());
  });
}

/** Why the answer to `req` breaks the rules, or undefined when it keeps them. */
function judge(req: FuzzRequest, a: Answer): string | undefined {
  if (a.hung) return 'no answer within the bound';
  if (a.status === undefined) {
    // Only raw framing may end in a close without an answer (the client sent an incomplete request).
    if (req.raw !== undefined && a.body.length === 0) return undefined;
    if (req.raw === undefined && a.closed === true) return `connection failed without an answer (${a.error ?? ''})`;
    return `no HTTP answer: ${JSON.stringify(a.body.subarray(0, 80).toString('latin1'))}`;
  }
  if (a.status >= 500) return `${a.status}: ${a.body.subarray(0, 300).toString()}`;
  if (req.expect === 'no-5xx') return undefined;
  if (a.status < 400) return `${a.status} to a request that must be refused: ${a.body.subarray(0, 200).toString()}`;
  const type = (a.contentType ?? '').split(';')[0]?.trim();
  if (type === 'application/json') {
    try {
      const status = JSON.parse(a.body.toString()) as { kind?: string; code?: number; reason?: string };
      if (status.kind !== 'Status' || status.code !== a.status) return `${a.status} with a body that is not its Status: ${a.body.subarray(0, 200).toString()}`;
    } catch {
      return `${a.status} with unparseable JSON: ${a.body.subarray(0, 200).toString()}`;
    }
    return undefined;
  }
  if (type === 'application/yaml') return /^kind: Status$/m.test(a.body.toString()) ? undefined : `${a.status} YAML without a Status`;
  if (type === 'application/vnd.kubernetes.protobuf')
    return a.body.subarray(0, 4).equals(Buffer.from([0x6b, 0x38, 0x73, 0x00])) ? undefined : `${a.status} protobuf without the k8s envelope`;
  // Go's server and kube's mux answer these in plain text.
  if ((a.status === 404 || a.status === 400 || a.status === 431) && (type === 'text/plain' || type === '')) return undefined;
  return `${a.status} with content type ${String(a.contentType)}: ${a.body.subarray(0, 120).toString()}`;
}

async function send(url: string, req: FuzzRequest, boundMs: number): Promise<Answer> {
  if (req.raw !== undefined) return rawRequest(url, req.raw, boundMs);
  return httpRequest(url, req.method ?? 'GET', req.path ?? '/', req.headers ?? {}, req.body, boundMs);
}

async function jsonCall(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const r = await fetch(`${url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, text: await r.text() };
}

/** Creates the namespaces and canaries; returns the layout and the canaries' raw bytes. */
export async function prepare(url: string, tag: string): Promise<{ layout: FuzzLayout; snapshot: Map<string, string> }> {
  const scratch = `fuzz-scratch-${tag}`;
  const canaryNamespace = `fuzz-canary-${tag}`;
  for (const name of [scratch, canaryNamespace]) {
    const r = await jsonCall(url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    if (r.status !== 201) throw new Error(`creating namespace ${name}: ${r.status} ${r.text}`);
  }
  const canaries: string[] = [];
  for (const [collection, name, object] of CANARIES(canaryNamespace)) {
    const r = await jsonCall(url, 'POST', collection, object);
    if (r.status !== 201) throw new Error(`creating canary ${name}: ${r.status} ${r.text}`);
    canaries.push(`${collection}/${name}`);
  }
  canaries.push(`/api/v1/namespaces/${canaryNamespace}`);
  const [, , deployment] = CANARIES(scratch)[2] as [string, string, { metadata: { name: string } }];
  const scratchDeploy = await jsonCall(url, 'POST', `/apis/apps/v1/namespaces/${scratch}/deployments`, { ...deployment, metadata: { name: 'scratch-deploy' } });
  if (scratchDeploy.status !== 201) throw new Error(`creating scratch-deploy: ${scratchDeploy.status} ${scratchDeploy.text}`);
  return { layout: { scratch, canaryNamespace, canaries }, snapshot: await snapshot(url, canaries) };
}

async function snapshot(url: string, paths: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const path of paths) {
    const r = await jsonCall(url, 'GET', path);
    out.set(path, `${r.status} ${r.text}`);
  }
  return out;
}

/** Runs `count` requests of `seed` from index 0, `concurrency` at a time, and checks the canaries. */
export async function runFuzz(options: FuzzOptions, layout: FuzzLayout, before: Map<string, string>): Promise<FuzzSummary> {
  const boundMs = options.boundMs ?? 10_000;
  const concurrency = options.concurrency ?? 4;
  const outcomes: Outcome[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < options.count) {
      const index = next++;
      const req = generate(options.seed, index, layout);
      const started = Date.now();
      const a = await send(options.url, req, boundMs);
      const problem = judge(req, a);
      outcomes.push({ index, kind: req.kind, status: a.status, closed: a.closed, hung: a.hung, error: a.error, ms: Date.now() - started, problem });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  const after = await snapshot(options.url, layout.canaries);
  const canaryDiffs = layout.canaries
    .filter((p) => before.get(p) !== after.get(p))
    .map((p) => `${p}: before ${before.get(p)?.slice(0, 300)}\n  after ${after.get(p)?.slice(0, 300)}`);
  const byKind: FuzzSummary['byKind'] = {};
  for (const o of outcomes) {
    const k = (byKind[o.kind] ??= { count: 0, '2xx': 0, '4xx': 0, '5xx': 0, closed: 0, problems: 0 });
    k.count++;
    if (o.status !== undefined && o.status < 300) k['2xx']++;
    else if (o.status !== undefined && o.status < 500) k['4xx']++;
    else if (o.status !== undefined) k['5xx']++;
    else k.closed++;
    if (o.problem !== undefined) k.problems++;
  }
  const times = outcomes.map((o) => o.ms).sort((a, b) => a - b);
  return {
    seed: options.seed,
    count: outcomes.length,
    byKind,
    status5xx: outcomes.filter((o) => (o.status ?? 0) >= 500).length,
    hangs: outcomes.filter((o) => o.hung === true).length,
    problems: outcomes.filter((o) => o.problem !== undefined).sort((a, b) => a.index - b.index),
    maxMs: times[times.length - 1] ?? 0,
    p99Ms: times[Math.floor(times.length * 0.99)] ?? 0,
    canariesIntact: canaryDiffs.length === 0,
    canaryDiffs,
  };
}

/** The request of `seed` at `index`, described for a failure message (reproducible from these two numbers). */
export function describeRequest(seed: number, index: number, layout: FuzzLayout): string {
  const r = generate(seed, index, layout);
  const body = r.raw ?? r.body;
  const shown = body === undefined ? '' : ` body ${body.length} bytes: ${JSON.stringify(body.subarray(0, 160).toString('latin1'))}`;
  return r.raw !== undefined
    ? `#${index} ${r.kind} raw${shown}`
    : `#${index} ${r.kind} ${r.method ?? ''} ${(r.path ?? '').slice(0, 200)} ${JSON.stringify(r.headers ?? {}).slice(0, 200)}${shown}`;
}
