/**
 * A mixed load for durability tests, recorded as a history the linearizability checker reads: N
 * clients, each looping over creates, compare-and-swap updates and deletes (PUT and DELETE
 * conditional on the resourceVersion the client last saw), gets and consistent lists of ConfigMaps
 * named from a small shared pool (so clients race on the same objects), each request on a fresh
 * connection (any worker, any instance when `urls` has several). Every write carries a value no other
 * write carries, so its effect can be found in a watch.
 */
import { fresh, type FreshResponse } from '../helpers/redis-workers.js';
import type { HistoryItem, HistoryOperation, HistoryStatus } from '../helpers/linearizability.js';

export interface MixedLoadOptions {
  /** Servers to spread requests over (round-robin per request). */
  urls: string[];
  namespace: string;
  clients: number;
  /** Objects in the shared pool (default 8). */
  names?: number;
  /** Label (key=value) on every object; lists select it. */
  label: string;
  /** Clock (microseconds) shared with whatever else the test times. */
  now: () => number;
  shouldStop: () => boolean;
  /** A request without a complete answer after this long counts as unknown (default 10 s). */
  timeoutMs?: number;
  /** Pause after a failed or unknown request, so an outage is not a busy loop (default 50 ms). */
  failurePauseMs?: number;
}

/** An answer the load did not expect (a 500, a 400...): the checker gets it as unknown, the test fails on it. */
export interface UnexpectedAnswer {
  op: string;
  name: string;
  status: number;
  text: string;
}

/** A running load: its records grow as operations return; `done` settles once every client stopped. */
export interface MixedLoad {
  operations: HistoryOperation[];
  unexpected: UnexpectedAnswer[];
  done: Promise<void>;
}

/** Whether an HTTP answer (or a failed connection) says the request's outcome is unknown. */
function unknownOutcome(r: FreshResponse | undefined): boolean {
  return r === undefined || r.status === 504 || r.status === 0;
}

function configMap(name: string, label: string, value: string, rv?: string): Record<string, unknown> {
  const [key = 'lin', val = ''] = label.split('=');
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, labels: { [key]: val }, ...(rv === undefined ? {} : { resourceVersion: rv }) },
    data: { v: value },
  };
}

/** Starts the clients; they run until `shouldStop()`. Operations are recorded as they return. */
export function startMixedLoad(o: MixedLoadOptions): MixedLoad {
  const operations: HistoryOperation[] = [];
  const unexpected: UnexpectedAnswer[] = [];
  const base = `/api/v1/namespaces/${o.namespace}/configmaps`;
  const names = Array.from({ length: o.names ?? 8 }, (_, i) => `obj-${i}`);
  let next = 0;
  const url = (): string => o.urls[next++ % o.urls.length] ?? '';
  const timeoutMs = o.timeoutMs ?? 10_000;

  const client = async (id: number): Promise<void> => {
    // The resourceVersion this client last saw for each object (conditional writes use it).
    const seen = new Map<string, string>();
    for (let seq = 0; !o.shouldStop(); seq++) {
      const name = names[Math.floor(Math.random() * names.length)] ?? 'obj-0';
      const pick = Math.random();
      const value = `c${id}-${seq}`;
      const known = seen.get(name);
      const kind: HistoryOperation['op'] =
        pick < 0.2 ? 'create' : pick < 0.45 ? (known ? 'update' : 'get') : pick < 0.55 ? (known ? 'delete' : 'get') : pick < 0.85 ? 'get' : 'list';
      const op: HistoryOperation = {
        client: id,
        call: o.now(),
        return: 0,
        op: kind,
        name: kind === 'list' ? '' : name,
        value: kind === 'create' || kind === 'update' ? value : '',
        expectRv: kind === 'update' || kind === 'delete' ? (known ?? '') : '',
        result: { status: 'unknown', rv: '', value: '', items: [] },
      };
      let r: FreshResponse | undefined;
      // A connection refused never carried the request: nothing was done.
      let refused = false;
      try {
        switch (kind) {
          case 'create':
            r = await fresh(url(), base, { method: 'POST', body: configMap(name, o.label, value), timeoutMs });
            break;
          case 'update':
            r = await fresh(url(), `${base}/${name}`, { method: 'PUT', body: configMap(name, o.label, value, known), timeoutMs });
            break;
          case 'delete':
            r = await fresh(url(), `${base}/${name}`, {
              method: 'DELETE',
              body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion: known } },
              timeoutMs,
            });
            break;
          case 'get':
            r = await fresh(url(), `${base}/${name}`, { timeoutMs });
            break;
          case 'list':
            r = await fresh(url(), `${base}?labelSelector=${encodeURIComponent(o.label)}`, { timeoutMs });
            break;
        }
      } catch (err) {
        r = undefined;
        refused = (err as NodeJS.ErrnoException).code === 'ECONNREFUSED';
      }
      op.return = o.now();
      const status: HistoryStatus = refused ? 'failed' : unknownOutcome(r) ? 'unknown' : statusOf(kind, r?.status ?? 0);
      op.result.status = status;
      if (r !== undefined && status === 'unknown' && !unknownOutcome(r)) unexpected.push({ op: kind, name, status: r.status, text: r.text.slice(0, 300) });
      if (r !== undefined && status === 'ok') {
        const body = r.body as { metadata?: { resourceVersion?: string }; data?: { v?: string }; items?: unknown[] } | undefined;
        op.result.rv = String(body?.metadata?.resourceVersion ?? '');
        if (kind === 'get') op.result.value = String(body?.data?.v ?? '');
        if (kind === 'list') op.result.items = (body?.items ?? []).map(itemOf);
        if (kind === 'delete') seen.delete(name);
        else if (kind === 'list') for (const item of op.result.items) seen.set(item.name, item.rv);
        else seen.set(name, op.result.rv);
      } else if (status === 'notfound') seen.delete(name);
      operations.push(op);
      if (status === 'unknown' || status === 'failed') await new Promise((resolve) => setTimeout(resolve, o.failurePauseMs ?? 50));
    }
  };
  const done = Promise.all(Array.from({ length: o.clients }, (_, id) => client(id))).then(() => undefined);
  return { operations, unexpected, done };
}

function itemOf(item: unknown): HistoryItem {
  const i = item as { metadata?: { name?: string; resourceVersion?: string }; data?: { v?: string } };
  return { name: String(i.metadata?.name ?? ''), rv: String(i.metadata?.resourceVersion ?? ''), value: String(i.data?.v ?? '') };
}

/** What an HTTP status means for the operation; `unknown` for anything unexpected (reported separately). */
function statusOf(kind: HistoryOperation['op'], code: number): HistoryStatus {
  if (code === 503) return 'failed';
  switch (kind) {
    case 'create':
      return code === 201 ? 'ok' : code === 409 ? 'exists' : 'unknown';
    case 'update':
    case 'delete':
      return code === 200 ? 'ok' : code === 409 ? 'conflict' : code === 404 ? 'notfound' : 'unknown';
    case 'get':
      return code === 200 ? 'ok' : code === 404 ? 'notfound' : 'unknown';
    case 'list':
      return code === 200 ? 'ok' : 'unknown';
  }
}
