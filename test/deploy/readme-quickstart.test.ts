/**
 * The README followed literally by a newcomer (issue 15): its quick-start server command and its
 * "Point kubectl at it" block are read from README.md (not copied here) and run in a fresh copy of
 * the checkout (the files git would commit: no node_modules, no dist, no kubeconfig).
 *
 * - The quick start's `npm start` line (`npm ci && npm start`) runs in the background, as in the
 *   first terminal, until the server says it serves. The `npm test` line is this suite: not run.
 * - The kubectl block runs in one shell in the same folder, as in the second terminal, with no
 *   KUBECONFIG from outside; every command must succeed, and the outputs the README describes
 *   (the namespaces, the ConfigMap, the Deployment at READY 0/2) must appear.
 * - Afterwards the copy holds no file git would show (the kubeconfig is ignored), and Ctrl-C
 *   (SIGINT) stops the server.
 *
 * One change is made to the commands: the server gets a free HTTPS port instead of 6443 (`npm start
 * -- --secure-port N`, and 6443 replaced in the kubectl block), so the test does not need 6443 to be free.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The fenced `sh` blocks of `markdown` after the heading `after` (from the top when undefined). */
function shBlocks(markdown: string, after?: string): string[][] {
  let text = markdown;
  if (after !== undefined) {
    const at = markdown.indexOf(`\n${after}\n`);
    assert.ok(at >= 0, `README has the heading "${after}"`);
    text = markdown.slice(at);
  }
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1].split('\n').filter((l) => l.trim() !== ''));
}

/** A command line without its trailing `# comment`. */
function withoutComment(line: string): string {
  return line.replace(/\s+#.*$/, '').trim();
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Copies the files git would commit (tracked, and new files not ignored) from ROOT to `to`. */
function copyCheckout(to: string): void {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((f) => f !== '' && existsSync(join(ROOT, f)));
  for (const f of files) {
    mkdirSync(dirname(join(to, f)), { recursive: true });
    copyFileSync(join(ROOT, f), join(to, f));
  }
  execFileSync('git', ['init', '-q'], { cwd: to });
  execFileSync('git', ['add', '-A'], { cwd: to });
  execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', 'commit', '-q', '-m', 'checkout'], { cwd: to });
}

const env = { ...process.env };
delete env.KUBECONFIG;

let dir: string | undefined;
let server: ChildProcess | undefined;

after(async () => {
  if (server?.pid !== undefined && server.exitCode === null && server.signalCode === null) {
    try {
      process.kill(-server.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

test('the README\'s quick start and "Point kubectl at it" work as written, in a fresh checkout', { timeout: 600_000 }, async (t) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const [quickStart] = shBlocks(readme);
  assert.ok(quickStart !== undefined, 'README starts with a sh block');
  const startLine = quickStart.map(withoutComment).find((l) => /\bnpm start\b/.test(l));
  assert.ok(startLine !== undefined, `the quick start has an npm start line: ${JSON.stringify(quickStart)}`);
  assert.ok(quickStart.map(withoutComment).includes('npm test'), 'the quick start names the test command');
  const [kubectlBlock] = shBlocks(readme, '## Point kubectl at it');
  assert.ok(kubectlBlock !== undefined && kubectlBlock.some((l) => l.startsWith('kubectl ')), 'the kubectl block has kubectl commands');

  dir = mkdtempSync(join(tmpdir(), 'capstan-readme-'));
  copyCheckout(dir);
  const port = await freePort();

  // First terminal: the quick start, in the background.
  const command = startLine.replace(/\bnpm start\b/, `npm start -- --secure-port ${port}`);
  server = spawn('bash', ['-c', command], { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  server.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  server.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const started = Date.now();
  await new Promise<void>((resolve, reject) => {
    const check = (): void => {
      if (output.includes('"msg":"serving"')) resolve();
    };
    server?.stdout?.on('data', check);
    server?.stderr?.on('data', check);
    server?.once('exit', (code) => reject(new Error(`"${command}" exited with ${String(code)} before serving:\n${output.slice(-3000)}`)));
  });
  t.diagnostic(`"${command}" served after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  assert.match(
    output,
    new RegExp(`"url":"https://127\\.0\\.0\\.1:${port}".*"kubeconfig":"${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/capstan\\.kubeconfig"`),
  );

  // Second terminal: the kubectl block, in the same folder.
  const script = ['set -eu', ...kubectlBlock.map((l) => l.replaceAll('6443', String(port)))].join('\n');
  let out: string;
  try {
    out = execFileSync('bash', ['-c', script], { cwd: dir, env, encoding: 'utf8', timeout: 120_000, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    assert.fail(`the kubectl block failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
  t.diagnostic(out);
  assert.match(out, /^default\s+Active\s/m, 'kubectl get namespaces lists default');
  assert.match(out, /configmap\/greeting created/);
  assert.match(out, /^\s+message: hello$/m, 'the ConfigMap reads back as YAML');
  assert.match(out, /deployment\.apps\/web created/);
  assert.match(out, /^web\s+0\/2\s/m, 'the Deployment stays at READY 0/2, as the README says');
  assert.match(out, /deployment\.apps "web" deleted/);

  // Nothing the newcomer did left a file git would show.
  assert.equal(execFileSync('git', ['status', '--porcelain'], { cwd: dir, encoding: 'utf8' }), '');
  assert.ok(existsSync(join(dir, 'capstan.kubeconfig')), 'npm start wrote capstan.kubeconfig');

  // Ctrl-C stops it: the server shuts down gracefully (npm itself ends by the signal, as in a
  // terminal) and the port is free again.
  const exited = new Promise<string>((resolve) => server?.once('exit', (code, signal) => resolve(String(code ?? signal))));
  process.kill(-(server.pid as number), 'SIGINT');
  assert.ok(['0', 'SIGINT'].includes(await exited), output.slice(-2000));
  assert.match(output, /"msg":"shutting down","signal":"SIGINT"/);
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
  });
});
