/**
 * The test-only pod runner (test/tools/pod-runner/): which images it runs and the process a
 * container's command gives, the environment and `$(VAR)` expansion as the kubelet makes them, the
 * kubelet-managed /etc/hosts, volumes written as the atomic writer does (modes, fsGroup), the
 * kubelet-like status it reports, termination messages, the container logs its kubelet API serves,
 * and (as root, with Debian's busybox) containers run in their own root file system: their output,
 * user, working directory and mounted volumes read back.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { containerArgv, imageOf, ImageLayers, type Image } from '../tools/pod-runner/container-image.js';
import { expand, expandSubPathExpr, resourceFieldValue, serviceEnv, podFieldValue } from '../tools/pod-runner/container-env.js';
import {
  containerCapabilities,
  DEV_SYMLINKS,
  execInContainer,
  launchCommand,
  orderMounts,
  systemMounts,
  type LaunchPlan,
} from '../tools/pod-runner/container-root.js';
import { containerUser, hostsFile, resolvConf, terminationMessage } from '../tools/pod-runner/pod-runner.js';
import { atomicWrite } from '../tools/pod-runner/pod-volumes.js';
import { freeSlotFrom } from '../tools/pod-runner/pod-network.js';
import { buildPodStatus } from '../tools/pod-runner/pod-status.js';
import { captureOutput, logOptionsOf, streamLog } from '../tools/pod-runner/container-log.js';
import { appendFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import http from 'node:http';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { grpcHealthCheck, runProbe } from '../tools/pod-runner/container-probe.js';
import net from 'node:net';
import zlib from 'node:zlib';
import { headerBlock, parseHeaderBlock, SpdyConnection, SPDY_DICTIONARY } from '../tools/pod-runner/spdy.js';

const AGNHOST = 'registry.k8s.io/e2e-test-images/agnhost:2.63.0';
const BUSYBOX = 'registry.k8s.io/e2e-test-images/busybox:1.37.0-1';
const PROGRAMS = { agnhost: '/bin/agnhost', sampleApiserver: '/bin/sample-apiserver', etcd: '/bin/etcd' };

describe('pod runner: images and commands', () => {
  const image = (name: string): Image => imageOf(name, PROGRAMS) as Image;

  test('the process is command + args, else the entrypoint with args or the image CMD, as the kubelet builds it', () => {
    assert.deepEqual(containerArgv({}, image(AGNHOST)), ['/agnhost', 'pause']);
    assert.deepEqual(containerArgv({ args: ['netexec', '--http-port=80'] }, image(AGNHOST)), ['/agnhost', 'netexec', '--http-port=80']);
    assert.deepEqual(containerArgv({ command: ['/agnhost-2'], args: ['entrypoint-tester', 'x'] }, image(AGNHOST)), ['/agnhost-2', 'entrypoint-tester', 'x']);
    assert.deepEqual(containerArgv({}, image(BUSYBOX)), ['sh']);
    assert.deepEqual(containerArgv({ command: ['sh', '-c', 'echo hi'] }, image(BUSYBOX)), ['sh', '-c', 'echo hi']);
    assert.deepEqual(containerArgv({}, image('registry.k8s.io/pause:3.10.1')), ['/pause', 'pause']);
    assert.deepEqual(containerArgv({ args: ['--etcd-servers=x'] }, image('registry.k8s.io/e2e-test-images/sample-apiserver:1.29.2')), [
      '/sample-apiserver',
      '--etcd-servers=x',
    ]);
    assert.equal(image('busybox:1.36').kind, 'busybox');
  });

  test('other images, and images whose binary the runner lacks, are unsupported with a reason', () => {
    assert.match((imageOf('nginx', PROGRAMS) as { unsupported: string }).unsupported, /image nginx is not busybox, agnhost, pause, sample-apiserver or etcd/);
    assert.match((imageOf('registry.k8s.io/etcd:3.6.8-0', { agnhost: '/bin/agnhost' }) as { unsupported: string }).unsupported, /needs an etcd binary/);
  });
});

describe('pod runner: environment', () => {
  test('$(VAR) expands defined names, $$ escapes, and anything else stays as written', () => {
    const vars: Record<string, string> = { FOO: 'foo-value', BAR: 'bar' };
    const lookup = (n: string): string | undefined => vars[n];
    assert.equal(expand('$(FOO);;$(BAR)', lookup), 'foo-value;;bar');
    assert.equal(expand('$(UNSET) $$(FOO) $FOO $(FOO', lookup), '$(UNSET) $(FOO) $FOO $(FOO');
    assert.equal(expand('end$', lookup), 'end$');
  });

  test('subPathExpr: expanded, and refused when a variable has no value or the path is absolute or climbs out', () => {
    assert.equal(expandSubPathExpr('$(A)/$(B)', { A: 'x', B: 'y' }), 'x/y');
    assert.throws(() => expandSubPathExpr('$(ANNOTATION)/$(POD_NAME)', { POD_NAME: 'foo', ANNOTATION: '' }), /missing value for ANNOTATION/);
    assert.throws(() => expandSubPathExpr('$(P)', { P: '/tmp' }), /must not be an absolute path/);
    assert.throws(() => expandSubPathExpr('$(P)', { P: '..' }), /must not contain backsteps/);
  });

  test("Services give the kubelet's docker-link variables", () => {
    const env = serviceEnv([{ metadata: { name: 'foo-svc' }, spec: { clusterIP: '10.0.0.5', ports: [{ name: 'http', port: 8765, protocol: 'TCP' }] } }]);
    assert.deepEqual(env, {
      FOO_SVC_SERVICE_HOST: '10.0.0.5',
      FOO_SVC_SERVICE_PORT: '8765',
      FOO_SVC_SERVICE_PORT_HTTP: '8765',
      FOO_SVC_PORT: 'tcp://10.0.0.5:8765',
      FOO_SVC_PORT_8765_TCP: 'tcp://10.0.0.5:8765',
      FOO_SVC_PORT_8765_TCP_PROTO: 'tcp',
      FOO_SVC_PORT_8765_TCP_PORT: '8765',
      FOO_SVC_PORT_8765_TCP_ADDR: '10.0.0.5',
    });
    assert.deepEqual(serviceEnv([{ metadata: { name: 'headless' }, spec: { clusterIP: 'None', ports: [{ port: 80 }] } }]), {});
  });

  test('resource fields: limits (node allocatable when unset) and requests, divided and rounded up', () => {
    const c = { resources: { limits: { cpu: '1250m', memory: '64Mi' }, requests: { cpu: '250m' } } };
    const alloc = { cpu: '4', memory: '8Gi' };
    assert.equal(resourceFieldValue(c, { resource: 'limits.cpu' }, alloc), '2');
    assert.equal(resourceFieldValue(c, { resource: 'limits.cpu', divisor: '1m' }, alloc), '1250');
    assert.equal(resourceFieldValue(c, { resource: 'requests.cpu', divisor: '1m' }, alloc), '250');
    assert.equal(resourceFieldValue(c, { resource: 'limits.memory', divisor: '1Mi' }, alloc), '64');
    assert.equal(resourceFieldValue({}, { resource: 'limits.memory' }, alloc), String(8 * 2 ** 30));
    assert.equal(resourceFieldValue({}, { resource: 'limits.cpu', divisor: '0' }, alloc), '4');
  });

  test('downward API fields: labels and annotations as sorted quoted lines, single keys, IPs', () => {
    const pod = { metadata: { name: 'p', labels: { b: '2', a: 'x"y' } }, spec: {} };
    assert.equal(podFieldValue(pod, 'metadata.labels', { hostIP: 'h' }), 'a="x\\"y"\nb="2"');
    assert.equal(podFieldValue(pod, "metadata.labels['b']", { hostIP: 'h' }), '2');
    assert.equal(podFieldValue(pod, 'status.podIP', { podIP: '10.244.0.9', hostIP: 'h' }), '10.244.0.9');
  });
});

describe('pod runner: pod files', () => {
  test('/etc/hosts as the kubelet manages it, with the subdomain name and host aliases', () => {
    const pod = {
      metadata: { name: 'p', namespace: 'ns' },
      spec: { hostname: 'h', subdomain: 'sub', hostAliases: [{ ip: '1.2.3.4', hostnames: ['foo', 'bar'] }] },
    };
    const hosts = hostsFile(pod, '10.244.0.7');
    assert.match(hosts, /^# Kubernetes-managed hosts file\.\n127\.0\.0\.1\tlocalhost\n/);
    assert.match(hosts, /\n10\.244\.0\.7\th\.sub\.ns\.svc\.cluster\.local\th\n\n# Entries added by HostAliases\.\n1\.2\.3\.4\tfoo\tbar\n$/);
  });

  test("/etc/resolv.conf: the host's with dnsConfig added; dnsPolicy None has dnsConfig alone", () => {
    const host = 'nameserver 10.0.0.2\nsearch example.org\noptions ndots:1\n';
    assert.equal(resolvConf({ spec: {} }, host), 'search example.org\nnameserver 10.0.0.2\noptions ndots:1\n');
    const none = {
      spec: {
        dnsPolicy: 'None',
        dnsConfig: { nameservers: ['1.1.1.1'], searches: ['resolv.conf.local'], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] },
      },
    };
    assert.equal(resolvConf(none, host), 'search resolv.conf.local\nnameserver 1.1.1.1\noptions ndots:2 edns0\n');
  });

  test("a container's user: runAsUser/runAsGroup (container over pod), else the image's group for the uid; fsGroup and supplementalGroups added", () => {
    const etc = { passwd: 'root:x:0:0::/root:/bin/sh\nuser:x:1000:1000::/home/user:/bin/sh\n', group: 'root:x:0:\nextra:x:50000:user\n' };
    const pod = { spec: { securityContext: { runAsUser: 1000, fsGroup: 123, supplementalGroups: [7] } } };
    assert.deepEqual(containerUser(pod, {}, etc), { uid: 1000, gid: 1000, groups: [50000, 123, 7] });
    assert.deepEqual(containerUser(pod, { securityContext: { runAsUser: 2000, runAsGroup: 3000 } }, etc), { uid: 2000, gid: 3000, groups: [123, 7] });
    assert.deepEqual(containerUser({ spec: {} }, {}, etc), { uid: 0, gid: 0, groups: [] });
  });

  test('atomic-writer volumes: files through ..data, modes from items or defaultMode, fsGroup ownership, and a rewrite swapping ..data', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'pod-runner-vol-')), 'v');
    const files = new Map([
      ['a', { data: Buffer.from('one'), mode: 0o400 }],
      ['sub/b', { data: Buffer.from('two'), mode: 0o644 }],
    ]);
    assert.equal(atomicWrite(dir, files), true);
    assert.equal(readFileSync(join(dir, 'a'), 'utf8'), 'one');
    assert.equal(readFileSync(join(dir, 'sub/b'), 'utf8'), 'two');
    assert.equal(readlinkSync(join(dir, 'a')), '..data/a');
    assert.equal(statSync(join(dir, 'a')).mode & 0o777, 0o400);
    const first = readlinkSync(join(dir, '..data'));
    assert.match(first, /^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\./);
    assert.equal(atomicWrite(dir, files), false, 'the same files: nothing rewritten');
    files.set('a', { data: Buffer.from('changed'), mode: 0o400 });
    files.delete('sub/b');
    assert.equal(atomicWrite(dir, files, 1234), true);
    assert.equal(readFileSync(join(dir, 'a'), 'utf8'), 'changed');
    assert.notEqual(readlinkSync(join(dir, '..data')), first);
    assert.equal(existsSync(join(dir, first)), false, 'the old timestamped directory is gone');
    assert.equal(existsSync(join(dir, 'sub')), false);
    const st = statSync(join(dir, 'a'));
    assert.equal(st.gid, 1234);
    assert.equal(st.mode & 0o777, 0o440, 'fsGroup adds the group read bit');
    assert.ok(lstatSync(join(dir, '..data')).isSymbolicLink());
  });

  test('termination message: the file, else with FallbackToLogsOnError and a failure the log tail', () => {
    const log = [
      '2026-01-01T00:00:00.000000000Z stdout F line 1',
      '2026-01-01T00:00:00.000000000Z stderr P par',
      '2026-01-01T00:00:00.000000000Z stderr F tial',
      '',
    ].join('\n');
    assert.equal(terminationMessage('from file', 'FallbackToLogsOnError', 1, log), 'from file');
    assert.equal(terminationMessage('', 'FallbackToLogsOnError', 1, log), 'line 1\npartial\n');
    assert.equal(terminationMessage('', 'FallbackToLogsOnError', 0, log), '');
    assert.equal(terminationMessage('', 'File', 1, log), '');
    const long = Array.from({ length: 100 }, (_, i) => `2026-01-01T00:00:00.000000000Z stdout F ${i}`).join('\n') + '\n';
    assert.equal(terminationMessage('', 'FallbackToLogsOnError', 2, long).split('\n')[0], '20');
  });

  test('mounts are made shallow paths first, in the given order among equals', () => {
    const ordered = orderMounts([{ target: '/etc/config/sub' }, { target: '/dev/null' }, { target: '/etc/config' }, { target: '/dev' }]);
    assert.deepEqual(
      ordered.map((m) => m.target),
      ['/dev', '/dev/null', '/etc/config', '/etc/config/sub'],
    );
  });
});

/** The busybox of the tests' containers: build-busybox.sh's when it was built, else the host's. */
const BUSYBOX_BINARY = [join(homedir(), '.cache/capstan/busybox/busybox-1.37.0'), '/bin/busybox', '/usr/bin/busybox'].find((p) => existsSync(p));

