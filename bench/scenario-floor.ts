/**
 * floor: what the runtime alone costs per request, beside Capstan. Two stand-in servers
 * (floor-server.ts) answer ConfigMap creates and GETs over the same keep-alive HTTPS, with the same
 * certificate, headers and bodies, and the same client: one on Node's HTTPS server alone, one
 * through an Express app. Capstan (memory store, `--authorization-mode=RBAC`, a bearer token in
 * system:masters) answers the real requests. After a warm-up, each server is measured in rounds
 * (order rotated every round) and a row's server CPU per request is the median of its rounds'.
 * The differences say how much of Capstan's CPU per request is its own work and how much is the
 * floor no Node.js server of this shape goes under.
 *
 * Then the same for watch events: a fan-out (watch-fanout-run.ts; the watchers of `--watchers`, 20
 * writes/s as in `--compare`) on the node:https stand-in, which writes each event to every watch
 * with `res.write`, and on Capstan, each watcher on its own connection; then again with 100 watchers
 * to an HTTP/2 connection (as client-go programs hold their informers' watches), on a node:http2
 * stand-in and on Capstan. Server CPU per delivered event for each.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { certDirPaths } from '../src/tls/cert-dir.js';
import { readAdminCredentials, withAccessTarget } from './access-identities.js';
import { configMapBody, configMapsPath } from './fixtures.js';
import { HttpClient } from './http-client.js';
import { metric, type Metric, type ScenarioResult } from './metrics.js';
import { cpuMeter, type CpuMeter } from './proc-cpu.js';
import { PROJECT_ROOT } from './processes.js';
import { log, type Scenario } from './scenario.js';
import { deliveryProblems, runFanout, type FanoutServer } from './watch-fanout-run.js';
import { WATCHES_PER_HTTP2_CONNECTION } from './watch-http2.js';
import { cpuDifferenceUs, failedRequestsMetric, mergedRounds, timedPhase, withCpu, type Phase } from './scenario-crud.js';
import { createScratchNamespace, scratchNamespaceName } from './scratch-namespace.js';

const WARM_UP = 2_000;
/** Writes per second of the fan-out, as `--compare` measures it. */
const FANOUT_RATE = 20;
const FLOOR_SERVER = join(PROJECT_ROOT, 'dist', 'bench', 'floor-server.js');

interface Measured {
  /** Row name prefix. */
  name: string;
  client: HttpClient;
  cpu: CpuMeter;
  /** The collection creates are posted to and GETs read from. */
  path: string;
}

/** Starts a floor server; resolves once it listens. */
async function startFloor(cert: string, key: string, withExpress: boolean, http2 = false): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [FLOOR_SERVER, '--cert', cert, '--key', key, ...(withExpress ? ['--express'] : []), ...(http2 ? ['--http2'] : [])], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`floor-server exited (${code}) before listening`)));
  });
  return { child, port };
}

