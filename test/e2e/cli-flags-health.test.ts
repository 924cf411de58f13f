/**
 * The real `capstan` process: --help, flag errors, health endpoints (verbose, exclude, single checks),
 * SIGTERM with --shutdown-delay-duration, and --write-kubeconfig used by kubectl as is.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { availableParallelism } from 'node:os';
import { freePort, startRedis } from '../helpers/redis-process.js';
import { startRedisWorkers } from '../helpers/redis-workers.js';
import { api, CAPSTAN_MAIN, spawnCapstan, withFreeSecurePort, type CapstanProcess } from '../helpers/capstan.js';
import { kubectlFor } from './kubectl.js';

/** Runs capstan to completion (for flag errors and --help). */
function runCapstan(args: string[], timeoutMs = 30_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CAPSTAN_MAIN, ...(args.includes('--help') ? args : withFreeSecurePort(args))], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`capstan ${args.join(' ')} did not exit: ${stderr}`));
    }, timeoutMs);
    // 'close', not 'exit': 'exit' may come before the last of stderr has been read (a loaded CI
    // machine once gave an empty stderr for a process that had written its reason).
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function waitReady(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const r = await fetch(`${url}/readyz`).catch(() => undefined);
    if (r?.status === 200) return;
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error('never ready');
}

describe('command line', { concurrency: true }, () => {
  test('--help lists every flag of the issue and exits 0', async () => {
    const r = await runCapstan(['--help']);
    assert.equal(r.code, 0, r.stderr);
    const text = r.stdout + r.stderr;
    for (const flag of [
      '--bind-address',
      '--port',
      '--storage',
      '--feature-gates',
      '--livez-grace-period',
      '--shutdown-delay-duration',
      '--watch-cache-history',
      '--watch-cache',
      '--write-kubeconfig',
      '--help',
    ]) {
      assert.ok(text.includes(flag), `${flag} in --help`);
    }
    assert.match(text, /--bind-address.*127\.0\.0\.1/);
    assert.match(text, /--secure-port.*6443/);
    assert.match(text, /--insecure-port/);
    assert.match(text, /--watch-cache-history.*5m/);
    assert.match(text, /--service-cluster-ip-range.*10\.96\.0\.0\/12/);
    assert.match(text, /--service-node-port-range.*30000-32767/);
  });

  const bad: Array<[string[], RegExp]> = [
    [['--bogus'], /unknown flag: --bogus/],
    [['--port', 'abc'], /invalid argument "abc" for "--port"/],
    [['--port=70000'], /invalid argument "70000" for "--port"/],
    [['--storage', 'etcd'], /invalid argument "etcd" for "--storage"/],
    [['--watch-cache-history', 'soon'], /invalid argument "soon" for "--watch-cache-history"/],
    [['--watch-cache=maybe'], /invalid argument "maybe" for "--watch-cache"/],
    [['--shutdown-delay-duration=5x'], /invalid argument "5x" for "--shutdown-delay-duration"/],
    [['--livez-grace-period', '-'], /invalid argument "-" for "--livez-grace-period"/],
    [['--feature-gates', 'NoSuchGate=true'], /invalid argument "NoSuchGate=true" for "--feature-gates"/],
    [['--feature-gates', 'WatchList=maybe'], /--feature-gates/],
    [['--advertise-address', 'host'], /invalid argument "host" for "--advertise-address" flag: must be a valid IP address/],
    [['--service-cluster-ip-range', '10.96.0.0'], /invalid argument "10.96.0.0" for "--service-cluster-ip-range" flag: invalid CIDR address: 10.96.0.0/],
    [['--service-cluster-ip-range=10.96.0.0/31'], /invalid argument "10.96.0.0\/31" for "--service-cluster-ip-range"/],
    [['--service-cluster-ip-range=fd00::/108'], /--service-cluster-ip-range" flag: only IPv4 ranges are supported/],
    [['--service-node-port-range', '32767-30000'], /invalid argument "32767-30000" for "--service-node-port-range"/],
    [['--service-node-port-range=ports'], /invalid argument "ports" for "--service-node-port-range" flag: unable to parse port range: ports/],
  ];
  for (const [args, reason] of bad) {
    test(`${args.join(' ')} exits non-zero with a one-line reason`, async () => {
      const r = await runCapstan(['--port', '0', ...args]);
      assert.notEqual(r.code, 0);
      assert.notEqual(r.code, null);
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, `one line, got: ${r.stderr}`);
      assert.match(lines[0] ?? '', reason);
      assert.equal(r.stdout, '');
    });
  }
});

