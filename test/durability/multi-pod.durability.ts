/**
 * Several pods on one Redis: 3 Capstan instances x 2 workers over one redis-server with AOF
 * `appendfsync always`, as the chart runs them with replicaCount 3.
 * - The kubectl suites and the read-semantics suite pass through a proxy that sends each request
 *   to the next instance (CAPSTAN_TEST_URLS; see test/helpers/suite-target.ts).
 * - A watch on each instance sees the writes made through all of them, in order (mixed load).
 * - Every controller runs once across the instances (one holder of the controller manager's Lease
 *   at a time, from every process's log), while each instance renews its host's identity Lease.
 * - Killing the instance that runs the controllers under load loses no acknowledged write, and
 *   another instance takes the controllers over within the lease duration plus one retry period.
 * Run by scripts/run-durability.sh.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { spawnCluster, type ClusterProcess } from '../cluster/cluster-process.js';
import { CAPSTAN_MAIN } from '../helpers/capstan.js';
import { freePort, startRedis, type RedisServer } from '../helpers/redis-process.js';
import { createNamespace, eventually, fresh } from '../helpers/redis-workers.js';
import { passed, storedHistory, summary } from './durability-checks.js';
import { loadSize, runScenario } from './scenario.js';

const TEST_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The suites that run against any set of servers on one storage (see suite-target.ts). */
const SUITES = [
  'e2e/kubectl-basics.test.js',
  'e2e/kubectl-apply-patch.test.js',
  'e2e/kubectl-server-side-apply.test.js',
  'e2e/kubectl-watch-delete.test.js',
  'consistency/read-semantics.test.js',
];
/** The controller manager's election timing (kube-controller-manager's defaults). */
const LEASE_DURATION_MS = 15_000;
const RETRY_PERIOD_MS = 2_000;

let redis: RedisServer;
let instances: ClusterProcess[] = [];
/** Instances killed by a test (their URLs no longer answer). */
const killed = new Set<ClusterProcess>();

interface LeadershipEvent {
  at: number;
  acquired: boolean;
  identity: string;
  instance: number;
  pid: number;
}

/** Every "acquired"/"lost the lease" line of the controller manager's election, from every instance's log, in time order. */
function leadership(): LeadershipEvent[] {
  const events: LeadershipEvent[] = [];
  for (const [instance, cap] of instances.entries()) {
    for (const line of cap.stderr().split('\n')) {
      if (!line.includes('leader election: ') || !line.includes('capstan-controller-manager')) continue;
      try {
        const entry = JSON.parse(line) as { msg?: string; identity?: string; pid?: number; ts?: string };
        if (entry.msg !== 'leader election: acquired the lease' && entry.msg !== 'leader election: lost the lease') continue;
        events.push({
          at: Date.parse(entry.ts ?? ''),
          acquired: entry.msg.endsWith('acquired the lease'),
          identity: entry.identity ?? '',
          instance,
          pid: entry.pid ?? 0,
        });
      } catch {
        // a line cut short
      }
    }
  }
  return events.sort((a, b) => a.at - b.at);
}

/** Times two holders overlapped (one acquired while another had not lost it, and was alive). */
function overlaps(events: readonly LeadershipEvent[], dead: ReadonlyMap<number, number>): string[] {
  const holding = new Map<string, LeadershipEvent>();
  const problems: string[] = [];
  for (const e of events) {
    // A killed instance holds nothing after its death.
    for (const [id, held] of holding) if ((dead.get(held.instance) ?? Infinity) <= e.at) holding.delete(id);
    if (e.acquired) {
      for (const other of holding.values()) {
        problems.push(
          `${e.identity} (instance ${e.instance}) acquired at ${new Date(e.at).toISOString()} while ${other.identity} (instance ${other.instance}) held it`,
        );
      }
      holding.set(e.identity, e);
    } else holding.delete(e.identity);
  }
  return problems;
}

/** The instance and identity holding the controller manager's Lease now, from the Lease and the logs. */
async function currentLeader(): Promise<{ instance: number; identity: string }> {
  const alive = instances.find((c) => !killed.has(c));
  if (!alive) throw new Error('no instance left');
  const lease = await fresh(alive.url, '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/capstan-controller-manager');
  const identity = String(lease.body?.spec?.holderIdentity ?? '');
  const event = leadership()
    .filter((e) => e.acquired && e.identity === identity)
    .pop();
  if (!event) throw new Error(`no instance logged acquiring the lease as ${identity}`);
  return { instance: event.instance, identity };
}

const dead = new Map<number, number>();

before(async () => {
  redis = await startRedis({ appendOnly: true });
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    instances.push(await spawnCluster(CAPSTAN_MAIN, ['--storage=redis', '--redis-url', redis.url, '--workers', '2', '--port', String(port)]));
  }
  // One of them runs the controllers before the tests start.
  await eventually(async () => (await currentLeader()).identity !== '', 'a holder of the controller manager lease', 60_000);
});

after(async () => {
  await Promise.all(instances.map((c) => c.stop('SIGKILL')));
  instances = [];
  await redis?.stop();
});

