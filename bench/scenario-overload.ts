/**
 * overload: one user floods the server with thousands of concurrent LISTs of a big collection and
 * some writes (retrying 429s after their Retry-After, as client-go does), while another user's GETs,
 * the controller manager's Lease renewals and /readyz go on. Measures the protected traffic's
 * latency before and during the flood, what the server sheds (the flood's answers, and its
 * apiserver_flowcontrol_rejected_requests_total by reason), its memory, and that it is still
 * serving afterwards. Runs against the targets the bench starts (HTTPS with the tokens of
 * bench/overload-tokens.csv) and against a server given by --url started with those tokens
 * (`KUBE_UP_TOKENS=bench/overload-tokens.csv ../shared/reference/kube-up.sh`).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { urlTargetPids } from './endpoint.js';
import { bulkCreate, configMapsPath } from './fixtures.js';
import { HttpClient, type ServerAccess } from './http-client.js';
import { metric, textMetric, type Metric, type OperationRow } from './metrics.js';
import type { FloodConfig, FloodResult } from './overload-flood-worker.js';
import type { BenchOptions, TargetName } from './options.js';
import { treeMemory } from './proc-memory.js';
import { PROJECT_ROOT } from './processes.js';
import { createScratchNamespace, deleteScratchNamespace, scratchNamespaceName } from './scratch-namespace.js';
import { log, sleep, withTarget, type Scenario } from './scenario.js';
import { percentile } from './stats.js';

/** The users of bench/overload-tokens.csv. */
const TOKENS_FILE = join(PROJECT_ROOT, 'bench', 'overload-tokens.csv');
const FLOOD_TOKEN = 'bench-overload-flood-0f3c9a';
const QUIET_TOKEN = 'bench-overload-quiet-7d21e4';
const KCM_TOKEN = 'bench-overload-kcm-5b88c2';
const BINDING = 'bench-overload-users';
/**
 * How long a flood request may take: like kubectl and client-go (no timeout by default), the flood
 * waits for its LISTs, so that slow answers are measured rather than abandoned.
 */
const FLOOD_TIMEOUT_MS = 300_000;

interface Sizes {
  concurrency: number;
  objects: number;
  idleSeconds: number;
  floodSeconds: number;
}

function sizesOf(options: BenchOptions): Sizes {
  return options.quick
    ? { concurrency: 300, objects: 2_000, idleSeconds: 5, floodSeconds: 10 }
    : { concurrency: 2_000, objects: options.listObjects, idleSeconds: 10, floodSeconds: 30 };
}

/** What the scenario needs of a server: where, how each user reaches it, an administrator, its memory. */
interface OverloadEndpoint {
  label: string;
  httpsUrl: string;
  /** PEM CA of its certificate (undefined: a self-signed reference server, not verified). */
  ca: string | undefined;
  admin: HttpClient;
  /** Summed RSS of the server's processes (undefined when unknown). */
  rss(): number | undefined;
  assertAlive(): void;
}

function accessFor(endpoint: OverloadEndpoint, token: string): ServerAccess {
  return endpoint.ca === undefined ? { token, insecureTls: true } : { token, ca: endpoint.ca };
}

async function withOverloadEndpoint<T>(name: TargetName, options: BenchOptions, body: (e: OverloadEndpoint) => Promise<T>): Promise<T> {
  if (name === 'url') {
    const target = options.urlTarget;
    if (target === undefined) throw new Error('target url needs --url');
    if (!target.url.startsWith('https:')) throw new Error('overload needs an HTTPS --url (the users authenticate with bearer tokens)');
    const admin = new HttpClient(target.url, 8, { ...(target.token !== undefined ? { token: target.token } : {}), insecureTls: true });
    try {
      return await body({
        label: target.label,
        httpsUrl: target.url,
        ca: undefined,
        admin,
        rss: () => {
          const pids = urlTargetPids(target);
          return pids.length === 0 ? undefined : treeMemory(pids).rss;
        },
        assertAlive: () => undefined,
      });
    } finally {
      admin.close();
    }
  }
  const certDir = mkdtempSync(join(tmpdir(), 'capstan-bench-overload-'));
  try {
    return await withTarget(
      name,
      options,
      async (t) => {
        const httpsUrl = t.server.secureUrl;
        if (httpsUrl === undefined) throw new Error('the server announced no HTTPS URL');
        const admin = new HttpClient(t.server.url, 8);
        try {
          return await body({
            label: name,
            httpsUrl,
            ca: readFileSync(join(certDir, 'ca.crt'), 'utf8'),
            admin,
            rss: () => t.rss.current(),
            assertAlive: () => t.assertAlive(),
          });
        } finally {
          admin.close();
        }
      },
      ['--token-auth-file', TOKENS_FILE, '--cert-dir', certDir],
    );
  } finally {
    rmSync(certDir, { recursive: true, force: true });
  }
}

