/**
 * The pure parts of the test-only pod runner (test/tools/pod-runner/): which containers it can run
 * and with which agnhost arguments, how mount paths in arguments are rewritten, the kubelet-like
 * status it reports, and the container logs its kubelet API serves.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { agnhostArguments, containerProgram, rewriteMountPaths } from '../tools/pod-runner/container-command.js';
import { buildPodStatus } from '../tools/pod-runner/pod-status.js';
import { captureOutput, logOptionsOf, streamLog } from '../tools/pod-runner/container-log.js';
import { appendFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';

const AGNHOST = 'registry.k8s.io/e2e-test-images/agnhost:2.63.0';

describe('pod runner: container commands', () => {
  test('agnhost images run their args, their command after /agnhost, or pause by default', () => {
    assert.deepEqual(agnhostArguments({ name: 'c', image: AGNHOST, args: ['webhook', '--port=8444'] }), {
      args: ['webhook', '--port=8444'],
      argv0: '/agnhost',
    });
    assert.deepEqual(agnhostArguments({ name: 'c', image: AGNHOST, command: ['/agnhost', 'netexec'], args: ['--http-port=80'] }), {
      args: ['netexec', '--http-port=80'],
      argv0: '/agnhost',
    });
    assert.deepEqual(agnhostArguments({ name: 'c', image: AGNHOST }), { args: ['pause'], argv0: '/agnhost' });
    // The image's second copy of the binary, which kube's entrypoint tests run, keeps its name.
    assert.deepEqual(agnhostArguments({ name: 'c', image: AGNHOST, command: ['/agnhost-2'], args: ['entrypoint-tester', 'x'] }), {
      args: ['entrypoint-tester', 'x'],
      argv0: '/agnhost-2',
    });
    assert.deepEqual(agnhostArguments({ name: 'c', image: 'registry.k8s.io/pause:3.10.1' }), { args: ['pause'] });
  });

  test('other images and commands are unsupported, with a reason', () => {
    assert.match((agnhostArguments({ name: 'c', image: 'nginx' }) as { unsupported: string }).unsupported, /image nginx is not agnhost or pause/);
    assert.match(
      (agnhostArguments({ name: 'c', image: AGNHOST, command: ['/bin/sh', '-c', 'x'] }) as { unsupported: string }).unsupported,
      /"\/bin\/sh" is not agnhost/,
    );
  });

  test("the Aggregator test's sample-apiserver and etcd images run their native binaries when the runner has them", () => {
    const programs = { agnhost: '/bin/agnhost', sampleApiserver: '/bin/sample-apiserver', etcd: '/bin/etcd' };
    const sample = {
      name: 'sample-apiserver',
      image: 'registry.k8s.io/e2e-test-images/sample-apiserver:1.29.2',
      args: ['--etcd-servers=http://127.0.0.1:2379'],
    };
    assert.deepEqual(containerProgram(sample, programs), {
      binary: '/bin/sample-apiserver',
      args: ['--etcd-servers=http://127.0.0.1:2379'],
      image: 'sample-apiserver',
    });
    const etcd = { name: 'etcd', image: 'registry.k8s.io/etcd:3.6.8-0', command: ['/usr/local/bin/etcd', '--listen-client-urls', 'http://127.0.0.1:2379'] };
    assert.deepEqual(containerProgram(etcd, programs), { binary: '/bin/etcd', args: ['--listen-client-urls', 'http://127.0.0.1:2379'], image: 'etcd' });
    assert.deepEqual(containerProgram({ name: 'c', image: AGNHOST }, programs), {
      binary: '/bin/agnhost',
      args: ['pause'],
      image: 'agnhost',
      argv0: '/agnhost',
    });
    assert.match((containerProgram(sample, { agnhost: '/bin/agnhost' }) as { unsupported: string }).unsupported, /needs a sample-apiserver binary/);
    assert.match(
      (containerProgram({ ...etcd, command: ['/bin/sh'] }, programs) as { unsupported: string }).unsupported,
      /"\/bin\/sh" is not \/usr\/local\/bin\/etcd/,
    );
    assert.match(
      (containerProgram({ name: 'c', image: 'nginx' }, programs) as { unsupported: string }).unsupported,
      /is not agnhost, pause, sample-apiserver or etcd/,
    );
  });

  test('mount paths are rewritten at the start of a value or after =, and only as whole path segments', () => {
    const mounts = [
      { mountPath: '/certs', hostPath: '/tmp/p/certs' },
      { mountPath: '/certs/extra', hostPath: '/tmp/p/extra' },
    ];
    assert.equal(rewriteMountPaths('--tls-cert-file=/certs/tls.crt', mounts), '--tls-cert-file=/tmp/p/certs/tls.crt');
    assert.equal(rewriteMountPaths('/certs/extra/a', mounts), '/tmp/p/extra/a');
    assert.equal(rewriteMountPaths('/certs', mounts), '/tmp/p/certs');
    assert.equal(rewriteMountPaths('/certsX/a', mounts), '/certsX/a');
    assert.equal(rewriteMountPaths('a/certs/b', mounts), 'a/certs/b');
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
    assert.deepEqual(ready, { type: 'Ready', status: 'False', lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'ContainersNotReady' });
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

  test('a terminated container of a restartPolicy Never pod: Succeeded or Failed by exit code', () => {
    const never = { ...pod, spec: { ...pod.spec, restartPolicy: 'Never' } };
    const terminated = (exitCode: number) => ({ ...container, ready: false, terminated: { exitCode, startedAt: 'T1', finishedAt: 'T2', reason: 'x' } });
    assert.equal((buildPodStatus(never, { hostIP: 'h', startTime: 'T0', containers: [terminated(0)] }, 'T3') as any).phase, 'Succeeded');
    assert.equal((buildPodStatus(never, { hostIP: 'h', startTime: 'T0', containers: [terminated(2)] }, 'T3') as any).phase, 'Failed');
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

  test('lines are kept in the CRI format and read back with tailLines, limitBytes and timestamps', async () => {
    const { file, read } = await captured([
      ['stdout', 'one\ntw'],
      ['stdout', 'o\n'],
      ['stderr', 'oops\n'],
      ['stdout', 'last without newline'],
    ]);
    const records = readFileSync(file, 'utf8').trimEnd().split('\n');
    assert.deepEqual(
      records.map((r) => r.replace(/^\S+ /, '')),
      ['stdout F one', 'stdout F two', 'stderr F oops', 'stdout F last without newline'],
    );
    assert.ok(records.every((r) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z /.test(r)));
    assert.equal(await read(''), 'one\ntwo\noops\nlast without newline\n');
    assert.equal(await read('tailLines=2'), 'oops\nlast without newline\n');
    assert.equal(await read('tailLines=0'), '');
    assert.equal(await read('limitBytes=6'), 'one\ntw');
    const stamped = (await read('timestamps=true&tailLines=1')).split(' ');
    assert.ok(!Number.isNaN(Date.parse(stamped[0])), stamped[0]);
    assert.equal(stamped.slice(1).join(' '), 'last without newline\n');
    assert.equal(await read('sinceTime=2999-01-01T00:00:00Z'), '');
    assert.equal(await read('sinceSeconds=3600'), 'one\ntwo\noops\nlast without newline\n');
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