describe('3 instances x 2 workers on one Redis', () => {
  test('the kubectl and read-semantics suites pass through a proxy spreading requests over the instances', async (t) => {
    const files = SUITES.map((f) => join(TEST_ROOT, f));
    // A test runner of its own: without NODE_TEST_CONTEXT, which tells a process it runs under one.
    const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
    const child = spawn(process.execPath, ['--test', '--test-concurrency=1', '--test-reporter=tap', ...files], {
      env: { ...env, CAPSTAN_TEST_URLS: instances.map((c) => c.url).join(',') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const count = (what: string): string =>
      /^# (\w+) (\d+)$/m.exec(
        out
          .split('\n')
          .filter((l) => l.startsWith(`# ${what} `))
          .pop() ?? '',
      )?.[2] ?? '?';
    t.diagnostic(`suites: ${SUITES.join(', ')}: ${count('tests')} tests, ${count('pass')} passed, ${count('fail')} failed, ${count('skipped')} skipped`);
    assert.ok(Number(count('pass')) > 0, `no test ran:\n${out.slice(-2000)}`);
    const failures = out
      .split('\n')
      .filter((l) => /^\s*not ok /.test(l))
      .join('\n');
    assert.equal(code, 0, `suites failed:\n${failures}\n${out.slice(-4000)}`);
  });

  test('a watch on each instance sees the writes made through all of them, in order, and the history is linearizable', async (t) => {
    const report = await runScenario({
      scenario: 'three instances, no fault',
      urls: instances.map((c) => c.url),
      size: { ...loadSize(), rounds: 1 },
      fault: async () => undefined,
      storedHistory: (namespace, afterRv) => readStored(namespace, afterRv),
    });
    t.diagnostic(summary(report));
    assert.ok(passed(report), summary(report));
  });

  test('every controller runs once across the instances; the identity Lease stays per host', async () => {
    const events = leadership();
    assert.ok(
      events.some((e) => e.acquired),
      'some process leads',
    );
    assert.deepEqual(overlaps(events, dead), []);
    // The namespace controller and the default ServiceAccounts run (somewhere): a namespace gets its
    // ServiceAccount, and a deleted namespace goes.
    const url = instances[1]?.url ?? '';
    const ns = `once-${Math.random().toString(36).slice(2, 8)}`;
    await createNamespace(url, ns);
    await eventually(async () => (await fresh(url, `/api/v1/namespaces/${ns}/serviceaccounts/default`)).status === 200, 'the default ServiceAccount');
    assert.equal((await fresh(url, `/api/v1/namespaces/${ns}`, { method: 'DELETE' })).status, 200);
    await eventually(async () => (await fresh(url, `/api/v1/namespaces/${ns}`)).status === 404, 'the namespace to go');
    // kube-apiserver's own work stays per instance: each renews the identity Lease of its host (one
    // here: the name is a hash of the host name, so instances on one host share it, as kube-apiserver's would).
    const leases = await fresh(
      url,
      '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases?labelSelector=apiserver.kubernetes.io%2Fidentity%3Dkube-apiserver',
    );
    assert.equal(leases.status, 200, leases.text);
    assert.equal(leases.body.items.length, 1, JSON.stringify(leases.body.items.map((l: { metadata: { name: string } }) => l.metadata.name)));
  });

  test('killing the instance that runs the controllers under load loses no acknowledged write; another takes them over within the lease duration', async (t) => {
    const leader = await currentLeader();
    const victim = instances[leader.instance];
    assert.ok(victim);
    const survivors = instances.filter((c) => c !== victim);
    let killedAt = 0;
    let takeoverMs = -1;
    const report = await runScenario({
      scenario: 'three instances, kill -9 of the leading one',
      urls: instances.map((c) => c.url),
      watchUrls: survivors.map((c) => c.url),
      size: { ...loadSize(), rounds: 1 },
      fault: async () => {
        // The whole pod: every worker and the primary, at once.
        for (const pid of [...victim.workerPids(), victim.child.pid ?? 0]) if (pid > 0) process.kill(pid, 'SIGKILL');
        killedAt = Date.now();
        killed.add(victim);
        dead.set(leader.instance, killedAt);
        await eventually(
          () => leadership().some((e) => e.acquired && e.at >= killedAt && e.instance !== leader.instance),
          'another instance to take the controllers over',
          60_000,
        );
        const next = leadership().find((e) => e.acquired && e.at >= killedAt && e.instance !== leader.instance);
        takeoverMs = (next?.at ?? 0) - killedAt;
      },
      storedHistory: (namespace, afterRv) => readStored(namespace, afterRv),
    });
    t.diagnostic(summary(report));
    t.diagnostic(`the controllers moved ${takeoverMs} ms after the kill (lease ${LEASE_DURATION_MS} ms, retry ${RETRY_PERIOD_MS} ms)`);
    assert.ok(passed(report), summary(report));
    assert.ok(takeoverMs >= 0 && takeoverMs <= LEASE_DURATION_MS + RETRY_PERIOD_MS + 1000, `takeover after ${takeoverMs} ms`);
    assert.deepEqual(overlaps(leadership(), dead), []);
    // The controllers work from their new home: a namespace gets its ServiceAccount and can be deleted.
    const url = survivors[0]?.url ?? '';
    const ns = `moved-${Math.random().toString(36).slice(2, 8)}`;
    await createNamespace(url, ns);
    await eventually(async () => (await fresh(url, `/api/v1/namespaces/${ns}/serviceaccounts/default`)).status === 200, 'the default ServiceAccount');
    assert.equal((await fresh(url, `/api/v1/namespaces/${ns}`, { method: 'DELETE' })).status, 200);
    await eventually(async () => (await fresh(url, `/api/v1/namespaces/${ns}`)).status === 404, 'the namespace to go');
  });
});

async function readStored(namespace: string, afterRv: string): Promise<Awaited<ReturnType<typeof storedHistory>>> {
  const client = new Redis(redis.url);
  try {
    return await storedHistory(client, namespace, afterRv);
  } finally {
    client.disconnect();
  }
}
