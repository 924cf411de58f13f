/**
 * The per-request scenarios of the comparison, on ~1 KiB ConfigMaps with a fixed number of requests
 * in flight: the first creates on a fresh server, a warm-up, then create, GET, update (PUT with the
 * resourceVersion, as client-go sends it), JSON merge patch, server-side apply (forced, taking the
 * payload over from the creator) and delete, each with the server CPU it took. Each part works in a
 * scratch namespace of its own that is deleted afterwards, so the server is left as it was found.
 */
import { configMapBody, configMapsPath, payload } from '../fixtures.js';
import type { HttpResponse, RequestOptions } from '../http-client.js';
import { log } from '../scenario.js';
import { timedPhase, withCpu, type Phase } from '../scenario-crud.js';
import { createScratchNamespace, scratchNamespaceName } from '../scratch-namespace.js';
import { removeScratchNamespace } from './cleanup.js';
import { clientFor, type LiveTarget } from './live-target.js';
import type { CompareOptions } from './options.js';
import { FRESH_CREATE_SCENARIO, type ComparisonRow, type ScenarioInfo } from './results.js';
import { phaseRow } from './rows.js';

export type Verb = 'create' | 'get' | 'update' | 'patch' | 'apply' | 'delete';

/** The measured verbs, in the order they run (each reads or changes what the previous one left), with the status a success has. */
export const VERB_SCENARIOS: ReadonlyArray<ScenarioInfo & { id: Verb; expect: number }> = [
  { id: 'create', title: 'create', per: 'request', throughputUnit: 'ops/s', expect: 201 },
  { id: 'get', title: 'GET', per: 'request', throughputUnit: 'ops/s', expect: 200 },
  { id: 'update', title: 'update (PUT)', per: 'request', throughputUnit: 'ops/s', expect: 200 },
  { id: 'patch', title: 'merge patch', per: 'request', throughputUnit: 'ops/s', expect: 200 },
  { id: 'apply', title: 'server-side apply', per: 'request', throughputUnit: 'ops/s', expect: 200 },
  { id: 'delete', title: 'delete', per: 'request', throughputUnit: 'ops/s', expect: 200 },
];

/** The first `freshOps` creates on a freshly started server (before any warm-up). */
export function freshScenario(o: CompareOptions): ScenarioInfo {
  return { id: FRESH_CREATE_SCENARIO, title: `create, first ${o.freshOps.toLocaleString('en-US')} after start`, per: 'request', throughputUnit: 'ops/s' };
}

const RV = /"resourceVersion":"(\d+)"/;

/** Sends one request (HttpClient.request's shape; paired rounds also pass an HTTP/2 connection's). */
export type SendRequest = (method: string, path: string, options?: RequestOptions) => Promise<HttpResponse>;

/**
 * The requests of each verb on ConfigMap `${prefix}-${i}` in namespace `ns`, sent with `send`; `rvs`
 * holds the resourceVersion creates and updates returned.
 */
export function verbRequests(send: SendRequest, ns: string, prefix: string, bytes: number, rvs: string[]): Record<Verb, (i: number) => Promise<HttpResponse>> {
  const path = configMapsPath(ns);
  const name = (i: number): string => `${prefix}-${i}`;
  const keepRv = (i: number, res: HttpResponse): HttpResponse => {
    const m = RV.exec(res.body);
    if (m) rvs[i] = m[1];
    return res;
  };
  return {
    create: async (i: number) => keepRv(i, await send('POST', path, { body: configMapBody(name(i), bytes, i) })),
    get: (i: number) => send('GET', `${path}/${name(i)}`, { discardBody: true }),
    update: async (i: number) => {
      const rv = rvs[i];
      if (rv === undefined) return { status: 0, ms: 0, body: `${name(i)} has no resourceVersion (its create failed)`, bytes: 0 };
      return keepRv(i, await send('PUT', `${path}/${name(i)}`, { body: configMapBody(name(i), bytes, i + 1, {}, rv, ns) }));
    },
    patch: (i: number) =>
      send('PATCH', `${path}/${name(i)}`, {
        body: JSON.stringify({ metadata: { labels: { 'bench-patched': String(i) } }, data: { patched: String(i) } }),
        headers: { 'content-type': 'application/merge-patch+json' },
      }),
    apply: (i: number) =>
      send('PATCH', `${path}/${name(i)}?fieldManager=bench-apply&force=true`, {
        body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: name(i), namespace: ns }, data: { payload: payload(bytes, i + 2) } }),
        headers: { 'content-type': 'application/apply-patch+yaml' },
      }),
    delete: (i: number) => send('DELETE', `${path}/${name(i)}`, { discardBody: true }),
  };
}

