/**
 * Runs the real kubectl against a test server: every call gets the server's kubeconfig and a private
 * discovery cache, so tests never read or write the user's ~/.kube.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, startTestServer, uniqueName } from '../helpers/capstan.js';
import { suiteServer, type SuiteServer } from '../helpers/suite-target.js';

export interface KubectlResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Kubectl {
  /** Runs `kubectl ARGS` (with `input` on stdin) and resolves when it exits; never rejects on a non-zero exit. */
  run(args: string[], opts?: { input?: string; env?: NodeJS.ProcessEnv; binary?: string; timeoutMs?: number }): Promise<KubectlResult>;
  /** Like `run` but rejects with kubectl's stderr when it exits non-zero. */
  ok(args: string[], opts?: { input?: string; env?: NodeJS.ProcessEnv }): Promise<string>;
  /** Runs `kubectl ARGS -o json` and parses the output. */
  json(args: string[]): Promise<any>;
  /** Starts a long-running kubectl (for `get -w`); lines of stdout arrive through `lines()`. */
  spawn(args: string[], binary?: string): StreamingKubectl;
  env: NodeJS.ProcessEnv;
}

export interface StreamingKubectl {
  child: ChildProcess;
  /** Resolves once stdout holds at least `n` lines (rejects after `timeoutMs`). */
  waitForLines(n: number, timeoutMs?: number): Promise<string[]>;
  lines(): string[];
  stop(): Promise<void>;
}

/** A kubectl bound to `kubeconfig`. */
export function kubectlFor(kubeconfig: string): Kubectl {
  const cacheDir = mkdtempSync(join(tmpdir(), 'capstan-kubectl-cache-'));
  const env: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: kubeconfig, KUBECACHEDIR: cacheDir };
  const run: Kubectl['run'] = (args, opts = {}) =>
    new Promise((resolve, reject) => {
      const child = spawn(opts.binary ?? 'kubectl', args, { env: { ...env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
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
        reject(new Error(`kubectl ${args.join(' ')} timed out; stderr: ${stderr}`));
      }, opts.timeoutMs ?? 30_000);
      child.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
      child.stdin.end(opts.input ?? '');
    });
  const ok: Kubectl['ok'] = async (args, opts) => {
    const r = await run(args, opts);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${String(r.code)}: ${r.stderr}${r.stdout}`);
    return r.stdout;
  };
  return {
    env,
    run,
    ok,
    json: async (args) => JSON.parse(await ok([...args, '-o', 'json'])) as unknown,
    spawn: (args, binary = 'kubectl') => {
      const child = spawn(binary, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
      });
      child.stderr?.on('data', (d: Buffer) => {
        err += d.toString();
      });
      const lines = (): string[] => out.split('\n').filter((l) => l.trim() !== '');
      return {
        child,
        lines,
        waitForLines: (n, timeoutMs = 10_000) =>
          new Promise((resolve, reject) => {
            const started = Date.now();
            const poll = (): void => {
              if (lines().length >= n) {
                resolve(lines());
                return;
              }
              if (child.exitCode !== null || Date.now() - started > timeoutMs) {
                reject(new Error(`kubectl ${args.join(' ')}: wanted ${n} lines, have ${JSON.stringify(lines())}; stderr: ${err}`));
                return;
              }
              setTimeout(poll, 25);
            };
            poll();
          }),
        stop: () =>
          new Promise((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) {
              resolve();
              return;
            }
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      };
    },
  };
}

/** A test server (or the external servers, see suite-target.ts), a kubectl bound to it and a namespace of its own. */
export interface KubectlEnv {
  srv: SuiteServer;
  k: Kubectl;
  ns: string;
}

/** Starts a test server and a kubectl for it, and creates a namespace named uniquely after `prefix` (asserting 201). */
export async function startKubectlEnv(prefix: string): Promise<KubectlEnv> {
  const srv = await suiteServer(() => startTestServer());
  const k = kubectlFor(srv.kubeconfig);
  const ns = uniqueName(prefix);
  const r = await api(srv.url, '/api/v1/namespaces', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
  });
  assert.equal(r.status, 201, r.text);
  return { srv, k, ns };
}
