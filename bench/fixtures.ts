/** ConfigMap bodies of a given size and bulk creation of them through the API. */
import { type HttpClient, runPool } from './http-client.js';
import { percentile } from './stats.js';

export const CM_PATH = '/api/v1/namespaces/default/configmaps';

/** The ConfigMap collection of namespace `ns`. */
export const configMapsPath = (ns: string): string => `/api/v1/namespaces/${ns}/configmaps`;

const POOL_SIZE = 1 << 16;
const CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789';
let pool = '';

/** `bytes` pseudo-random characters (different slices for different `seed`s; not compressible to nothing). */
export function payload(bytes: number, seed: number): string {
  if (pool === '') {
    const parts: string[] = [];
    for (let i = 0; i < POOL_SIZE; i++) parts.push(CHARS[Math.floor(Math.random() * CHARS.length)]);
    pool = parts.join('');
  }
  if (bytes <= 0) return '';
  let out = '';
  let offset = (seed * 7919) % POOL_SIZE;
  while (out.length < bytes) {
    const take = Math.min(bytes - out.length, POOL_SIZE - offset);
    out += pool.slice(offset, offset + take);
    offset = 0;
  }
  return out;
}

/** A ConfigMap JSON body named `name` with `bytes` of data (plus `extra` data keys). */
export function configMapBody(
  name: string,
  bytes: number,
  seed: number,
  extra: Record<string, string> = {},
  resourceVersion?: string,
  namespace = 'default',
): string {
  const metadata: Record<string, string> = { name };
  // Updates carry the namespace as kubectl and client-go send it (the object came from a GET).
  if (resourceVersion !== undefined) {
    metadata.namespace = namespace;
    metadata.resourceVersion = resourceVersion;
  }
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { ...extra, payload: payload(bytes, seed) } });
}

export interface BulkResult {
  created: number;
  failed: number;
  seconds: number;
  latencies: number[];
  firstError: string | undefined;
  /** resourceVersion of each created object, by index. */
  resourceVersions: string[];
}

/**
 * Creates `count` ConfigMaps `${prefix}-${i}` with `concurrency` requests in flight, giving up new
 * requests after `timeoutMs`. Prints progress to stderr every `progressEvery` objects when set.
 */
export async function bulkCreate(
  client: HttpClient,
  options: {
    prefix: string;
    count: number;
    bytes: number;
    concurrency: number;
    timeoutMs: number;
    progressEvery?: number;
    label?: string;
    keepLatencies?: boolean;
    /** The ConfigMap collection to create in (default: namespace `default`). */
    path?: string;
  },
): Promise<BulkResult> {
  const latencies: number[] = [];
  const resourceVersions: string[] = [];
  let created = 0;
  let failed = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  let lastProgress = t0;
  await runPool(options.count, options.concurrency, t0 + options.timeoutMs, async (i) => {
    try {
      const res = await client.request('POST', options.path ?? CM_PATH, { body: configMapBody(`${options.prefix}-${i}`, options.bytes, i) });
      if (res.status === 201) {
        created++;
        if (options.keepLatencies) latencies.push(res.ms);
        const m = /"resourceVersion":"(\d+)"/.exec(res.body);
        if (m) resourceVersions[i] = m[1];
      } else {
        failed++;
        firstError ??= `HTTP ${res.status}: ${res.body.slice(0, 300)}`;
      }
    } catch (err) {
      failed++;
      firstError ??= err instanceof Error ? err.message : String(err);
    }
    const done = created + failed;
    if (options.progressEvery !== undefined && done % options.progressEvery === 0) {
      const now = performance.now();
      const rate = options.progressEvery / ((now - lastProgress) / 1000);
      lastProgress = now;
      process.stderr.write(`  ${options.label ?? 'create'}: ${done}/${options.count} (${rate.toFixed(0)}/s)\n`);
    }
  });
  if (failed > 0 && firstError !== undefined) process.stderr.write(`  ${options.label ?? 'create'}: ${failed} failed, first: ${firstError}\n`);
  return { created, failed, seconds: (performance.now() - t0) / 1000, latencies, firstError, resourceVersions };
}

/** p50 and p99 of latencies in ms. */
export function p50p99(latencies: readonly number[]): { p50: number; p99: number } {
  return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
}