/** Throws when a warm-up step mostly failed (the measurement after it would be meaningless). */
function checkWarm(step: string, p: Phase): void {
  if (p.ok < p.failed) throw new Error(`warm-up ${step}: ${p.failed} of ${p.ok + p.failed} failed; first error: ${p.firstError ?? ''}`);
}

/**
 * On a server started just now: `freshOps` creates, measured (row `create-fresh`); then the warm-up:
 * `warmupCreates` creates, `warmupGets` GETs and `warmupVerbs` updates, patches, applies and
 * deletes. Returns the fresh row (undefined when `measureFresh` is false: only the warm-up runs).
 */
export async function freshAndWarmUp(t: LiveTarget, o: CompareOptions, measureFresh: boolean): Promise<ComparisonRow | undefined> {
  const client = clientFor(t, o.concurrency);
  const ns = scratchNamespaceName('warm');
  const c = o.concurrency;
  try {
    await createScratchNamespace(client, ns);
    let fresh: ComparisonRow | undefined;
    if (measureFresh) {
      log(`${t.label}: ${o.freshOps} creates on the fresh server`);
      const r = verbRequests((method, path, options) => client.request(method, path, options), ns, 'fresh', o.payloadBytes, []);
      fresh = phaseRow(FRESH_CREATE_SCENARIO, t.label, await withCpu(t.cpu, () => timedPhase(o.freshOps, c, 201, r.create)));
      t.assertAlive();
    }
    log(`${t.label}: warm-up: ${o.warmupCreates} creates, ${o.warmupGets} GETs, ${o.warmupVerbs} of each other verb`);
    const r = verbRequests((method, path, options) => client.request(method, path, options), ns, 'warm', o.payloadBytes, []);
    checkWarm('creates', await timedPhase(o.warmupCreates, c, 201, r.create));
    checkWarm('GETs', await timedPhase(o.warmupGets, c, 200, (i) => r.get(i % o.warmupCreates)));
    const verbs = Math.min(o.warmupVerbs, o.warmupCreates);
    checkWarm('updates', await timedPhase(verbs, c, 200, r.update));
    checkWarm('patches', await timedPhase(verbs, c, 200, r.patch));
    checkWarm('applies', await timedPhase(verbs, c, 200, r.apply));
    checkWarm('deletes', await timedPhase(verbs, c, 200, r.delete));
    t.assertAlive();
    return fresh;
  } finally {
    log(`${t.label}: deleting ${ns}`);
    await removeScratchNamespace(client, ns, o.concurrency, t.label);
    client.close();
  }
}

/** Measures each verb of VERB_SCENARIOS with `ops` requests, `concurrency` in flight. */
export async function measureVerbs(t: LiveTarget, o: CompareOptions): Promise<ComparisonRow[]> {
  const client = clientFor(t, o.concurrency);
  const ns = scratchNamespaceName('verbs');
  const rows: ComparisonRow[] = [];
  try {
    await createScratchNamespace(client, ns);
    const r = verbRequests((method, path, options) => client.request(method, path, options), ns, 'cm', o.payloadBytes, []);
    for (const verb of VERB_SCENARIOS) {
      log(`${t.label}: ${o.ops} × ${verb.title}`);
      rows.push(phaseRow(verb.id, t.label, await withCpu(t.cpu, () => timedPhase(o.ops, o.concurrency, verb.expect, r[verb.id]))));
      t.assertAlive();
    }
    return rows;
  } finally {
    log(`${t.label}: deleting ${ns}`);
    await removeScratchNamespace(client, ns, o.concurrency, t.label);
    client.close();
  }
}
