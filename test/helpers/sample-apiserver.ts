/**
 * kube's sample API server (the wardle server of the e2e Aggregator test) and the etcd it stores
 * into, as child processes for tests: binaries from scripts/aggregator/build-sample-apiserver.sh and
 * scripts/aggregator/ensure-etcd.sh (cached after their first build), each on free ports.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from './redis-process.js';

const SCRIPTS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'scripts', 'aggregator');

/** Runs a build script and returns the binary path it prints. */
export async function buildTool(script: string): Promise<string> {
  const { stdout } = await promisify(execFile)('bash', [join(SCRIPTS, script)], { maxBuffer: 16 * 1024 * 1024 });
  return stdout.trim().split('\n').pop() ?? '';
}

export interface SampleApiServer {
  port: number;
  /** The audit events the server wrote (JSON lines of its stdout). */
  auditEvents(): { verb: string; user: { username: string; groups?: string[] }; objectRef?: { resource?: string }; stage: string }[];
  /** Everything the server and etcd wrote so far. */
  log(): string;
  stop(): Promise<void>;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}

/**
 * Starts etcd and the sample API server listening on `host`, serving `certPem`/`keyPem`, with
 * `kubeconfig` (a kubeconfig file's text) as its core-server connection for delegated
 * authentication, authorization and informers.
 */
export async function startSampleApiServer(host: string, certPem: string, keyPem: string, kubeconfig: string): Promise<SampleApiServer> {
  const [etcdBin, sampleBin] = await Promise.all([buildTool('ensure-etcd.sh'), buildTool('build-sample-apiserver.sh')]);
  const dir = mkdtempSync(join(tmpdir(), 'capstan-wardle-'));
  writeFileSync(join(dir, 'tls.crt'), certPem);
  writeFileSync(join(dir, 'tls.key'), keyPem);
  writeFileSync(join(dir, 'kubeconfig'), kubeconfig);
  writeFileSync(join(dir, 'audit-policy.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n');
  const [client, peer, port] = [await freePort(), await freePort(), await freePort()];
  let output = '';
  const collect = (child: ChildProcess): void => {
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  };
  const etcdUrl = `http://127.0.0.1:${client}`;
  const etcd = spawn(
    etcdBin,
    [
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-cluster=default=http://127.0.0.1:${peer}`,
      '--unsafe-no-fsync',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  collect(etcd);
  const kc = join(dir, 'kubeconfig');
  const server = spawn(
    sampleBin,
    [
      `--etcd-servers=${etcdUrl}`,
      `--secure-port=${port}`,
      `--bind-address=${host}`,
      `--tls-cert-file=${join(dir, 'tls.crt')}`,
      `--tls-private-key-file=${join(dir, 'tls.key')}`,
      `--kubeconfig=${kc}`,
      `--authentication-kubeconfig=${kc}`,
      `--authorization-kubeconfig=${kc}`,
      // Audit events on stdout: who the server took each request to be from.
      '--audit-log-path=-',
      `--audit-policy-file=${join(dir, 'audit-policy.yaml')}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  collect(server);
  return {
    port,
    auditEvents: () =>
      output.split('\n').flatMap((line) => {
        if (!line.startsWith('{')) return [];
        try {
          const e = JSON.parse(line) as { kind?: string };
          return e.kind === 'Event' ? [e as ReturnType<SampleApiServer['auditEvents']>[number]] : [];
        } catch {
          return [];
        }
      }),
    log: () => output,
    stop: async () => {
      await stopChild(server);
      await stopChild(etcd);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
