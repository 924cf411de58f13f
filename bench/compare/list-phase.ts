/**
 * LIST of N ConfigMaps in JSON and in protobuf (`application/vnd.kubernetes.protobuf`, what client-go
 * components ask for): N ConfigMaps created in a scratch namespace, then per encoding one LIST to warm
 * up and `lists` measured LISTs one after another, with the server CPU they took. Each answer is
 * checked (JSON: every object is there; protobuf: the `k8s\0` envelope). The namespace is deleted
 * afterwards.
 */
import { bulkCreate, configMapsPath } from '../fixtures.js';
import type { HttpClient } from '../http-client.js';
import { log } from '../scenario.js';
import { createScratchNamespace, scratchNamespaceName } from '../scratch-namespace.js';
import { removeScratchNamespace } from './cleanup.js';
import { clientFor, type LiveTarget } from './live-target.js';
import type { CompareOptions } from './options.js';
import type { ComparisonRow, ScenarioInfo } from './results.js';
import { curveAt, latencyCurve } from './rows.js';

const LIST_TIMEOUT_MS = 120_000;

const ENCODINGS = [
  { id: 'list-json', title: 'LIST, JSON', accept: 'application/json' },
  { id: 'list-protobuf', title: 'LIST, protobuf', accept: 'application/vnd.kubernetes.protobuf' },
] as const;
type Encoding = (typeof ENCODINGS)[number];

/** The LIST scenarios (`per` is filled in with the object count by listScenarios). */
export function listScenarios(objects: number): ScenarioInfo[] {
  return ENCODINGS.map((e) => ({ id: e.id, title: `${e.title} (${objects.toLocaleString('en-US')})`, per: 'LIST', throughputUnit: 'LISTs/s' }));
}

/** Throws unless `body` is a complete LIST of the `objects` ConfigMaps named `list-*` in `encoding`. */
function checkList(encoding: Encoding, body: string, objects: number): void {
  if (encoding.id === 'list-protobuf') {
    if (!body.startsWith('k8s\u0000')) throw new Error(`protobuf LIST: no k8s protobuf envelope (starts with ${JSON.stringify(body.slice(0, 20))})`);
    return;
  }
  const items = (JSON.parse(body) as { items?: Array<{ metadata?: { name?: string } }> }).items ?? [];
  const ours = items.filter((i) => i.metadata?.name?.startsWith('list-') === true).length;
  if (ours !== objects) throw new Error(`JSON LIST returned ${ours} of the ${objects} ConfigMaps`);
}

async function measureEncoding(t: LiveTarget, client: HttpClient, path: string, encoding: Encoding, o: CompareOptions): Promise<ComparisonRow> {
  const headers = { accept: encoding.accept };
  const first = await client.request('GET', path, { headers, timeoutMs: LIST_TIMEOUT_MS });
  if (first.status !== 200) throw new Error(`${encoding.title}: HTTP ${first.status}: ${first.body.slice(0, 300)}`);
  checkList(encoding, first.body, o.listObjects);
  log(`${t.label}: ${o.lists} × ${encoding.title} (${(first.bytes / 1048576).toFixed(1)} MiB)`);
  const times: number[] = [];
  let failed = 0;
  const stop = t.cpu.available() ? t.cpu.start() : undefined;
  const t0 = performance.now();
  for (let i = 0; i < o.lists; i++) {
    const res = await client.request('GET', path, { headers, discardBody: true, timeoutMs: LIST_TIMEOUT_MS });
    if (res.status === 200 && res.bytes > 0) times.push(res.ms);
    else failed++;
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = stop?.();
  t.assertAlive();
  const latency = latencyCurve(times);
  return {
    scenario: encoding.id,
    target: t.label,
    throughput: times.length / seconds,
    cpuMsPerOp: cpu !== undefined && times.length > 0 ? cpu.totalMs / times.length : null,
    p50Ms: curveAt(latency, 0.5),
    p99Ms: curveAt(latency, 0.99),
    latency,
    ok: times.length,
    failed,
    note: `${(first.bytes / 1048576).toFixed(1)} MiB per LIST`,
  };
}

/** Creates `listObjects` ConfigMaps and measures LISTs of them in each encoding. */
export async function measureLists(t: LiveTarget, o: CompareOptions): Promise<ComparisonRow[]> {
  const client = clientFor(t, o.concurrency);
  const ns = scratchNamespaceName('list');
  const path = configMapsPath(ns);
  try {
    await createScratchNamespace(client, ns);
    log(`${t.label}: creating ${o.listObjects} ConfigMaps to list`);
    const created = await bulkCreate(client, {
      prefix: 'list',
      count: o.listObjects,
      bytes: o.payloadBytes,
      concurrency: o.concurrency,
      timeoutMs: 600_000,
      path,
    });
    if (created.created !== o.listObjects) throw new Error(`only ${created.created} of ${o.listObjects} ConfigMaps were created: ${created.firstError ?? ''}`);
    t.assertAlive();
    const rows: ComparisonRow[] = [];
    for (const encoding of ENCODINGS) rows.push(await measureEncoding(t, client, path, encoding, o));
    return rows;
  } finally {
    log(`${t.label}: deleting ${ns}`);
    await removeScratchNamespace(client, ns, o.concurrency, t.label);
    client.close();
  }
}
