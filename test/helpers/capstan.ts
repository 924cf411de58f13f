/**
 * Capstan servers for tests: in-process (fast, over real HTTP on a free port) or as a spawned
 * `capstan` process (for flags, signals and start-up timing). Each test owns and stops its servers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultConfig } from '../../src/cli/flags.js';
import type { ServerConfig } from '../../src/config/server-config.js';
import { kubeconfigFor } from '../../src/cli/kubeconfig.js';
import { logger } from '../../src/logging/logger.js';
import { startServer, type CapstanServer, type StartOptions } from '../../src/server/app.js';
import { MemoryStorage } from '../../src/storage/memory-storage.js';
import type { Storage } from '../../src/storage/storage.js';

/** Path of the compiled `capstan` entry point. */
export const CAPSTAN_MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'main.js');

export interface TestServer {
  url: string;
  server: CapstanServer;
  /** A kubeconfig file pointing at the server. */
  kubeconfig: string;
  stop(): Promise<void>;
}

/** Starts an in-process server on 127.0.0.1 and a free port over `storage` (memory by default). */
export async function startTestServer(overrides: Partial<ServerConfig> = {}, storage?: Storage, options: StartOptions = {}): Promise<TestServer> {
  // Request logs would flood the test runner's output: in-process servers log warnings and errors only.
  // Plain HTTP on loopback only (the privileged local port); tests that need HTTPS set securePort.
  const config: ServerConfig = { ...defaultConfig(), port: 0, securePort: undefined, logLevel: 'warn', ...overrides };
  logger.setLevel(config.logLevel);
  const store = storage ?? new MemoryStorage({ historyMs: config.watchCacheHistoryMs });
  const server = await startServer(config, store, options);
  const dir = mkdtempSync(join(tmpdir(), 'capstan-kc-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigFor(server.url));
  return {
    url: server.url,
    server,
    kubeconfig,
    stop: async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface CapstanProcess {
  child: ChildProcess;
  url: string;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * `args` for a spawned server. A test that chooses no HTTPS port gets a free one (tests run side by
 * side) and, unless it passes `--controllers`, runs without the kube-root-ca.crt publisher, so the
 * ConfigMaps it lists and watches are its own.
 */
export function withFreeSecurePort(args: string[]): string[] {
  const has = (flag: string): boolean => args.some((a) => a === flag || a.startsWith(`${flag}=`));
  if (has('--secure-port') || args.includes('--help')) return args;
  return ['--secure-port=0', ...(has('--controllers') ? [] : ['--controllers=*,-root-ca-cert-publisher']), ...args];
}

/**
 * Spawns `node dist/src/main.js` with `args` (and a free HTTPS port unless `--secure-port` is given)
 * and waits until it serves.
 */
export async function spawnCapstan(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CapstanProcess> {
  const child = spawn(process.execPath, [CAPSTAN_MAIN, ...withFreeSecurePort(args)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  child.stdout?.resume();
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`capstan did not start: ${err}`)), 20_000);
    const onData = (): void => {
      const m = /"msg":"serving","url":"([^"]+)"/.exec(err);
      if (m) {
        clearTimeout(timer);
        child.stderr?.off('data', onData);
        resolve(m[1]);
      }
    };
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`capstan exited with ${String(code)}: ${err}`));
    });
  });
  return {
    child,
    url,
    stderr: () => err,
    stop: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        if (child.exitCode !== null) {
          resolve(child.exitCode);
          return;
        }
        child.once('exit', (code) => resolve(code));
        child.kill(signal);
      }),
  };
}

/** A unique lowercase name for test-owned objects. */
export function uniqueName(prefix = 't'): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
}

/** fetch() against a test server returning status, headers and the parsed JSON (or text) body. */
export async function api(url: string, path: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const res = await fetch(`${url}${path}`, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body, text };
}

/**
 * Settings for servers whose answers are compared with oracles that run no controllers and no
 * admission driven by stored configuration (kube's defaulting and validation code alone): the
 * corpora store LimitRanges, quotas, webhook configurations and policies, which must not act on
 * the cases that follow them, and state pod overheads no RuntimeClass defines.
 */
export const ORACLE_SERVER: Partial<ServerConfig> = {
  // Only the controllers that make a namespace usable (and touch none of the corpora's objects).
  controllers: ['namespace', 'serviceaccount', 'clusterrole-aggregation', 'validatingadmissionpolicy-status-controller'],
  disableAdmissionPlugins: [
    'LimitRanger',
    'PodSecurity',
    'ResourceQuota',
    // Pods in the corpora state an overhead without a RuntimeClass; claims grow without a class.
    'RuntimeClass',
    'PersistentVolumeClaimResize',
    'StorageObjectInUseProtection',
    'DefaultIngressClass',
    // Nodes in the corpora would carry the not-ready taint, and no node lifecycle controller runs here.
    'TaintNodesByCondition',
    'MutatingAdmissionPolicy',
    'MutatingAdmissionWebhook',
    'ValidatingAdmissionPolicy',
    'ValidatingAdmissionWebhook',
  ],
};