interface Sample {
  ms: number;
  ok: boolean;
}

/** A request loop of the protected traffic: one request (or renewal) every `intervalMs`, sequentially. */
class Prober {
  samples: Sample[] = [];
  private running = true;
  private readonly done: Promise<void>;

  constructor(
    private readonly intervalMs: number,
    private readonly probe: () => Promise<boolean>,
  ) {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const t0 = performance.now();
      let ok = false;
      try {
        ok = await this.probe();
      } catch {
        ok = false;
      }
      const ms = performance.now() - t0;
      this.samples.push({ ms, ok });
      if (ms < this.intervalMs) await sleep(this.intervalMs - ms);
    }
  }

  /** The samples so far, starting a new set. */
  take(): Sample[] {
    const taken = this.samples;
    this.samples = [];
    return taken;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

function row(operation: string, samples: Sample[], seconds: number): OperationRow {
  const ok = samples.filter((s) => s.ok).map((s) => s.ms);
  return {
    operation,
    opsPerSecond: ok.length / seconds,
    cpuMsPerOp: null,
    p50Ms: percentile(ok, 0.5),
    p99Ms: percentile(ok, 0.99),
    ok: ok.length,
    failed: samples.length - ok.length,
  };
}

/** apiserver_flowcontrol_rejected_requests_total of `flowSchema`, by reason. */
async function rejectedByReason(admin: HttpClient, flowSchema: string): Promise<Map<string, number>> {
  const res = await admin.request('GET', '/metrics', { timeoutMs: 60_000 });
  const out = new Map<string, number>();
  if (res.status !== 200) return out;
  for (const line of res.body.split('\n')) {
    if (!line.startsWith('apiserver_flowcontrol_rejected_requests_total{') || !line.includes(`flow_schema="${flowSchema}"`)) continue;
    const reason = /reason="([^"]+)"/.exec(line)?.[1];
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (reason !== undefined && Number.isFinite(value)) out.set(reason, (out.get(reason) ?? 0) + value);
  }
  return out;
}

