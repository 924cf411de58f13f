/**
 * access: what TLS, authentication and RBAC authorization cost per request. One server with
 * `--authorization-mode=RBAC`, a static token file and a fresh cert dir; ConfigMap creates and GETs
 * with a fixed number in flight in each configuration: plain HTTP as the administrator, HTTPS with
 * the admin client certificate, HTTPS with an admin static token (system:masters: RBAC is not
 * asked), HTTPS with a user's static token that a RoleBinding of `edit` authorizes, and HTTPS with a
 * service account JWT bound the same way; keep-alive connections as clients hold them, and GETs
 * with a new connection (a full TLS handshake) per request. After a warm-up of every configuration,
 * they are measured in rounds (order rotated each round) and the server CPU per request of a row is
 * the median of its rounds'. The metrics are differences of server CPU per request between rows:
 * the cost of TLS, of each authenticator and of RBAC.
 */
import { loadavg } from 'node:os';
import { BENCH_USER, grantEditAndIssueToken, readAdminCredentials, waitAllowed, withAccessTarget } from './access-identities.js';
import { configMapBody, configMapsPath } from './fixtures.js';
import { HttpClient, type ServerAccess } from './http-client.js';
import { metric, type Metric, type OperationRow, type ScenarioResult } from './metrics.js';
import type { BenchOptions } from './options.js';
import { log, type Scenario } from './scenario.js';
import { cpuDifferenceUs, failedRequestsMetric, mergedRounds, timedPhase, withCpu, type Phase } from './scenario-crud.js';
import { createScratchNamespace, scratchNamespaceName } from './scratch-namespace.js';
import type { RunningTarget } from './target.js';

const WARM_UP = 300;

type Credential = 'plain' | 'client-cert' | 'admin-token' | 'user-token' | 'sa-token';

interface Configuration {
  /** Row name prefix. */
  name: string;
  credential: Credential;
  keepAlive: boolean;
}

/** Keep-alive configurations: creates and GETs. */
const KEEP_ALIVE: readonly Configuration[] = [
  { name: 'http admin (plain port)', credential: 'plain', keepAlive: true },
  { name: 'https admin client cert', credential: 'client-cert', keepAlive: true },
  { name: 'https admin token', credential: 'admin-token', keepAlive: true },
  { name: 'https user token + RBAC', credential: 'user-token', keepAlive: true },
  { name: 'https SA JWT + RBAC', credential: 'sa-token', keepAlive: true },
];

/** New-connection configurations: GETs only (the handshake is what they measure). */
const NEW_CONNECTION: readonly Configuration[] = [
  { name: 'http admin, new conn', credential: 'plain', keepAlive: false },
  { name: 'https admin client cert, new TLS conn', credential: 'client-cert', keepAlive: false },
  { name: 'https user token + RBAC, new TLS conn', credential: 'user-token', keepAlive: false },
];

const createRow = (c: Configuration): string => `${c.name}: create`;
const getRow = (c: Configuration): string => `${c.name}: GET`;

interface Credentials {
  plainUrl: string;
  secureUrl: string;
  ca: string;
  cert: string;
  key: string;
  adminToken: string;
  userToken: string;
  saToken: string;
}

function clientFor(c: Configuration, creds: Credentials, maxSockets: number): HttpClient {
  if (c.credential === 'plain') return new HttpClient(creds.plainUrl, maxSockets, { keepAlive: c.keepAlive });
  const access: ServerAccess = { ca: creds.ca, keepAlive: c.keepAlive };
  if (c.credential === 'client-cert') Object.assign(access, { cert: creds.cert, key: creds.key });
  else access.token = c.credential === 'admin-token' ? creds.adminToken : c.credential === 'user-token' ? creds.userToken : creds.saToken;
  return new HttpClient(creds.secureUrl, maxSockets, access);
}

/** The derived costs: [metric name, row, baseline row]. */
function derivedCosts(): Array<[string, string, string]> {
  const [plain, cert, adminToken, userToken, saToken] = KEEP_ALIVE;
  const [plainNew, certNew, userNew] = NEW_CONNECTION;
  const out: Array<[string, string, string]> = [];
  for (const [op, row] of [
    ['create', createRow],
    ['GET', getRow],
  ] as const) {
    out.push(
      [`TLS + token authn, keep-alive (${op})`, row(adminToken), row(plain)],
      [`client cert vs token authn (${op})`, row(cert), row(adminToken)],
      [`RBAC authorization (${op})`, row(userToken), row(adminToken)],
      [`SA JWT vs static token authn (${op})`, row(saToken), row(userToken)],
      [`all: https SA JWT + RBAC vs http (${op})`, row(saToken), row(plain)],
    );
  }
  out.push(
    ['new TLS conn with client cert vs new http conn (GET)', getRow(certNew), getRow(plainNew)],
    ['new TLS conn vs keep-alive, user token + RBAC (GET)', getRow(userNew), getRow(userToken)],
  );
  return out;
}

/** One measured row: its phases over the rounds. */
interface RowPhases {
  name: string;
  phases: Phase[];
}

/**
 * Warms every configuration up, then measures them in `rounds` rounds, each configuration once per
 * round (in an order rotated every round, so that drift such as a growing heap spreads evenly).
 */