function stopFloor(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

export const floorScenario: Scenario = {
  name: 'floor',
  title: 'floor: server CPU per ConfigMap create and GET, Capstan beside Node.js HTTPS alone and with Express',
  async run(target, options) {
    return withAccessTarget(target, options, async (t, files, secureUrl): Promise<ScenarioResult> => {
      const load = loadavg();
      const { ca } = readAdminCredentials(files.certDir);
      const { servingCert: cert, servingKey: key } = certDirPaths(files.certDir);
      const concurrency = options.accessConcurrency;
      const ns = scratchNamespaceName('floor');
      const h2Namespace = scratchNamespaceName('floor-h2');
      const nodeFloor = await startFloor(cert, key, false);
      const expressFloor = await startFloor(cert, key, true).catch(async (err: unknown) => {
        await stopFloor(nodeFloor.child);
        throw err;
      });
      const http2Floor = await startFloor(cert, key, false, true).catch(async (err: unknown) => {
        await stopFloor(nodeFloor.child);
        await stopFloor(expressFloor.child);
        throw err;
      });
      const floorPid = (c: ChildProcess): number[] => (c.pid === undefined ? [] : [c.pid]);
      const servers: Measured[] = [
        {
          name: 'node:https alone',
          client: new HttpClient(`https://127.0.0.1:${nodeFloor.port}`, concurrency, { ca }),
          cpu: cpuMeter(() => floorPid(nodeFloor.child)),
          path: configMapsPath(ns),
        },
        {
          name: 'node:https + Express',
          client: new HttpClient(`https://127.0.0.1:${expressFloor.port}`, concurrency, { ca }),
          cpu: cpuMeter(() => floorPid(expressFloor.child)),
          path: configMapsPath(ns),
        },
        {
          name: `Capstan ${t.name}`,
          client: new HttpClient(secureUrl, concurrency, { ca, token: files.adminToken }),
          cpu: t.cpu,
          path: configMapsPath(ns),
        },
      ];
      const phases = new Map<string, Phase[]>();
      const record = (row: string, p: Phase): void => {
        phases.set(row, [...(phases.get(row) ?? []), p]);
      };
      const fanouts: Array<{ name: string; perEventUs: number; problems: string | undefined }> = [];
      const rounds = options.quick ? 3 : 5;
      // Rounds long enough for /proc's 10 ms clock ticks to be noise below 1%.
      const perRound = options.quick ? 2_000 : 4_000;
      try {
        const capstan = servers[2];
        await createScratchNamespace(capstan.client, ns);
        const create = (s: Measured, prefix: string) => (i: number) =>
          s.client.request('POST', s.path, { body: configMapBody(`${prefix}-${i}`, options.payloadBytes, i) });
        const get = (s: Measured, prefix: string, count: number) => (i: number) =>
          s.client.request('GET', `${s.path}/${prefix}-${i % count}`, { discardBody: true });
        log(`floor: warm-up, ${WARM_UP} creates and GETs per server`);
        for (const s of servers) {
          await timedPhase(WARM_UP, concurrency, 201, create(s, 'warm'));
          await timedPhase(WARM_UP, concurrency, 200, get(s, 'warm', WARM_UP));
        }
        t.assertAlive();
        for (let r = 0; r < rounds; r++) {
          log(`floor: round ${r + 1}/${rounds}: ${perRound} creates and GETs per server`);
          const rotated = [...servers.slice(r % servers.length), ...servers.slice(0, r % servers.length)];
          for (const s of rotated) {
            const prefix = `r${r}`;
            record(`${s.name}: create`, await withCpu(s.cpu, () => timedPhase(perRound, concurrency, 201, create(s, prefix))));
            record(`${s.name}: GET`, await withCpu(s.cpu, () => timedPhase(perRound, concurrency, 200, get(s, prefix, perRound))));
            t.assertAlive();
          }
        }
        const fanoutOn = [
          { name: servers[0].name, floor: nodeFloor, s: servers[0], http2: false },
          { name: servers[2].name, floor: undefined, s: servers[2], http2: false },
          { name: 'node:http2 alone', floor: http2Floor, s: { ...servers[0], cpu: cpuMeter(() => floorPid(http2Floor.child)) }, http2: true },
          // Another namespace: the fan-out's ConfigMap names repeat from run to run.
          { name: servers[2].name, floor: undefined, s: { ...servers[2], path: configMapsPath(h2Namespace) }, http2: true },
        ];
        await createScratchNamespace(capstan.client, h2Namespace);
        for (const { name, floor, s, http2 } of fanoutOn) {
          const over = http2 ? ' over HTTP/2' : '';
          log(`floor: watch fan-out${over} on ${name}`);
          const server: FanoutServer = {
            url: floor === undefined ? secureUrl : `https://127.0.0.1:${floor.port}`,
            access: floor === undefined ? { ca, token: files.adminToken } : { ca },
            path: s.path,
            assertAlive: () => t.assertAlive(),
            exited: () => t.server.exited() || (floor !== undefined && floor.child.exitCode !== null),
            cpu: s.cpu,
          };
          const f = await runFanout(server, {
            watchers: options.watchers,
            rate: FANOUT_RATE,
            seconds: options.quick ? 10 : 20,
            payloadBytes: options.watchPayload,
            threads: options.watchThreads,
            http2,
          });
          fanouts.push({
            name: `${name}${over}`,
            perEventUs: f.cpuMs !== undefined && f.events > 0 ? (f.cpuMs * 1000) / f.events : Number.NaN,
            problems: deliveryProblems(f),
          });
        }
      } finally {
        for (const s of servers) s.client.close();
        await stopFloor(nodeFloor.child);
        await stopFloor(expressFloor.child);
        await stopFloor(http2Floor.child);
      }
      const rows = servers.flatMap((s) => [`${s.name}: create`, `${s.name}: GET`]).map((name) => mergedRounds(name, phases.get(name) ?? []).row);
      const metrics: Metric[] = [];
      for (const op of ['create', 'GET']) {
        metrics.push(
          metric(`Express over node:https (${op}), server CPU`, cpuDifferenceUs(rows, `node:https + Express: ${op}`, `node:https alone: ${op}`), 'µs'),
          metric(
            `Capstan over node:https + Express (${op}), server CPU`,
            cpuDifferenceUs(rows, `Capstan ${t.name}: ${op}`, `node:https + Express: ${op}`),
            'µs',
          ),
        );
      }
      for (const f of fanouts) metrics.push(metric(`watch fan-out on ${f.name}, server CPU per delivered event`, f.perEventUs, 'µs'));
      metrics.push(failedRequestsMetric(rows));
      const errors = [...phases.entries()].flatMap(([name, ps]) =>
        ps.filter((p) => p.firstError !== undefined).map((p) => `${name}: first error: ${p.firstError}`),
      );
      return {
        metrics,
        operations: rows,
        notes: [
          `${perRound} creates and GETs per server and round, ${rounds} rounds (rotated order), ${concurrency} in flight, ${options.payloadBytes} B data per ConfigMap, after ${WARM_UP} warm-up creates and GETs per server; keep-alive HTTPS, the same certificate for all three`,
          `the floor servers answer a GET with a stored ConfigMap's text and a create by parsing the body and writing it back, with Capstan's headers; Capstan runs with --authorization-mode=RBAC and a system:masters token`,
          `server CPU per request is the median over the rounds (the floor server's process, or ${t.cpu.available() ? 'the capstan primary and workers' : 'not measured'}${t.redis ? ' + redis-server' : ''})`,
          `load average (1/5/15 min) before: ${load.map((l) => l.toFixed(2)).join(' ')}, after: ${loadavg()
            .map((l) => l.toFixed(2))
            .join(' ')}`,
          `watch fan-out: ${options.watchers} watchers (one HTTPS connection each; over HTTP/2, ${WATCHES_PER_HTTP2_CONNECTION} to a connection), ${FANOUT_RATE} writes/s for ${options.quick ? 10 : 20} s; the stand-ins write each event to every watch with res.write`,
          ...fanouts.filter((f) => f.problems !== undefined).map((f) => `watch fan-out on ${f.name}: ${f.problems}`),
          ...errors.slice(0, 3),
        ],
      };
    });
  },
};
