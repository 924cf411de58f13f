/**
 * aggregator: what the aggregation layer adds to a request for an extension API server. The
 * extension server (HTTPS, in the bench process: test/helpers/extension-server.ts, a small widgets
 * list and a watch) is registered through an APIService and an ExternalName Service; the same GETs
 * and the same watch events are then measured directly against it (with a front-proxy client
 * certificate, as the aggregator presents one) and through Capstan. GETs: --create-ops requests,
 * --concurrency in flight. Watch: one watch each way; events are sent one at a time (latency from
 * the send to the arrival) and then as a burst (events per second until the last one arrived).
 * Under the table: added latency (p50) and server CPU per proxied request and event.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpClient, runPool } from './http-client.js';
import { metric, type OperationRow, type ScenarioResult } from './metrics.js';
import { log, sleep, withTarget, type Scenario } from './scenario.js';
import { percentile } from './stats.js';
import { generateCA, generateLeaf } from '../src/tls/certificates.js';
import { startExtensionServer, type ExtensionServer } from '../test/helpers/extension-server.js';

const GROUP = 'bench-widgets.example.com';
const VERSION = 'v1';
const LIST = `/apis/${GROUP}/${VERSION}/namespaces/default/widgets`;
const NAMESPACE = 'kube-system';
const SERVICE = 'bench-widgets';
const WATCH_EVENTS = 500;
const BURST_EVENTS = 5_000;

const ROWS = {
  directGet: 'GET widgets, directly',
  proxiedGet: 'GET widgets, through Capstan',
  directWatch: 'watch event, directly',
  proxiedWatch: 'watch event, through Capstan',
};

/** A watch's arrivals: each complete line is an event carrying its send time and sequence number. */
interface WatchStream {
  arrivals: Map<number, number>;
  close(): void;
}