async function measure(t: RunningTarget, creds: Credentials, ns: string, options: BenchOptions, rounds: number): Promise<RowPhases[]> {
  const path = configMapsPath(ns);
  const concurrency = options.accessConcurrency;
  const perRound = Math.max(1, Math.ceil(options.accessOps / rounds));
  const newConnPerRound = Math.max(1, Math.ceil(perRound / 2));
  const clients = new Map<Configuration, HttpClient>();
  for (const c of [...KEEP_ALIVE, ...NEW_CONNECTION]) clients.set(c, clientFor(c, creds, concurrency));
  const client = (c: Configuration): HttpClient => clients.get(c) as HttpClient;
  const rows = new Map<string, RowPhases>();
  const record = (name: string, p: Phase): void => {
    const row = rows.get(name) ?? { name, phases: [] };
    row.phases.push(p);
    rows.set(name, row);
  };
  const create = (c: Configuration, prefix: string) => (i: number) =>
    client(c).request('POST', path, { body: configMapBody(`${prefix}-${i}`, options.payloadBytes, i) });
  // GETs read the objects their configuration created (new-connection rows: the plain port's).
  const get = (c: Configuration, prefix: string, count: number) => (i: number) =>
    client(c).request('GET', `${path}/${prefix}-${i % count}`, { discardBody: true });
  try {
    log(`access: warm-up, ${WARM_UP} requests per configuration`);
    for (const c of KEEP_ALIVE) await timedPhase(WARM_UP, concurrency, 201, create(c, `warm-${c.credential}`));
    for (const c of NEW_CONNECTION) await timedPhase(Math.min(WARM_UP, newConnPerRound), concurrency, 200, get(c, 'warm-plain', WARM_UP));
    t.assertAlive();
    for (let r = 0; r < rounds; r++) {
      log(`access: round ${r + 1}/${rounds}: ${perRound} creates and GETs per keep-alive configuration, ${newConnPerRound} GETs per new-connection one`);
      const order = [...KEEP_ALIVE, ...NEW_CONNECTION];
      const rotated = [...order.slice(r % order.length), ...order.slice(0, r % order.length)];
      for (const c of rotated) {
        if (c.keepAlive) {
          const prefix = `${c.credential}-r${r}`;
          record(createRow(c), await withCpu(t.cpu, () => timedPhase(perRound, concurrency, 201, create(c, prefix))));
          t.assertAlive();
          record(getRow(c), await withCpu(t.cpu, () => timedPhase(perRound, concurrency, 200, get(c, prefix, perRound))));
        } else {
          record(getRow(c), await withCpu(t.cpu, () => timedPhase(newConnPerRound, concurrency, 200, get(c, 'warm-plain', WARM_UP))));
        }
        t.assertAlive();
      }
    }
  } finally {
    for (const c of clients.values()) c.close();
  }
  return [...rows.values()];
}

export const accessScenario: Scenario = {
  name: 'access',
  title: 'access: ConfigMap creates and GETs over HTTP and HTTPS, per credential, with --authorization-mode=RBAC',
  async run(target, options) {
    return withAccessTarget(target, options, async (t, files, secureUrl): Promise<ScenarioResult> => {
      const load = loadavg();
      const admin = new HttpClient(t.server.url, 4);
      const ns = scratchNamespaceName('access');
      let saToken: string;
      try {
        await createScratchNamespace(admin, ns);
        saToken = await grantEditAndIssueToken(admin, ns);
      } finally {
        admin.close();
      }
      const creds: Credentials = {
        plainUrl: t.server.url,
        secureUrl,
        ...readAdminCredentials(files.certDir),
        adminToken: files.adminToken,
        userToken: files.userToken,
        saToken,
      };
      for (const c of [KEEP_ALIVE[3], KEEP_ALIVE[4]]) {
        const client = clientFor(c, creds, 1);
        try {
          await waitAllowed(client, ns, c.name);
        } finally {
          client.close();
        }
      }
      const rounds = options.quick ? 3 : 5;
      const measured = await measure(t, creds, ns, options, rounds);
      const rows: OperationRow[] = [];
      const errors: string[] = [];
      const order = [...KEEP_ALIVE.flatMap((c) => [createRow(c), getRow(c)]), ...NEW_CONNECTION.map(getRow)];
      for (const name of order) {
        const found = measured.find((m) => m.name === name);
        if (found === undefined) continue;
        const { row, firstError } = mergedRounds(found.name, found.phases);
        rows.push(row);
        if (firstError !== undefined) errors.push(`${name}: first error: ${firstError}`);
      }
      const metrics: Metric[] = derivedCosts().map(([name, a, b]) => metric(`${name}, server CPU`, cpuDifferenceUs(rows, a, b), 'µs'));
      metrics.push(failedRequestsMetric(rows));
      const loadAfter = loadavg();
      return {
        metrics,
        operations: rows,
        notes: [
          `${options.accessOps} creates and GETs per keep-alive row, half as many GETs per new-connection row, in ${rounds} rounds (rotated order), ${options.accessConcurrency} in flight, ${options.payloadBytes} B data per ConfigMap, after ${WARM_UP} warm-up requests per row`,
          `user ${BENCH_USER} and the service account are bound to ClusterRole edit in ${ns}; the admin token and certificate are in system:masters (RBAC not asked)`,
          `server CPU per request is the median over the rounds; derived costs are differences of it between rows (${t.cpu.available() ? 'capstan primary and workers' : 'not measured'}${t.redis ? ' + redis-server' : ''}); on a busy host differences of ~10% of a row's CPU are noise`,
          `load average (1/5/15 min) before: ${load.map((l) => l.toFixed(2)).join(' ')}, after: ${loadAfter.map((l) => l.toFixed(2)).join(' ')}`,
          ...errors.slice(0, 3),
        ],
      };
    });
  },
};
