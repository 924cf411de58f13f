/**
 * A steady ConfigMap write load for fault tests: N concurrent writers, each alternating creates of
 * new ConfigMaps and merge-patches of its latest acknowledged one (data.v counts up), each request
 * on a fresh connection. Every attempt is recorded with its outcome, so tests can check afterwards
 * that every acknowledged write is in the final state and in the watch stream.
 */
import { fresh } from './redis-workers.js';
import type { SeenEvent } from './resuming-watch.js';

export interface WriteAttempt {
  writer: number;
  op: 'create' | 'update';
  name: string;
  /** data.v this attempt writes. */
  v: number;
  startedAt: number;
  ms: number;
  /** HTTP status; undefined when the connection failed. */
  status?: number;
  /** Connection error (reset, refused, no response in time). */
  error?: string;
  /** resourceVersion of the stored object, for a 2xx answer. */
  rv?: string;
  retryAfter?: string;
  /** `kind` and `reason` of the body of a non-2xx answer. */
  kind?: string;
  reason?: string;
  message?: string;
}

export interface WriteLoadOptions {
  url: string;
  namespace: string;
  writers: number;
  /** Writers stop once this returns true. */
  shouldStop: () => boolean;
  /** Name prefix (default `w`). */
  prefix?: string;
  /** Pause after a failed attempt, so an outage is not a busy loop (default 50 ms). */
  failurePauseMs?: number;
  /** A request without a complete answer after this long counts as hung (default 15 s). */
  timeoutMs?: number;
}

export function acknowledged(a: WriteAttempt): boolean {
  return a.status !== undefined && a.status >= 200 && a.status < 300;
}

/** Runs the writers until `shouldStop()`; resolves with every attempt, in start order per writer. */
export async function runWriteLoad(options: WriteLoadOptions): Promise<WriteAttempt[]> {
  const attempts: WriteAttempt[] = [];
  const prefix = options.prefix ?? 'w';
  const base = `/api/v1/namespaces/${options.namespace}/configmaps`;
  const writer = async (k: number): Promise<void> => {
    let latest: { name: string; v: number } | undefined;
    for (let i = 0; !options.shouldStop(); i++) {
      const update = i % 2 === 1 && latest !== undefined;
      const attempt: WriteAttempt =
        update && latest
          ? { writer: k, op: 'update', name: latest.name, v: latest.v + 1, startedAt: Date.now(), ms: 0 }
          : { writer: k, op: 'create', name: `${prefix}-${k}-${i}`, v: 1, startedAt: Date.now(), ms: 0 };
      attempts.push(attempt);
      try {
        const r =
          attempt.op === 'create'
            ? await fresh(options.url, base, {
                method: 'POST',
                timeoutMs: options.timeoutMs,
                body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: attempt.name }, data: { v: String(attempt.v), writer: String(k) } },
              })
            : await fresh(options.url, `${base}/${attempt.name}`, {
                method: 'PATCH',
                contentType: 'application/merge-patch+json',
                body: { data: { v: String(attempt.v) } },
                timeoutMs: options.timeoutMs,
              });
        attempt.ms = r.ms;
        attempt.status = r.status;
        if (acknowledged(attempt)) {
          attempt.rv = String(r.body?.metadata?.resourceVersion);
          // An update that lands after an unacknowledged one still counts up from the acknowledged value.
          latest = { name: attempt.name, v: attempt.v };
        } else {
          const retryAfter = r.headers['retry-after'];
          if (typeof retryAfter === 'string') attempt.retryAfter = retryAfter;
          attempt.kind = typeof r.body?.kind === 'string' ? r.body.kind : undefined;
          attempt.reason = typeof r.body?.reason === 'string' ? r.body.reason : undefined;
          attempt.message = typeof r.body?.message === 'string' ? r.body.message : r.text.slice(0, 200);
        }
      } catch (err) {
        attempt.ms = Date.now() - attempt.startedAt;
        attempt.error = err instanceof Error ? err.message : String(err);
      }
      if (!acknowledged(attempt)) {
        // The outcome is unknown: keep patching from the last acknowledged value of that object
        // (a later acknowledged patch then sets a v the unknown one may also have set; both are fine).
        if (attempt.op === 'update' && latest) latest = { name: latest.name, v: Math.max(latest.v, attempt.v) };
        await new Promise((r) => setTimeout(r, options.failurePauseMs ?? 50));
      }
    }
  };
  await Promise.all(Array.from({ length: options.writers }, (_, k) => writer(k)));
  return attempts;
}