describe('health endpoints', { concurrency: true }, () => {
  let proc: CapstanProcess;
  before(async () => {
    proc = await spawnCapstan(['--port', '0']);
    await waitReady(proc.url);
  });
  after(async () => {
    await proc.stop();
  });

  for (const path of ['/healthz', '/livez', '/readyz']) {
    test(`${path} answers 200 ok`, async () => {
      const r = await api(proc.url, path);
      assert.equal(r.status, 200);
      assert.equal(r.text, 'ok');
      assert.match(r.headers.get('content-type') ?? '', /^text\/plain/);
    });
  }

  test('/readyz?verbose lists every check and ends with "readyz check passed"', async () => {
    const r = await api(proc.url, '/readyz?verbose');
    assert.equal(r.status, 200);
    const lines = r.text.trim().split('\n');
    assert.equal(lines[lines.length - 1], 'readyz check passed');
    const checks = lines.slice(0, -1);
    for (const l of checks) assert.match(l, /^\[\+\][\w/-]+ ok$/);
    const names = checks.map((l) => l.slice(3, -3));
    for (const n of ['ping', 'log', 'shutdown']) assert.ok(names.includes(n), `${n} in ${names.join(',')}`);
    assert.ok(
      names.some((n) => n.startsWith('poststarthook/')),
      'a poststarthook check',
    );
    assert.ok(names.length >= 5, 'a storage check too');
  });

  test('/livez?verbose ends with "livez check passed" and has no shutdown check', async () => {
    const r = await api(proc.url, '/livez?verbose');
    assert.equal(r.status, 200);
    const lines = r.text.trim().split('\n');
    assert.equal(lines[lines.length - 1], 'livez check passed');
    assert.ok(lines.includes('[+]ping ok'));
    assert.ok(!lines.includes('[+]shutdown ok'));
  });

  test('/healthz?verbose ends with "healthz check passed"', async () => {
    const r = await api(proc.url, '/healthz?verbose');
    assert.equal(r.status, 200);
    assert.match(r.text, /\[\+\]ping ok\n/);
    assert.match(r.text, /healthz check passed\n?$/);
  });

  test('?exclude=<check> reports the check as excluded', async () => {
    const r = await api(proc.url, '/readyz?verbose&exclude=ping&exclude=log');
    assert.equal(r.status, 200);
    assert.match(r.text, /^\[\+\]ping excluded: ok$/m);
    assert.match(r.text, /^\[\+\]log excluded: ok$/m);
    assert.match(r.text, /^\[\+\]shutdown ok$/m);
  });

  test('/livez/<check> and /readyz/<check> run one check; an unknown check is 404', async () => {
    for (const path of ['/livez/ping', '/readyz/ping', '/readyz/shutdown', '/livez/log', '/healthz/ping']) {
      const r = await api(proc.url, path);
      assert.equal(r.status, 200, path);
      assert.equal(r.text, 'ok', path);
    }
    assert.equal((await api(proc.url, '/readyz/no-such-check')).status, 404);
  });
});