/** Whether containers can really run here: root, Perl, overlayfs and a busybox. */
function canLaunch(): boolean {
  if (process.getuid?.() !== 0) return false;
  if (BUSYBOX_BINARY === undefined) return false;
  return spawnSync('perl', ['-MJSON::PP', '-e', '1']).status === 0 && readFileSync('/proc/filesystems', 'utf8').includes('overlay');
}

describe('pod runner: containers in their own root', { skip: canLaunch() ? false : 'needs root, perl, overlayfs and busybox (Debian busybox-static)' }, () => {
  /** Runs a busybox container with `script` and the given mounts; resolves with its exit code and output. */
  function run(script: string, extra: Partial<LaunchPlan> = {}): { status: number | null; stdout: string; stderr: string; dir: string } {
    const { plan, dir } = busyboxPlan(script, extra);
    const launch = launchCommand(undefined, plan);
    const r = spawnSync(launch.command, launch.args, { env: launch.env, encoding: 'utf8', timeout: 20_000 });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr, dir };
  }

  /** The plan of a busybox container running `script`, its volume at /mnt/ro (read-only) and /mnt/rw. */
  function busyboxPlan(script: string, extra: Partial<LaunchPlan> = {}): { plan: LaunchPlan; dir: string } {
    const dir = mkdtempSync(join(tmpdir(), 'pod-runner-root-'));
    const layers = new ImageLayers(join(dir, 'images'), { agnhost: '/nonexistent', busybox: BUSYBOX_BINARY });
    for (const d of ['root', 'upper', 'work', 'etc', 'vol']) mkdirSync(join(dir, d));
    writeFileSync(join(dir, 'etc/hosts'), hostsFile({ metadata: { name: 'pod-a', namespace: 'n' }, spec: {} }, '10.244.0.9'));
    writeFileSync(join(dir, 'etc/hostname'), 'pod-a\n');
    writeFileSync(join(dir, 'etc/resolv.conf'), '');
    writeFileSync(join(dir, 'vol/file'), 'from the volume\n');
    const plan: LaunchPlan = {
      hostname: 'pod-a',
      root: join(dir, 'root'),
      lower: layers.layers('busybox'),
      upper: join(dir, 'upper'),
      work: join(dir, 'work'),
      readOnlyRoot: false,
      mounts: [
        ...systemMounts({ hosts: join(dir, 'etc/hosts'), hostname: join(dir, 'etc/hostname'), resolvConf: join(dir, 'etc/resolv.conf') }),
        { target: '/mnt/ro', source: join(dir, 'vol'), readOnly: true },
        { target: '/mnt/rw', source: join(dir, 'vol') },
      ],
      symlinks: DEV_SYMLINKS,
      uid: 0,
      gid: 0,
      groups: [],
      workingDir: '/',
      capabilities: containerCapabilities({}),
      noNewPrivileges: false,
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', GREETING: 'hello' },
      argv: ['sh', '-c', script],
      ...extra,
    };
    return { plan, dir };
  }

  test('a busybox shell runs with exactly its environment, its hostname and the pod /etc/hosts', () => {
    const r = run('echo "$GREETING"; env | sort; hostname; grep pod-a /etc/hosts; exit 3');
    assert.equal(r.status, 3, r.stderr);
    const lines = r.stdout.split('\n');
    assert.equal(lines[0], 'hello');
    assert.ok(lines.includes('PATH=/usr/sbin:/usr/bin:/sbin:/bin') && lines.includes('GREETING=hello'));
    assert.ok(!r.stdout.includes('CAPSTAN_CONTAINER'), "the helper's own variables do not reach the container");
    assert.ok(lines.includes('pod-a'));
    assert.ok(lines.includes('10.244.0.9\tpod-a'));
  });

  test(
    'variables whose names are not shell names reach what the shell runs (envFrom keys such as data-1), with busybox 1.37',
    { skip: BUSYBOX_BINARY?.endsWith('1.37.0') ? false : 'needs the busybox of build-busybox.sh' },
    () => {
      const r = run('env', { env: { PATH: '/usr/bin:/bin', 'data-1': 'value-1', 'p-data-1': 'value-1' } });
      assert.match(r.stdout, /^data-1=value-1$/m);
      assert.match(r.stdout, /^p-data-1=value-1$/m);
    },
  );

  test('volumes are visible at their mount paths; a readOnly one refuses writes, a writable one keeps them', () => {
    const r = run('cat /mnt/ro/file; echo x > /mnt/ro/new || echo refused; echo kept > /mnt/rw/new && echo written');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^from the volume\nrefused\nwritten\n$/);
    assert.match(r.stderr, /Read-only file system/);
    assert.equal(readFileSync(join(r.dir, 'vol/new'), 'utf8'), 'kept\n');
  });

  test("the container's user, groups and working directory; writes land in its own layer, not the image's", () => {
    const r = run('id -u; id -g; id -G; pwd; touch /tmp/x && echo tmp-ok', { uid: 1000, gid: 2000, groups: [3000], workingDir: '/work/dir' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n'), ['1000', '2000', '2000 3000', '/work/dir', 'tmp-ok']);
    assert.ok(existsSync(join(r.dir, 'upper/tmp/x')));
    assert.ok(!existsSync(join(r.dir, 'images/busybox/tmp/x')));
  });

  test('a container that is not privileged lacks NET_ADMIN (cannot add a link); a privileged one has it', () => {
    const plain = run('ip link add dummy0 type dummy && echo added; exit 0');
    assert.doesNotMatch(plain.stdout, /added/);
    assert.match(plain.stderr, /Operation not permitted/);
    const capEff = (caps: number[] | 'all'): bigint =>
      BigInt('0x' + /CapEff:\s*([0-9a-f]+)/.exec(run('cat /proc/self/status', { capabilities: caps }).stdout)![1]);
    assert.equal(capEff('all') & (1n << 12n), 1n << 12n);
    assert.equal(capEff(containerCapabilities({ capabilities: { add: ['NET_ADMIN'] } })) & (1n << 12n), 1n << 12n);
    assert.equal(capEff(containerCapabilities({ capabilities: { drop: ['ALL'] } })), 0n);
  });

  test('a command run in a running container (exec probes) sees its root, mounts, hostname and environment, and gives its exit code', async () => {
    const { plan } = busyboxPlan('touch /tmp/started; exec sleep 30', { uid: 1000, gid: 1000 });
    const launch = launchCommand(undefined, plan);
    const child = spawn(launch.command, launch.args, { env: launch.env, stdio: 'ignore' });
    try {
      const check =
        'test -f /tmp/started && test "$(hostname)" = pod-a && test "$GREETING" = hello && test "$(id -u)" = 1000 && cat /mnt/ro/file >/dev/null && exit 7';
      let code: number | undefined;
      for (let i = 0; i < 50 && code !== 7; i++) {
        code = await execInContainer(child.pid!, plan, ['sh', '-c', check], 5000);
        if (code !== 7) await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(code, 7);
      assert.equal(await execInContainer(child.pid!, plan, ['sleep', '10'], 200), undefined, 'a command that outlives its timeout');
    } finally {
      child.kill('SIGKILL');
    }
  });

  test('the start signal (fd 3 closing) comes when the program is executed, not when the helper ends', async () => {
    const { plan } = busyboxPlan('sleep 1; echo done');
    const launch = launchCommand(undefined, plan);
    const child = spawn(launch.command, launch.args, { env: launch.env, stdio: ['ignore', 'pipe', 'ignore', 'pipe'] });
    const t0 = Date.now();
    const signal = child.stdio[3] as NodeJS.ReadableStream;
    signal.resume();
    const startedAfter = await new Promise<number>((resolve) => signal.on('close', () => resolve(Date.now() - t0)));
    const [code] = (await once(child, 'exit')) as [number];
    assert.equal(code, 0);
    assert.ok(startedAfter < Date.now() - t0 - 500, `started after ${startedAfter} ms, exited after ${Date.now() - t0} ms`);
  });

  test('readOnlyRootFilesystem refuses writes to the root; a command that does not exist ends with 128', () => {
    const ro = run('echo x > /file || echo refused', { readOnlyRoot: true, argv: ['/bin/sh', '-c', 'echo x > /file || echo refused'] });
    assert.equal(ro.stdout, 'refused\n');
    assert.equal(ro.stderr, "/bin/sh: can't create /file: Read-only file system\n");
    const missing = run('', { argv: ['/no/such/command'] });
    assert.equal(missing.status, 128);
    assert.match(missing.stderr, /exec \/no\/such\/command/);
  });
});

describe('pod runner: probes', () => {
  test('a gRPC health check succeeds on SERVING with grpc-status 0, and fails otherwise or without a server', async () => {
    let answer = 1;
    const server = http2.createServer();
    server.on('stream', (stream, headers) => {
      assert.equal(headers[':path'], '/grpc.health.v1.Health/Check');
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(Buffer.from([0, 0, 0, 0, 2, 0x08, answer]));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    const reasons: string[] = [];
    const failed = (why: string): number => reasons.push(why);
    try {
      assert.equal(await grpcHealthCheck('127.0.0.1', port, '', 2000, failed), true);
      assert.deepEqual(reasons, []);
      answer = 2;
      assert.equal(await grpcHealthCheck('127.0.0.1', port, 'svc', 2000, failed), false);
      assert.deepEqual(reasons, ['service unhealthy (responded with status 2)']);
    } finally {
      server.close();
    }
    assert.equal(await grpcHealthCheck('127.0.0.1', port, '', 2000, failed), false);
    assert.equal(reasons.length, 2);
    assert.match(reasons[1] ?? '', new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${port}`));
  });

  test("a stall of the runner's event loop past the timeout does not fail a probe the container answers; silence still fails", async () => {
    /** Blocks the event loop as a synchronous copy of a root file system does. */
    const stall = (ms: number): void => {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        // busy
      }
    };
    const grpc = http2.createServer();
    grpc.on('stream', (stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(Buffer.from([0, 0, 0, 0, 2, 0x08, 1]));
    });
    const web = http.createServer((_req, res) => res.end('ok'));
    const silent = http.createServer(() => {
      // never answers
    });
    for (const server of [grpc, web, silent]) {
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
    }
    const portOf = (server: { address(): unknown }): number => (server.address() as AddressInfo).port;
    try {
      const grpcCheck = grpcHealthCheck('127.0.0.1', portOf(grpc), '', 500);
      stall(1_200);
      assert.equal(await grpcCheck, true);
      const httpCheck = runProbe({ httpGet: { port: portOf(web), path: '/' }, timeoutSeconds: 1 }, { ports: [] }, '127.0.0.1');
      stall(1_500);
      assert.equal(await httpCheck, true);
      const tcpCheck = runProbe({ tcpSocket: { port: portOf(web) }, timeoutSeconds: 1 }, { ports: [] }, '127.0.0.1');
      stall(1_500);
      assert.equal(await tcpCheck, true);
      const reasons: string[] = [];
      const failed = (why: string): number => reasons.push(why);
      assert.equal(await runProbe({ httpGet: { port: portOf(silent), path: '/' }, timeoutSeconds: 1 }, { ports: [] }, '127.0.0.1', undefined, failed), false);
      assert.deepEqual(reasons, ['timeout: no answer within 1000 ms']);
    } finally {
      grpc.close();
      web.closeAllConnections();
      web.close();
      silent.closeAllConnections();
      silent.close();
    }
  });
});

describe('pod runner: SPDY', () => {
  /** A client's header compressor: one zlib stream with SPDY's dictionary, flushed per block. */
  function compressor(): (raw: Buffer) => Promise<Buffer> {
    const z = zlib.createDeflate({ dictionary: SPDY_DICTIONARY });
    let out: Buffer[] = [];
    z.on('data', (d: Buffer) => out.push(d));
    return (raw) =>
      new Promise((resolve) => {
        z.write(raw);
        z.flush(zlib.constants.Z_SYNC_FLUSH, () => {
          resolve(Buffer.concat(out));
          out = [];
        });
      });
  }

  test('streams are answered with SYN_REPLY, their headers read, DATA passed both ways, PING echoed, and close sends FIN and GOAWAY', async () => {
    const seen: Array<Record<string, string>> = [];
    const server = net.createServer((socket) => {
      const conn = new SpdyConnection(socket, Buffer.alloc(0), (stream) => {
        seen.push(stream.headers);
        stream.onData = (data) => {
          if (data === null) {
            stream.write(Buffer.from('bye'));
            conn.close();
          } else stream.write(Buffer.from(data.toString().toUpperCase()));
        };
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const client = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
    await once(client, 'connect');
    const received: Buffer[] = [];
    client.on('data', (d: Buffer) => received.push(d));
    const compress = compressor();
    const control = (type: number, flags: number, payload: Buffer): Buffer => {
      const head = Buffer.alloc(8);
      head.writeUInt32BE(0x80030000 + type);
      head.writeUInt32BE(flags * 0x1000000 + payload.length, 4);
      return Buffer.concat([head, payload]);
    };
    const syn = Buffer.alloc(10);
    syn.writeUInt32BE(1);
    client.write(control(1, 0, Buffer.concat([syn, await compress(headerBlock({ streamType: 'stdout' }))])));
    client.write(control(6, 0, Buffer.from([0, 0, 0, 7])));
    const data = Buffer.alloc(8);
    data.writeUInt32BE(1);
    data.writeUInt32BE(5, 4);
    client.write(Buffer.concat([data, Buffer.from('hello')]));
    const fin = Buffer.alloc(8);
    fin.writeUInt32BE(1);
    fin.writeUInt32BE(0x01000000, 4);
    client.write(fin);
    await once(client, 'end');
    server.close();
    // The frames the server sent, in order.
    const all = Buffer.concat(received);
    const frames: Array<{ control: boolean; type: number; flags: number; payload: Buffer }> = [];
    for (let at = 0; at < all.length;) {
      const first = all.readUInt32BE(at);
      const length = all.readUInt32BE(at + 4) & 0xffffff;
      frames.push({ control: (first & 0x80000000) !== 0, type: first & 0xffff, flags: all[at + 4], payload: all.subarray(at + 8, at + 8 + length) });
      at += 8 + length;
    }
    assert.deepEqual(seen, [{ streamtype: 'stdout' }]);
    assert.deepEqual(
      frames.map((f) => (f.control ? `control ${f.type}` : `data ${f.payload.toString()}${f.flags & 1 ? ' FIN' : ''}`)),
      ['control 2', 'control 6', 'data HELLO', 'data bye', 'data  FIN', 'control 7'],
    );
    const reply = zlib.inflateSync(frames[0].payload.subarray(4), { dictionary: SPDY_DICTIONARY, finishFlush: zlib.constants.Z_SYNC_FLUSH });
    assert.deepEqual(parseHeaderBlock(reply), {});
    assert.deepEqual(frames[1].payload, Buffer.from([0, 0, 0, 7]));
  });
});

describe('pod runner: status', () => {
  const pod = {
    metadata: { name: 'p', namespace: 'n' },
    spec: { containers: [{ name: 'c', image: AGNHOST }] },
    status: { qosClass: 'BestEffort', conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: '2026-01-01T00:00:00Z' }] },
  };
  const container = { name: 'c', image: AGNHOST, imageID: 'img@sha256:1', containerID: 'capstan://1', restartCount: 0 };

  test('a started, not yet ready container: Running, Ready False since its last transition, IPs set', () => {
    const status = buildPodStatus(
      pod,
      { podIP: '10.244.0.2', hostIP: '10.0.0.10', startTime: 'T0', containers: [{ ...container, ready: false, startedAt: 'T1' }] },
      'T2',
    ) as any;
    assert.equal(status.phase, 'Running');
    assert.deepEqual(status.podIPs, [{ ip: '10.244.0.2' }]);
    assert.equal(status.qosClass, 'BestEffort');
    const ready = status.conditions.find((c: any) => c.type === 'Ready');
    assert.deepEqual(ready, {
      type: 'Ready',
      status: 'False',
      lastProbeTime: null,
      lastTransitionTime: '2026-01-01T00:00:00Z',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [c]',
    });
    assert.deepEqual(status.containerStatuses[0].state, { running: { startedAt: 'T1' } });
    assert.equal(status.containerStatuses[0].started, true);
  });

  test('a ready container: every condition True, transitions stamped now', () => {
    const status = buildPodStatus(
      pod,
      { podIP: '10.244.0.2', hostIP: '10.0.0.10', startTime: 'T0', containers: [{ ...container, ready: true, startedAt: 'T1' }] },
      'T2',
    ) as any;
    assert.deepEqual(
      status.conditions.map((c: any) => [c.type, c.status]),
      [
        ['PodReadyToStartContainers', 'True'],
        ['Initialized', 'True'],
        ['Ready', 'True'],
        ['ContainersReady', 'True'],
        ['PodScheduled', 'True'],
      ],
    );
    assert.equal(status.conditions.find((c: any) => c.type === 'Ready').lastTransitionTime, 'T2');
  });

  test("observedGeneration is the generation seen; the scheduler's and other writers' conditions are kept as they are", () => {
    const scheduled = { type: 'PodScheduled', status: 'True', observedGeneration: 1, lastTransitionTime: 'T0' };
    const disruption = { type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', lastTransitionTime: 'T1' };
    const withConditions = { ...pod, status: { conditions: [scheduled, disruption] } };
    const status = buildPodStatus(
      withConditions,
      { hostIP: 'h', startTime: 'T0', containers: [{ ...container, ready: true, startedAt: 'T1' }], generation: 3 },
      'T2',
    ) as any;
    assert.equal(status.observedGeneration, 3);
    assert.equal(status.conditions.find((c: any) => c.type === 'Ready').observedGeneration, 3);
    assert.deepEqual(
      status.conditions.find((c: any) => c.type === 'PodScheduled'),
      scheduled,
    );
    assert.deepEqual(
      status.conditions.find((c: any) => c.type === 'DisruptionTarget'),
      disruption,
    );
  });

  test('a terminated container of a restartPolicy Never pod: Succeeded or Failed by exit code', () => {
    const never = { ...pod, spec: { ...pod.spec, restartPolicy: 'Never' } };
    const terminated = (exitCode: number) => ({ ...container, ready: false, terminated: { exitCode, startedAt: 'T1', finishedAt: 'T2', reason: 'x' } });
    assert.equal((buildPodStatus(never, { hostIP: 'h', startTime: 'T0', containers: [terminated(0)] }, 'T3') as any).phase, 'Succeeded');
    assert.equal((buildPodStatus(never, { hostIP: 'h', startTime: 'T0', containers: [terminated(2)] }, 'T3') as any).phase, 'Failed');
    const done = buildPodStatus(never, { hostIP: 'h', startTime: 'T0', containers: [terminated(0)] }, 'T3') as any;
    assert.equal(done.conditions.find((c: any) => c.type === 'Ready').reason, 'PodCompleted');
  });

  test('a pod stopped for its deletion is terminal whatever its restartPolicy: Succeeded when every container ended with 0, else Failed', () => {
    const ended = (exitCode: number) => ({
      ...container,
      ready: false,
      terminated: { exitCode, startedAt: 'T1', finishedAt: 'T2', reason: exitCode ? 'Error' : 'Completed' },
    });
    assert.equal((buildPodStatus(pod, { hostIP: 'h', startTime: 'T0', containers: [ended(0)], terminal: true }, 'T3') as any).phase, 'Succeeded');
    assert.equal((buildPodStatus(pod, { hostIP: 'h', startTime: 'T0', containers: [ended(143)], terminal: true }, 'T3') as any).phase, 'Failed');
    assert.equal(
      (buildPodStatus(pod, { hostIP: 'h', startTime: 'T0', containers: [ended(143)] }, 'T3') as any).phase,
      'Running',
      'restartPolicy Always, not deleted',
    );
  });

  test('init containers: Pending and not Initialized until all completed, naming those left; one failing under Never fails the pod', () => {
    const withInit = { ...pod, spec: { ...pod.spec, restartPolicy: 'Never', initContainers: [{ name: 'i1' }, { name: 'i2' }] } };
    const waiting = (name: string) => ({ ...container, name, ready: false, waiting: { reason: 'PodInitializing' } });
    const exited = (name: string, exitCode: number) => ({
      ...container,
      name,
      ready: false,
      terminated: { exitCode, startedAt: 'T1', finishedAt: 'T2', reason: exitCode ? 'Error' : 'Completed' },
    });
    const first = buildPodStatus(
      withInit,
      {
        hostIP: 'h',
        startTime: 'T0',
        initContainers: [{ ...container, name: 'i1', ready: false, startedAt: 'T1' }, waiting('i2')],
        containers: [waiting('c')],
      },
      'T3',
    ) as any;
    assert.equal(first.phase, 'Pending');
    const init = first.conditions.find((c: any) => c.type === 'Initialized');
    assert.deepEqual([init.status, init.reason, init.message], ['False', 'ContainersNotInitialized', 'containers with incomplete status: [i1 i2]']);
    assert.deepEqual(first.initContainerStatuses[1].state, { waiting: { reason: 'PodInitializing' } });
    const failed = buildPodStatus(
      withInit,
      { hostIP: 'h', startTime: 'T0', initContainers: [exited('i1', 1), waiting('i2')], containers: [waiting('c')] },
      'T3',
    ) as any;
    assert.equal(failed.phase, 'Failed');
    const initialised = buildPodStatus(
      withInit,
      { hostIP: 'h', startTime: 'T0', initContainers: [exited('i1', 0), exited('i2', 0)], containers: [{ ...container, ready: true, startedAt: 'T2' }] },
      'T3',
    ) as any;
    assert.equal(initialised.phase, 'Running');
    assert.equal(initialised.conditions.find((c: any) => c.type === 'Initialized').status, 'True');
  });
});

describe('pod runner: container logs', () => {
  /** A log written through captureOutput from two streams, and a reader of it. */
  async function captured(
    writes: Array<['stdout' | 'stderr', string]>,
  ): Promise<{ file: string; read: (query: string, running?: () => boolean) => Promise<string> }> {
    const dir = mkdtempSync(join(tmpdir(), 'pod-runner-log-'));
    const file = join(dir, 'c.log');
    const out = new PassThrough();
    const err = new PassThrough();
    captureOutput(file, [
      [out, 'stdout'],
      [err, 'stderr'],
    ]);
    for (const [stream, text] of writes) (stream === 'stdout' ? out : err).write(text);
    const ended = Promise.all([once(out, 'end'), once(err, 'end')]);
    out.end();
    err.end();
    out.resume();
    err.resume();
    await ended;
    const read = async (query: string, running = (): boolean => false): Promise<string> => {
      const sink = new PassThrough();
      const chunks: Buffer[] = [];
      sink.on('data', (c: Buffer) => chunks.push(c));
      const done = once(sink, 'end');
      streamLog(file, logOptionsOf(new URLSearchParams(query)), sink, running);
      await done;
      return Buffer.concat(chunks).toString();
    };
    return { file, read };
  }

  test('lines are kept in the CRI format (output ending without a newline: a partial record) and read back with tailLines, limitBytes and timestamps', async () => {
    const { file, read } = await captured([
      ['stdout', 'one\ntw'],
      ['stdout', 'o\n'],
      ['stderr', 'oops\n'],
      ['stdout', 'last without newline'],
    ]);
    const records = readFileSync(file, 'utf8').trimEnd().split('\n');
    assert.deepEqual(
      records.map((r) => r.replace(/^\S+ /, '')),
      ['stdout F one', 'stdout F two', 'stderr F oops', 'stdout P last without newline'],
    );
    assert.ok(records.every((r) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z /.test(r)));
    assert.equal(await read(''), 'one\ntwo\noops\nlast without newline');
    assert.equal(await read('tailLines=2'), 'oops\nlast without newline');
    assert.equal(await read('tailLines=0'), '');
    assert.equal(await read('limitBytes=6'), 'one\ntw');
    const stamped = (await read('timestamps=true&tailLines=1')).split(' ');
    assert.ok(!Number.isNaN(Date.parse(stamped[0])), stamped[0]);
    assert.equal(stamped.slice(1).join(' '), 'last without newline');
    assert.equal(await read('sinceTime=2999-01-01T00:00:00Z'), '');
    assert.equal(await read('sinceSeconds=3600'), 'one\ntwo\noops\nlast without newline');
  });

  test('follow keeps writing what is appended until the container stops', async () => {
    const { file, read } = await captured([['stdout', 'before\n']]);
    let running = true;
    const reading = read('follow=true', () => running);
    appendFileSync(file, `${new Date().toISOString()} stdout F after\n`);
    // The reader ends only once the container has stopped (and a few idle polls passed).
    running = false;
    assert.equal(await reading, 'before\nafter\n');
  });
});

describe('pod IPs', () => {
  test('an address is given again only after every other one: the next free slot after the last, skipping .0 and .255, wrapping around', () => {
    const used = new Set<number>([3]);
    // Slot 2 was just freed: the search goes on from the last slot given (3), not from the lowest free one.
    assert.equal(freeSlotFrom(used, 4), 4);
    assert.equal(freeSlotFrom(used, 3), 4);
    assert.equal(freeSlotFrom(new Set(), 255), 256 + 1);
    assert.equal(freeSlotFrom(new Set([2]), 0xfffe), 0xfffe);
    assert.equal(freeSlotFrom(new Set([2, 0xfffe]), 0xfffe), 3);
    assert.equal(freeSlotFrom(new Set(), 0x10000), 2);
    const all = new Set<number>();
    for (let slot = 2; slot <= 0xfffe; slot++) all.add(slot);
    assert.throws(() => freeSlotFrom(all, 2), /no free pod IP/);
  });
});