async function expectOk(client: HttpClient, method: string, path: string, body: string | undefined, accepted: number[]): Promise<void> {
  const res = await client.request(method, path, body === undefined ? {} : { body });
  if (!accepted.includes(res.status)) throw new Error(`${method} ${path}: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
}

function startFlood(config: FloodConfig): { stop(): Promise<FloodResult> } {
  const worker = new Worker(new URL('./overload-flood-worker.js', import.meta.url), { workerData: config });
  const result = new Promise<FloodResult>((resolve, reject) => {
    worker.once('message', (msg: FloodResult) => resolve(msg));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`flood worker exited with ${code} before reporting`)));
  });
  result.catch(() => undefined);
  return {
    stop: async () => {
      worker.postMessage('stop');
      return result;
    },
  };
}

const sum = (counts: Record<string, number>): number => Object.values(counts).reduce((a, b) => a + b, 0);
const orNull = (bytes: number | undefined): number | null => (bytes === undefined ? null : bytes);

async function runOverload(endpoint: OverloadEndpoint, options: BenchOptions): Promise<{ metrics: Metric[]; operations: OperationRow[]; notes: string[] }> {
  const sizes = sizesOf(options);
  const admin = endpoint.admin;
  const ns = scratchNamespaceName('overload');
  const cms = configMapsPath(ns);
  const quiet = new HttpClient(endpoint.httpsUrl, 4, accessFor(endpoint, QUIET_TOKEN));
  const kcm = new HttpClient(endpoint.httpsUrl, 2, accessFor(endpoint, KCM_TOKEN));
  const leasePath = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases';
  const leaseName = `bench-overload-${Date.now().toString(36)}`;
  const binding = JSON.stringify({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: BINDING },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: ['bench-flood', 'bench-quiet', 'system:kube-controller-manager'].map((name) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name })),
  });
  try {
    const who = await quiet.request('GET', '/version');
    if (who.status === 401)
      throw new Error(
        `the server does not know the users of ${TOKENS_FILE} (kube-up: KUBE_UP_TOKENS=bench/overload-tokens.csv ../shared/reference/kube-up.sh)`,
      );
    await createScratchNamespace(admin, ns);
    await expectOk(admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', binding, [201, 409]);
    log(`overload: creating ${sizes.objects} ConfigMaps in ${ns}`);
    const created = await bulkCreate(admin, {
      prefix: 'big',
      count: sizes.objects,
      bytes: options.payloadBytes,
      concurrency: options.concurrency,
      timeoutMs: 600_000,
      path: cms,
    });
    if (created.created !== sizes.objects) throw new Error(`only ${created.created} of ${sizes.objects} ConfigMaps were created: ${created.firstError ?? ''}`);
    await bulkCreate(admin, { prefix: 'flood-w', count: 100, bytes: 64, concurrency: 16, timeoutMs: 60_000, path: cms });
    const now = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
    await expectOk(
      admin,
      'POST',
      leasePath,
      JSON.stringify({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: leaseName },
        spec: { holderIdentity: 'bench', leaseDurationSeconds: 15, renewTime: now },
      }),
      [201],
    );
    endpoint.assertAlive();

    // The protected traffic: a GET of one object every 50 ms, a Lease renewal (GET, then PUT of a
    // new renewTime) every 250 ms, /readyz every 100 ms.
    const getQuiet = new Prober(50, async () => (await quiet.request('GET', `${cms}/big-0`, { discardBody: true, timeoutMs: 60_000 })).status === 200);
    const renew = new Prober(250, async () => {
      const got = await kcm.request('GET', `${leasePath}/${leaseName}`, { timeoutMs: 60_000 });
      if (got.status !== 200) return false;
      const lease = JSON.parse(got.body) as { spec: Record<string, unknown> };
      lease.spec.renewTime = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
      return (await kcm.request('PUT', `${leasePath}/${leaseName}`, { body: JSON.stringify(lease), discardBody: true, timeoutMs: 60_000 })).status === 200;
    });
    const readyz = new Prober(100, async () => (await quiet.request('GET', '/readyz', { discardBody: true, timeoutMs: 60_000 })).status === 200);
    const probers = [getQuiet, renew, readyz];
    log(`overload: protected traffic alone for ${sizes.idleSeconds} s`);
    await sleep(sizes.idleSeconds * 1000);
    const idle = probers.map((p) => p.take());
    const rssIdle = endpoint.rss();
    const rejectedBefore = await rejectedByReason(admin, 'global-default');

    log(`overload: flood of ${sizes.concurrency} concurrent LISTs of ${sizes.objects} ConfigMaps (1 lane in 10 writes) for ${sizes.floodSeconds} s`);
    const flood = startFlood({
      url: endpoint.httpsUrl,
      token: FLOOD_TOKEN,
      ca: endpoint.ca,
      concurrency: sizes.concurrency,
      listPath: cms,
      writePath: cms,
      writePrefix: 'flood-w',
      writeObjects: 100,
      writeEvery: 10,
      requestTimeoutMs: FLOOD_TIMEOUT_MS,
      drainMs: FLOOD_TIMEOUT_MS,
    });
    let rssPeak = rssIdle ?? 0;
    const rssTimer = setInterval(() => {
      const r = endpoint.rss();
      if (r !== undefined && r > rssPeak) rssPeak = r;
    }, 100);
    const floodStart = performance.now();
    try {
      await sleep(sizes.floodSeconds * 1000);
    } finally {
      clearInterval(rssTimer);
    }
    const during = probers.map((p) => p.take());
    const floodSeconds = (performance.now() - floodStart) / 1000;
    log('overload: stopping the flood (its requests in flight finish)');
    const result = await flood.stop();
    for (const p of probers) await p.stop();
    endpoint.assertAlive();
    const alive = (await quiet.request('GET', '/readyz', { discardBody: true, timeoutMs: 60_000 })).status === 200;
    const rejectedAfter = await rejectedByReason(admin, 'global-default');
    const rssAfter = endpoint.rss();
    const shed = (reason: string): number => (rejectedAfter.get(reason) ?? 0) - (rejectedBefore.get(reason) ?? 0);
    const listAnswered = result.list['200'] ?? 0;
    const writeAnswered = result.write['200'] ?? 0;
    const flood429 = (result.list['429'] ?? 0) + (result.write['429'] ?? 0);
    const floodErrors = (result.list.error ?? 0) + (result.write.error ?? 0);
    const floodTotal = sum(result.list) + sum(result.write);
    const otherStatuses = Object.entries({ ...result.list })
      .filter(([k]) => !['200', '429', 'error'].includes(k))
      .map(([k, v]) => `${k}: ${v}`);
    const protectedFailures = during.reduce((n, samples) => n + samples.filter((s) => !s.ok).length, 0);
    const operations: OperationRow[] = [
      row('quiet GET, no flood', idle[0], sizes.idleSeconds),
      row('quiet GET, flood', during[0], floodSeconds),
      row('Lease renewal, no flood', idle[1], sizes.idleSeconds),
      row('Lease renewal, flood', during[1], floodSeconds),
      row('/readyz, no flood', idle[2], sizes.idleSeconds),
      row('/readyz, flood', during[2], floodSeconds),
      {
        operation: 'flood LIST answered',
        opsPerSecond: listAnswered / floodSeconds,
        cpuMsPerOp: null,
        p50Ms: percentile(result.listLatencies, 0.5),
        p99Ms: percentile(result.listLatencies, 0.99),
        ok: listAnswered,
        failed: sum(result.list) - listAnswered,
      },
    ];
    return {
      operations,
      metrics: [
        metric('flood requests answered or failed', floodTotal, 'count'),
        metric('flood LISTs answered 200', listAnswered, 'count', { higherIsBetter: true }),
        metric('flood writes answered 200', writeAnswered, 'count', { higherIsBetter: true }),
        metric('flood answered 429 (shed)', flood429, 'count'),
        metric('flood network errors / timeouts', floodErrors, 'count', { goal: { op: '<', value: 1 } }),
        metric('server: rejected queue-full', shed('queue-full'), 'count'),
        metric('server: rejected time-out (waited its limit in a queue)', shed('time-out'), 'count'),
        metric('server: rejected concurrency-limit', shed('concurrency-limit'), 'count'),
        metric('protected requests failed during the flood', protectedFailures, 'count', { goal: { op: '<', value: 1 } }),
        metric('server RSS before the flood', orNull(rssIdle), 'bytes'),
        metric('server RSS peak during the flood', rssPeak === 0 ? null : rssPeak, 'bytes'),
        metric('server RSS after the flood', orNull(rssAfter), 'bytes'),
        textMetric('serving after the flood (/readyz)', alive ? 'yes' : 'NO'),
      ],
      notes: [
        `${sizes.concurrency} flood lanes (user bench-flood, FlowSchema global-default), 1 in 10 patching, 429s retried after Retry-After; ${sizes.objects} ConfigMaps of ${options.payloadBytes} B listed`,
        `protected: user bench-quiet GET every 50 ms (global-default, another flow), system:kube-controller-manager Lease GET+PUT every 250 ms (leader-election), /readyz every 100 ms (exempt)`,
        ...(otherStatuses.length > 0 ? [`flood LIST statuses besides 200/429: ${otherStatuses.join(', ')}`] : []),
        ...Object.entries(result.errors).map(([message, n]) => `flood failures: ${n} x ${message}`),
        ...(result.unfinished > 0 ? [`${result.unfinished} flood requests still unanswered ${FLOOD_TIMEOUT_MS / 1000} s after the flood stopped`] : []),
      ],
    };
  } finally {
    quiet.close();
    kcm.close();
    await admin.request('DELETE', `${leasePath}/${leaseName}`).catch(() => undefined);
    await admin.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${BINDING}`).catch(() => undefined);
    const problem = await deleteScratchNamespace(admin, ns, [cms]);
    if (problem !== undefined) log(`overload: ${problem}`);
  }
}

export const overloadScenario: Scenario = {
  name: 'overload',
  title: 'overload: a flood of LISTs and writes against protected GETs, Lease renewals and /readyz',
  async run(target, options) {
    return withOverloadEndpoint(target, options, (endpoint) => runOverload(endpoint, options));
  },
};