describe('process lifecycle', { concurrency: true }, () => {
  test('SIGTERM: readyz fails during --shutdown-delay-duration while requests are still served, then exit 0', async () => {
    const proc = await spawnCapstan(['--port', '0', '--shutdown-delay-duration=5s']);
    await waitReady(proc.url);
    const started = Date.now();
    const exited = new Promise<number | null>((resolve) => proc.child.once('exit', (code) => resolve(code)));
    proc.child.kill('SIGTERM');
    // The signal is handled when the server's loop gets to it: wait for readyz to say so.
    let ready = await api(proc.url, '/readyz?verbose');
    while (ready.status === 200 && Date.now() - started < 4000) ready = await api(proc.url, '/readyz?verbose');
    assert.equal(ready.status, 500, ready.text);
    assert.match(ready.text, /^\[-\]shutdown failed: reason withheld$/m);
    assert.match(ready.text, /readyz check failed\n?$/);
    const plain = await api(proc.url, '/readyz');
    assert.equal(plain.status, 500);
    const live = await api(proc.url, '/livez');
    assert.equal(live.status, 200, 'livez stays healthy while draining');
    const served = await api(proc.url, '/api/v1/namespaces/default');
    assert.equal(served.status, 200, 'API requests are still served during the delay');
    const code = await exited;
    assert.equal(code, 0, proc.stderr());
    assert.ok(Date.now() - started >= 4800, 'waited for the shutdown delay');
  });

  test('SIGTERM without a delay exits 0 promptly', async () => {
    const proc = await spawnCapstan(['--port', '0']);
    await waitReady(proc.url);
    const started = Date.now();
    assert.equal(await proc.stop('SIGTERM'), 0, proc.stderr());
    assert.ok(Date.now() - started < 5000);
  });

  test('SIGTERM ends an open watch cleanly', async () => {
    const proc = await spawnCapstan(['--port', '0']);
    await waitReady(proc.url);
    const res = await fetch(`${proc.url}/api/v1/namespaces?watch=1`);
    assert.equal(res.status, 200);
    const reader = res.body?.getReader();
    assert.ok(reader);
    await reader.read();
    const code = proc.stop('SIGTERM');
    // The stream ends (no hang) and the process exits 0.
    for (;;) {
      const { done } = await reader.read().catch(() => ({ done: true }));
      if (done) break;
    }
    assert.equal(await code, 0, proc.stderr());
  });

  test('--write-kubeconfig writes an admin kubeconfig (HTTPS, client certificate) kubectl uses as is', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'capstan-wk-'));
    const path = join(dir, 'kubeconfig');
    const proc = await spawnCapstan(['--port', '0', '--write-kubeconfig', path]);
    try {
      await waitReady(proc.url);
      const secureUrl = /"secureUrl":"([^"]+)"/.exec(proc.stderr())?.[1] ?? '';
      assert.match(secureUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
      const text = readFileSync(path, 'utf8');
      assert.ok(text.includes(secureUrl) && text.includes('client-certificate-data:'), text);
      const k = kubectlFor(path);
      const out = await k.ok(['get', 'ns', 'default', '-o', 'name']);
      assert.equal(out.trim(), 'namespace/default');
      const ctx = await k.ok(['config', 'current-context']);
      assert.ok(ctx.trim().length > 0);
      const server = await k.ok(['config', 'view', '-o', 'jsonpath={.clusters[0].cluster.server}']);
      assert.equal(server, secureUrl);
      assert.match(await k.ok(['auth', 'whoami']), /Username\s+capstan-admin\s+Groups\s+\[system:masters system:authenticated\]/);
    } finally {
      assert.equal(await proc.stop(), 0);
    }
  });

  test('the JSON serving line names the kubeconfig it wrote', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'capstan-wk-')), 'kubeconfig');
    const proc = await spawnCapstan(['--port', '0', '--write-kubeconfig', path, '--log-format', 'json']);
    try {
      const line =
        proc
          .stderr()
          .split('\n')
          .find((l) => l.includes('"msg":"serving"')) ?? '';
      assert.deepEqual(
        { ...JSON.parse(line), ts: undefined },
        { level: 'info', msg: 'serving', url: proc.url, secureUrl: JSON.parse(line).secureUrl, storage: 'memory', kubeconfig: path, ts: undefined },
      );
    } finally {
      assert.equal(await proc.stop(), 0);
    }
  });

  test('--log-format text: a banner says how to connect; request lines only at --log-level=debug', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'capstan-wk-')), 'kubeconfig');
    for (const level of ['info', 'debug']) {
      const child = spawn(
        process.execPath,
        [CAPSTAN_MAIN, '--secure-port=0', '--port', '0', '--log-format', 'text', '--log-level', level, '--write-kubeconfig', path],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stderr = '';
      const url = await new Promise<string>((resolve, reject) => {
        child.stderr.on('data', (d: Buffer) => {
          stderr += d.toString();
          const m =
            /Capstan is serving the Kubernetes API at https:\/\/[^ ]+ \(embedded in-memory store.*\nPlain HTTP for this host only \(every request is the administrator\): (http:\/\/\S+)/.exec(
              stderr,
            );
          if (m !== null && stderr.includes('Press Ctrl-C to stop.\n')) resolve(m[1]);
        });
        child.once('exit', (code) => reject(new Error(`exited ${String(code)}: ${stderr}`)));
      });
      assert.ok(stderr.includes(`Kubeconfig written to ${path}. In another terminal:\n  export KUBECONFIG=${path}\n  kubectl get namespaces\n`), stderr);
      assert.ok(!stderr.includes('{"level"'), 'no JSON lines in text mode');
      const r = await fetch(`${url}/api/v1/namespaces/default`);
      assert.equal(r.status, 200);
      await r.text();
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
      const requestLine =
        /^\S+Z debug request method=GET path=\/api\/v1\/namespaces\/default verb=get resource=namespaces name=default status=200 durationMs=/m;
      if (level === 'info') assert.doesNotMatch(stderr, / request method=/, 'request lines are quiet at info');
      else assert.match(stderr, requestLine);
      assert.match(stderr, /^\S+Z info  shutting down signal=SIGTERM$/m);
    }
  });

  test('a kubeconfig path that cannot be written: exit 1 before listening, one line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'capstan-wk-'));
    const missing = await runCapstan(['--port', '0', '--write-kubeconfig', join(dir, 'no', 'such', 'kubeconfig')]);
    assert.deepEqual(missing, {
      code: 1,
      stdout: '',
      stderr: `Error: cannot write kubeconfig to ${join(dir, 'no', 'such', 'kubeconfig')}: no such directory\n`,
    });
    const directory = await runCapstan(['--port', '0', '--write-kubeconfig', dir]);
    assert.deepEqual(directory, { code: 1, stdout: '', stderr: `Error: cannot write kubeconfig to ${dir}: it is a directory\n` });
    assert.deepEqual(await runCapstan(['--log-format', 'xml']), {
      code: 2,
      stdout: '',
      stderr: 'Error: invalid argument "xml" for "--log-format" flag: must be auto, json or text\n',
    });
  });

  test('--bind-address and --port are honoured', async () => {
    const proc = await spawnCapstan(['--bind-address', '127.0.0.1', '--port', '0']);
    try {
      assert.match(proc.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      await waitReady(proc.url);
    } finally {
      await proc.stop();
    }
  });

  test('a Redis that cannot be reached: exit 1 with one line naming it (password hidden), single process and workers', async () => {
    const port = await freePort();
    for (const extra of [[], ['--workers', '2']]) {
      const r = await runCapstan(['--port', '0', '--storage=redis', '--redis-url', `redis://capstan:s3cret@127.0.0.1:${port}`, ...extra], 60_000);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stderr, `Error: cannot reach Redis at redis://capstan:xxxxx@127.0.0.1:${port}: connection refused\n`);
      assert.equal(r.stdout, '');
    }
    const scheme = await runCapstan(['--port', '0', '--storage=redis', '--redis-url', 'http://127.0.0.1:6379']);
    assert.equal(scheme.code, 1);
    assert.equal(scheme.stderr, 'Error: invalid --redis-url "http://127.0.0.1:6379": the scheme must be redis:// or rediss://\n');
  });

  test('--workers auto forks one worker per core', async () => {
    const cores = availableParallelism();
    const env = await startRedisWorkers({ workers: 0, args: [] }).catch((err: unknown) => {
      throw err;
    });
    try {
      assert.equal(env.cap.workerPids().length, cores);
    } finally {
      await env.stop();
    }
  });

  test('a port already in use exits 1 with a one-line reason, single process and workers', async () => {
    const redis = await startRedis();
    after(() => redis.stop());
    const first = await spawnCapstan(['--port', '0']);
    try {
      const port = new URL(first.url).port;
      for (const extra of [[], ['--storage=redis', '--redis-url', redis.url, '--workers', '2']]) {
        // --anonymous-auth=false: under the default AlwaysAllow kube's warning that it turns anonymous
        // requests off would be logged before the error.
        const r = await runCapstan(['--port', port, '--anonymous-auth=false', ...extra], 60_000);
        assert.equal(r.code, 1, r.stderr);
        assert.equal(r.stderr, `Error: cannot listen on 127.0.0.1:${port}: address already in use\n`);
        assert.equal(r.stdout, '');
      }
    } finally {
      await first.stop();
    }
  });
});