/** Counts of outcomes, for messages and the report. */
export function summarize(attempts: readonly WriteAttempt[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of attempts) {
    const key = a.status !== undefined ? String(a.status) : `error:${(a.error ?? '').split(' ')[0] ?? ''}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/**
 * Problems with the final state: an acknowledged create missing, or an object whose data.v is older
 * than its last acknowledged write or not written by any attempt. `items` is the final LIST.
 */
export function lostWrites(attempts: readonly WriteAttempt[], items: readonly any[]): string[] {
  const problems: string[] = [];
  const byName = new Map<string, any>();
  for (const item of items) byName.set(String(item?.metadata?.name), item);
  const names = new Set(attempts.map((a) => a.name));
  for (const name of names) {
    const mine = attempts.filter((a) => a.name === name);
    const acked = mine.filter(acknowledged);
    const item = byName.get(name);
    if (acked.length === 0) continue;
    if (item === undefined) {
      problems.push(`${name}: acknowledged (${acked.map((a) => `${a.op} v${a.v} rv${a.rv ?? ''}`).join(', ')}) but missing from the final list`);
      continue;
    }
    const finalV = Number(item?.data?.v);
    const maxAcked = Math.max(...acked.map((a) => a.v));
    const writers = mine.filter((a) => a.v === finalV);
    if (finalV < maxAcked) problems.push(`${name}: final data.v ${finalV} is older than the acknowledged v${maxAcked}`);
    else if (writers.length === 0) problems.push(`${name}: final data.v ${finalV} was never written`);
    else if (finalV > maxAcked && writers.every(acknowledged)) problems.push(`${name}: final v${finalV} is past the last acknowledged write yet acknowledged`);
    const lastAcked = acked.find((a) => a.v === maxAcked);
    if (finalV === maxAcked && lastAcked?.rv !== undefined && BigInt(item.metadata.resourceVersion) < BigInt(lastAcked.rv)) {
      problems.push(`${name}: final resourceVersion ${String(item.metadata.resourceVersion)} is older than the acknowledged ${lastAcked.rv}`);
    }
  }
  return problems;
}

/**
 * Problems with a watch's events against the attempts: an acknowledged write whose resourceVersion
 * is not among the events with its name and data, or an event no attempt could have produced.
 */
export function watchMismatches(attempts: readonly WriteAttempt[], events: readonly SeenEvent[]): string[] {
  const problems: string[] = [];
  const byRv = new Map<string, SeenEvent>();
  for (const e of events) byRv.set(e.rv, e);
  for (const a of attempts) {
    if (!acknowledged(a) || a.rv === undefined) continue;
    const e = byRv.get(a.rv);
    if (!e) problems.push(`acknowledged ${a.op} of ${a.name} v${a.v} at rv ${a.rv}: no watch event`);
    else if (e.object?.metadata?.name !== a.name || e.object?.data?.v !== String(a.v) || e.type !== (a.op === 'create' ? 'ADDED' : 'MODIFIED')) {
      problems.push(
        `acknowledged ${a.op} of ${a.name} v${a.v} at rv ${a.rv}: watch event is ${e.type} ${String(e.object?.metadata?.name)} v${String(e.object?.data?.v)}`,
      );
    }
  }
  const tried = new Set(attempts.map((a) => `${a.name}=${a.v}`));
  for (const e of events) {
    if (e.type !== 'ADDED' && e.type !== 'MODIFIED') continue;
    const key = `${String(e.object?.metadata?.name)}=${String(e.object?.data?.v)}`;
    if (!tried.has(key)) problems.push(`watch event ${e.type} ${key} at rv ${e.rv} matches no write attempt`);
  }
  return problems;
}