function openWatch(
  send: (options: RequestOptions, onResponse: (res: IncomingMessage) => void) => ClientRequest,
  options: RequestOptions,
): Promise<WatchStream> {
  return new Promise((resolve, reject) => {
    const arrivals = new Map<number, number>();
    let pending = '';
    const req: ClientRequest = send(options, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`watch: HTTP ${res.statusCode ?? 0}`));
        res.resume();
        return;
      }
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const now = performance.now();
        pending += chunk;
        let nl: number;
        while ((nl = pending.indexOf('\n')) >= 0) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          const seq = (JSON.parse(line) as { object: { seq: number } }).object.seq;
          arrivals.set(seq, now);
        }
      });
      resolve({ arrivals, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

function row(operation: string, latencies: number[], seconds: number, ok: number, failed: number, cpuMs: number | null): OperationRow {
  return {
    operation,
    opsPerSecond: seconds > 0 ? ok / seconds : 0,
    cpuMsPerOp: cpuMs !== null && ok > 0 ? cpuMs / ok : null,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    ok,
    failed,
  };
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

export const aggregatorScenario: Scenario = {
  name: 'aggregator',
  title: 'aggregator: GETs and watch events of an extension API server (HTTPS, in the bench process), directly and through Capstan',
  async run(target, options) {
    const dir = mkdtempSync(join(tmpdir(), 'capstan-bench-aggregator-'));
    const certDir = join(dir, 'pki');
    let ext: ExtensionServer | undefined;
    try {
      return await withTarget(
        target,
        options,
        async (t): Promise<ScenarioResult> => {
          // The direct client presents a certificate of its own CA, which the extension server trusts too.
          const benchCA = await generateCA('bench-front-proxy-ca');
          const benchClient = await generateLeaf(benchCA, { usage: 'client', user: 'front-proxy-client', groups: [] });
          ext = await startExtensionServer(
            GROUP,
            VERSION,
            readFileSync(join(certDir, 'front-proxy', 'ca.crt'), 'utf8') + benchCA.cert,
            `${SERVICE}.${NAMESPACE}.svc`,
          );
          const capstan = new HttpClient(t.server.url, options.concurrency);
          const direct = new HttpClient(`https://127.0.0.1:${ext.port}`, options.concurrency, {
            ca: ext.certs.caPem,
            cert: benchClient.cert,
            key: benchClient.key,
          });
          const identity = { 'X-Remote-User': 'system:admin', 'X-Remote-Group': 'system:masters' };
          try {
            const created = await Promise.all([
              capstan.request('POST', `/api/v1/namespaces/${NAMESPACE}/services`, {
                body: JSON.stringify({
                  apiVersion: 'v1',
                  kind: 'Service',
                  metadata: { name: SERVICE },
                  spec: { type: 'ExternalName', externalName: 'localhost' },
                }),
              }),
              capstan.request('POST', '/apis/apiregistration.k8s.io/v1/apiservices', {
                body: JSON.stringify({
                  apiVersion: 'apiregistration.k8s.io/v1',
                  kind: 'APIService',
                  metadata: { name: `${VERSION}.${GROUP}` },
                  spec: {
                    group: GROUP,
                    version: VERSION,
                    service: { namespace: NAMESPACE, name: SERVICE, port: ext.port },
                    caBundle: ext.certs.caBundle,
                    groupPriorityMinimum: 1500,
                    versionPriority: 10,
                  },
                }),
              }),
            ]);
            for (const r of created) if (r.status !== 201) throw new Error(`registering the extension server: HTTP ${r.status}: ${r.body.slice(0, 300)}`);
            log('aggregator: waiting for the APIService to be available');
            for (let i = 0; (await capstan.request('GET', LIST, { discardBody: true })).status !== 200; i++) {
              if (i > 600) throw new Error('the APIService did not become available within 30 s');
              await sleep(50);
            }
            const rows: OperationRow[] = [];
            const gets = async (client: HttpClient, headers: Record<string, string>, name: string, measureCpu: boolean): Promise<void> => {
              await runPool(
                200,
                options.concurrency,
                Number.POSITIVE_INFINITY,
                async () => void (await client.request('GET', LIST, { headers, discardBody: true })),
              );
              const latencies: number[] = [];
              let ok = 0;
              let failed = 0;
              const stopCpu = measureCpu && t.cpu.available() ? t.cpu.start() : undefined;
              const t0 = performance.now();
              await runPool(options.createOps, options.concurrency, Number.POSITIVE_INFINITY, async () => {
                const res = await client.request('GET', LIST, { headers, discardBody: true }).catch(() => undefined);
                if (res?.status === 200) {
                  ok++;
                  latencies.push(res.ms);
                } else failed++;
              });
              const seconds = (performance.now() - t0) / 1000;
              rows.push(row(name, latencies, seconds, ok, failed, stopCpu?.().totalMs ?? null));
            };
            log(`aggregator: ${options.createOps} GETs each way`);
            await gets(direct, identity, ROWS.directGet, false);
            await gets(capstan, {}, ROWS.proxiedGet, true);
            t.assertAlive();

            log(`aggregator: ${WATCH_EVENTS} paced and ${BURST_EVENTS} burst watch events`);
            const directWatch = await openWatch(httpsRequest, {
              host: '127.0.0.1',
              port: ext.port,
              path: `${LIST}?watch=true`,
              ca: ext.certs.caPem,
              cert: benchClient.cert,
              key: benchClient.key,
              headers: identity,
            });
            const capstanUrl = new URL(t.server.url);
            const proxiedWatch = await openWatch(httpRequest, { host: '127.0.0.1', port: Number(capstanUrl.port), path: `${LIST}?watch=true` });
            const server = ext;
            await waitFor(() => server.watchers() === 2, 'both watches');
            const sent = new Map<number, number>();
            let seq = 0;
            const emit = (): void => {
              sent.set(++seq, performance.now());
              server.emit({ type: 'MODIFIED', object: { kind: 'Widget', seq } });
            };
            for (let i = 0; i < WATCH_EVENTS; i++) {
              emit();
              const n = seq;
              await waitFor(() => directWatch.arrivals.has(n) && proxiedWatch.arrivals.has(n), `event ${n}`);
            }
            const paced = (w: WatchStream): number[] => [...sent.keys()].map((n) => (w.arrivals.get(n) ?? Number.NaN) - (sent.get(n) ?? 0));
            const [directPaced, proxiedPaced] = [paced(directWatch), paced(proxiedWatch)];
            const first = seq + 1;
            const stopCpu = t.cpu.available() ? t.cpu.start() : undefined;
            const t0 = performance.now();
            for (let i = 0; i < BURST_EVENTS; i++) emit();
            const last = seq;
            await waitFor(() => directWatch.arrivals.has(last), 'the burst, directly');
            const directSeconds = ((directWatch.arrivals.get(last) ?? t0) - t0) / 1000;
            await waitFor(() => proxiedWatch.arrivals.has(last), 'the burst, through Capstan');
            const proxiedSeconds = ((proxiedWatch.arrivals.get(last) ?? t0) - t0) / 1000;
            const burstCpu = stopCpu?.().totalMs ?? null;
            const received = (w: WatchStream): number => [...w.arrivals.keys()].filter((n) => n >= first).length;
            rows.push(row(ROWS.directWatch, directPaced, directSeconds, received(directWatch), BURST_EVENTS - received(directWatch), null));
            rows.push(row(ROWS.proxiedWatch, proxiedPaced, proxiedSeconds, received(proxiedWatch), BURST_EVENTS - received(proxiedWatch), burstCpu));
            directWatch.close();
            proxiedWatch.close();
            t.assertAlive();
            return {
              metrics: [
                metric(
                  'failed requests',
                  rows.reduce((n, r) => n + r.failed, 0),
                  'count',
                  { goal: { op: '<', value: 1 } },
                ),
              ],
              operations: rows,
              notes: [
                `GETs: ${options.createOps} per row, ${options.concurrency} in flight; watch: p50/p99 of ${WATCH_EVENTS} events sent one at a time, ops/s and CPU of a burst of ${BURST_EVENTS}`,
                "the extension server and the clients share the bench process; CPU ms/op is Capstan's",
              ],
            };
          } finally {
            capstan.close();
            direct.close();
          }
        },
        ['--cert-dir', certDir],
      );
    } finally {
      await ext?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
  summarize(byTarget) {
    const parts: string[] = [];
    for (const { target, result } of byTarget) {
      const find = (name: string) => result.operations?.find((r) => r.operation === name);
      const [dg, pg, dw, pw] = [find(ROWS.directGet), find(ROWS.proxiedGet), find(ROWS.directWatch), find(ROWS.proxiedWatch)];
      if (dg === undefined || pg === undefined || dw === undefined || pw === undefined) continue;
      const cpu = (r: OperationRow): string => (r.cpuMsPerOp === null ? '' : `, server CPU ${r.cpuMsPerOp.toFixed(3)} ms`);
      parts.push(
        `${target}: GET p50 +${(pg.p50Ms - dg.p50Ms).toFixed(2)} ms (${((pg.opsPerSecond / dg.opsPerSecond) * 100).toFixed(0)}% of direct req/s${cpu(pg)}); ` +
          `watch event p50 +${(pw.p50Ms - dw.p50Ms).toFixed(2)} ms (${((pw.opsPerSecond / dw.opsPerSecond) * 100).toFixed(0)}% of direct events/s${cpu(pw)})`,
      );
    }
    return parts.length > 0 ? [`added by the proxy: ${parts.join('; ')}`] : [];
  },
};
