/**
 * The Dockerfile, checked without a Docker engine (this machine has the docker CLI but cannot run
 * one; a real build stays opt-in, CAPSTAN_DOCKER_BUILD=1):
 *
 * - Statically: multi-stage, production dependencies only, non-root, tini as PID 1, health check
 *   on /livez, CMD binding 0.0.0.0, and COPY sources that exist and are not excluded by
 *   .dockerignore.
 * - By running the image's contents: the runtime stage's file layout is rebuilt in a temporary
 *   directory by following the parsed COPY instructions (image-layout.ts: the compiling stage is
 *   the already-compiled repository, the production-deps stage is reproduced by running its own
 *   `npm ci --omit=dev ...`), so a COPY dropped from the Dockerfile drops files here too. The
 *   layout's node_modules must hold every dependency and no devDependency. The server is then
 *   started from the layout as ENTRYPOINT + CMD say (free port, 127.0.0.1, ENV applied, cwd = the
 *   WORKDIR, as the USER's uid when the test runs as root; tini is not installed here, so node is
 *   started directly): the HEALTHCHECK command passes, a ConfigMap is created and read back,
 *   SIGTERM exits 0, and the HEALTHCHECK fails once the server is gone. The same layout also serves with
 *   `--storage=redis --workers=2` (the header's second `docker run`) against a real redis-server,
 *   which needs the copied lua/ scripts.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRedis } from '../helpers/redis-process.js';
import { assembleImageLayout, execForm, hostPath, parseDockerfile, type ImageLayout, type Instruction } from './image-layout.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const instructions = parseDockerfile(dockerfile);
const stages = instructions.filter((i) => i.keyword === 'FROM');
const runtimeStage = stages.length - 1;
const runtime = instructions.filter((i) => i.stage === runtimeStage);

test('multi-stage: a build stage with dev dependencies compiles, the runtime gets production dependencies only', () => {
  assert.ok(stages.length >= 2, 'at least two stages');
  for (const s of stages) assert.match(s.args, / AS \w+/i, 'every stage is named');
  const build = instructions.filter((i) => i.stage !== runtimeStage && i.keyword === 'RUN');
  assert.ok(
    build.some((i) => /npm ci(?!.*--omit=dev)/.test(i.args)),
    'a stage installs all dependencies',
  );
  assert.ok(
    build.some((i) => /tsc -p/.test(i.args)),
    'a stage compiles TypeScript',
  );
  assert.ok(
    build.some((i) => /npm ci .*--omit=dev/.test(i.args)),
    'a stage installs production dependencies only',
  );
  assert.ok(!runtime.some((i) => i.keyword === 'RUN' && /npm (ci|install)/.test(i.args)), 'the runtime stage installs no npm packages itself');
  const copies = runtime.filter((i) => i.keyword === 'COPY').map((i) => i.args);
  assert.ok(
    copies.some((c) => /--from=\w+ .*node_modules/.test(c)),
    'node_modules come from the production-deps stage',
  );
  for (const dir of ['dist/src', 'schema', 'lua'])
    assert.ok(
      copies.some((c) => c.includes(dir)),
      `runtime copies ${dir}`,
    );
});

test('runs as a non-root user with tini as PID 1 and a /livez health check', () => {
  const users = runtime.filter((i) => i.keyword === 'USER');
  assert.ok(users.length > 0, 'USER is set in the runtime stage');
  const user = users[users.length - 1].args.split(':')[0];
  assert.ok(user !== 'root' && user !== '0', `runtime user is not root (${String(user)})`);
  assert.ok(
    runtime.some((i) => i.keyword === 'RUN' && /apt-get install .*\btini\b/.test(i.args)),
    'tini comes from Debian',
  );
  const entrypoint = runtime.find((i) => i.keyword === 'ENTRYPOINT');
  assert.ok(entrypoint);
  const argv = JSON.parse(entrypoint.args) as string[];
  assert.match(argv[0] ?? '', /tini$/);
  assert.ok(argv.includes('node'), 'tini runs node');
  const health = runtime.find((i) => i.keyword === 'HEALTHCHECK');
  assert.ok(health);
  assert.match(health.args, /\/livez/);
  const cmd = runtime.find((i) => i.keyword === 'CMD');
  assert.ok(cmd);
  assert.ok((JSON.parse(cmd.args) as string[]).includes('--bind-address=0.0.0.0'));
});

test('COPY sources exist and .dockerignore does not exclude them', () => {
  const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  for (const copy of instructions.filter((i) => i.keyword === 'COPY' && !i.args.includes('--from='))) {
    const parts = copy.args.split(/\s+/).filter((p) => !p.startsWith('--'));
    for (const src of parts.slice(0, -1)) {
      assert.ok(existsSync(join(ROOT, src)), `COPY source ${src} exists`);
      assert.ok(!ignored.some((pattern) => pattern === src || src.startsWith(`${pattern}/`)), `${src} is not in .dockerignore`);
    }
  }
});

test('the image builds (opt-in: CAPSTAN_DOCKER_BUILD=1 and a Docker daemon that can pull node:20)', (t) => {
  if (process.env.CAPSTAN_DOCKER_BUILD !== '1') {
    t.skip('set CAPSTAN_DOCKER_BUILD=1 to build the image; the Dockerfile is checked statically only');
    return;
  }
  try {
    execFileSync('docker', ['info'], { stdio: 'ignore', timeout: 10_000 });
  } catch {
    t.skip('no Docker daemon reachable: the Dockerfile is checked statically only');
    return;
  }
  execFileSync('docker', ['build', '-t', 'capstan:test', ROOT], { stdio: 'inherit', timeout: 600_000 });
  const config = JSON.parse(execFileSync('docker', ['image', 'inspect', '--format', '{{json .Config}}', 'capstan:test'], { encoding: 'utf8' })) as {
    User?: string;
    Entrypoint?: string[];
    Healthcheck?: { Test?: string[] };
    Env?: string[];
  };
  assert.ok(
    config.User !== undefined && config.User !== '' && config.User !== 'root' && config.User !== '0',
    `runs as a non-root user (${String(config.User)})`,
  );
  assert.ok(
    config.Entrypoint?.some((a) => a.includes('tini')),
    `tini is PID 1: ${JSON.stringify(config.Entrypoint)}`,
  );
  assert.ok(config.Healthcheck?.Test?.join(' ').includes('/livez'), `the health check probes /livez: ${JSON.stringify(config.Healthcheck)}`);
  assert.ok(config.Env?.includes('NODE_ENV=production'), JSON.stringify(config.Env));
});

// ---- the image's contents, run without Docker ----

let layoutPromise: Promise<ImageLayout> | undefined;
/** The runtime layout, assembled once for the tests below and removed after them. */
function imageLayout(): Promise<ImageLayout> {
  layoutPromise ??= assembleImageLayout(ROOT, dockerfile);
  return layoutPromise;
}
after(async () => {
  if (layoutPromise) (await layoutPromise.catch(() => undefined))?.cleanup();
});

function runtimeInstruction(layout: ImageLayout, keyword: string): Instruction {
  const found = layout.runtime.stage.instructions.filter((i) => i.keyword === keyword);
  assert.ok(found.length > 0, `runtime stage has ${keyword}`);
  return found[found.length - 1];
}

/** The environment the container's processes get: PATH (for `node`) plus the stage's ENV. */
function containerEnv(layout: ImageLayout): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, ...layout.runtime.stage.env };
}

/** The image's CMD with the port made free (0) and the bind address local. */
function localCmd(layout: ImageLayout): string[] {
  const cmd = execForm(runtimeInstruction(layout, 'CMD').args, 'CMD');
  assert.ok(
    cmd.some((a) => a.startsWith('--port=')),
    'CMD sets --port',
  );
  assert.ok(
    cmd.some((a) => a.startsWith('--bind-address=')),
    'CMD sets --bind-address',
  );
  const certDir = mkdtempSync(join(tmpdir(), 'capstan-image-pki-'));
  chmodSync(certDir, 0o777); // the container's user creates pki/ in it
  return cmd.map((a) =>
    a.startsWith('--port=')
      ? '--port=0'
      : a.startsWith('--secure-port=')
        ? '--secure-port=0'
        : a.startsWith('--cert-dir=')
          ? `--cert-dir=${join(certDir, 'pki')}`
          : a.startsWith('--bind-address=')
            ? '--bind-address=127.0.0.1'
            : a,
  );
}

/** The image's port: what the HEALTHCHECK addresses. */
function imagePort(layout: ImageLayout): string {
  const port = execForm(runtimeInstruction(layout, 'CMD').args, 'CMD').find((a) => a.startsWith('--port='));
  assert.ok(port);
  return port.slice('--port='.length);
}

/** ENTRYPOINT + ARGS as a host command: `node` is this node, container paths map into the layout. */
function entrypointArgv(layout: ImageLayout, args: string[]): string[] {
  let argv = execForm(runtimeInstruction(layout, 'ENTRYPOINT').args, 'ENTRYPOINT');
  // tini is PID 1 in the image but is not installed here: run what it would exec (the argv after `--`).
  if (basename(argv[0] ?? '') === 'tini') argv = argv.slice(argv.indexOf('--') + 1);
  assert.equal(argv[0], 'node', 'the entry point runs node');
  const workdir = layout.runtime.stage.workdir as string;
  return [process.execPath, ...[...argv.slice(1), ...args].map((a) => (a.startsWith(`${workdir}/`) ? hostPath(layout.runtime, a) : a))];
}

/** Users the node base image defines (the image relies on `node`, uid and gid 1000). */
const BASE_IMAGE_IDS: Record<string, number> = { node: 1000, root: 0 };

/**
 * The uid/gid of the runtime stage's USER when this test runs as root (as CI does), so the server
 * runs unprivileged over root-owned files as in the image; undefined otherwise (the current user).
 */
function containerUser(layout: ImageLayout): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const user = layout.runtime.stage.instructions.filter((i) => i.keyword === 'USER').pop();
  if (!user) return undefined;
  const [u, g = u] = user.args.trim().split(':') as [string, string?];
  const id = (name: string): number => {
    const n = /^\d+$/.test(name) ? Number(name) : BASE_IMAGE_IDS[name];
    assert.ok(n !== undefined, `USER ${name} is not a user of the base image`);
    return n;
  };
  // The layout's directories come from mkdtemp (0700): open them up as an image's / would be.
  for (const dir of [layout.tmp, layout.runtime.dir]) chmodSync(dir, 0o755);
  return { uid: id(u), gid: id(g) };
}

interface Served {
  child: ChildProcess;
  url: string;
  stderr(): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
}

/** Starts the server from the layout and waits for its `serving` line and a 200 from /readyz. */
async function serveFromLayout(layout: ImageLayout, extraArgs: string[] = []): Promise<Served> {
  const argv = entrypointArgv(layout, [...localCmd(layout), ...extraArgs]);
  const child = spawn(argv[0], argv.slice(1), {
    cwd: layout.runtime.dir,
    env: containerEnv(layout),
    stdio: ['ignore', 'pipe', 'pipe'],
    ...containerUser(layout),
  });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  child.stdout?.resume();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start: ${err}`)), 20_000);
    const onData = (): void => {
      const m = /"msg":"serving","url":"([^"]+)"/.exec(err);
      if (!m) return;
      clearTimeout(timer);
      child.stderr?.off('data', onData);
      resolve(m[1]);
    };
    child.stderr?.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${String(code)}: ${err}`));
    });
  });
  for (let i = 0; ; i++) {
    const r = await fetch(`${url}/readyz`).catch(() => undefined);
    if (r?.status === 200) break;
    assert.ok(i < 200, `/readyz never answered 200: ${err}`);
    await new Promise((res) => setTimeout(res, 25));
  }
  return { child, url, stderr: () => err, exited };
}

/** Sends SIGTERM and resolves with the exit code (SIGKILL and a failure after 15 s). */
async function terminate(served: Served): Promise<number | null> {
  served.child.kill('SIGTERM');
  const timeout = new Promise<'timeout'>((res) => setTimeout(() => res('timeout'), 15_000).unref());
  const code = await Promise.race([served.exited, timeout]);
  if (code === 'timeout') {
    served.child.kill('SIGKILL');
    assert.fail(`the server did not exit within 15 s of SIGTERM: ${served.stderr()}`);
  }
  return code;
}

/** Runs the HEALTHCHECK's exec-form command against URL's address; resolves with its exit code. */
function runHealthcheck(layout: ImageLayout, url: string): Promise<number> {
  const m = /^(.*?)\bCMD\s+(\[.*\])\s*$/s.exec(runtimeInstruction(layout, 'HEALTHCHECK').args);
  assert.ok(m, 'HEALTHCHECK has an exec-form CMD');
  const timeoutS = /--timeout=(\d+)s\b/.exec(m[1])?.[1] ?? '30';
  const address = `127.0.0.1:${imagePort(layout)}`;
  const argv = execForm(m[2], 'HEALTHCHECK CMD');
  assert.ok(
    argv.some((a) => a.includes(address)),
    `the health check addresses ${address}`,
  );
  const target = new URL(url).host;
  const local = argv.map((a) => a.split(address).join(target));
  assert.equal(local[0], 'node', 'the health check runs node');
  return new Promise((resolve) => {
    const options = { cwd: layout.runtime.dir, env: containerEnv(layout), timeout: Number(timeoutS) * 1000, ...containerUser(layout) };
    execFile(process.execPath, local.slice(1), options, (error) => {
      resolve(error === null ? 0 : typeof error.code === 'number' ? error.code : -1);
    });
  });
}

/** Creates a ConfigMap over HTTP and reads it back. */
async function roundTripConfigMap(url: string, name: string): Promise<void> {
  const path = '/api/v1/namespaces/default/configmaps';
  const created = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { image: 'layout' } }),
  });
  assert.equal(created.status, 201, await created.clone().text());
  const got = await fetch(`${url}${path}/${name}`);
  assert.equal(got.status, 200);
  const body = (await got.json()) as { metadata: { name: string }; data: Record<string, string> };
  assert.equal(body.metadata.name, name);
  assert.deepEqual(body.data, { image: 'layout' });
}

test('the runtime layout has every production dependency and no devDependency', async (t) => {
  const started = Date.now();
  const layout = await imageLayout();
  for (const run of layout.runTimes) t.diagnostic(`stage ${run.stage}: RUN ${run.command} took ${run.ms} ms`);
  t.diagnostic(`layout assembled in ${Date.now() - started} ms at ${layout.runtime.dir}`);
  const pkg = JSON.parse(readFileSync(hostPath(layout.runtime, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  const modules = hostPath(layout.runtime, 'node_modules');
  for (const dep of Object.keys(pkg.dependencies)) assert.ok(existsSync(join(modules, dep, 'package.json')), `dependency ${dep} is in the image`);
  assert.ok('typescript' in pkg.devDependencies, 'typescript is a devDependency');
  for (const dev of Object.keys(pkg.devDependencies)) assert.ok(!existsSync(join(modules, dev)), `devDependency ${dev} is not in the image`);
  assert.ok(!existsSync(join(modules, '.bin', 'tsc')), 'no tsc binary in the image');
});

test('the runtime layout serves as ENTRYPOINT + CMD start it: health check, a ConfigMap, SIGTERM exits 0', async (t) => {
  const layout = await imageLayout();
  assert.equal(layout.runtime.stage.env.NODE_ENV, 'production', 'ENV NODE_ENV=production');
  const started = Date.now();
  const served = await serveFromLayout(layout);
  const user = containerUser(layout);
  t.diagnostic(`serving at ${served.url} after ${Date.now() - started} ms, as ${user ? `uid ${user.uid}` : 'the current user'}`);
  try {
    assert.equal(await runHealthcheck(layout, served.url), 0, 'the health check passes while serving');
    await roundTripConfigMap(served.url, 'from-image-layout');
  } finally {
    assert.equal(await terminate(served), 0, `SIGTERM exits 0: ${served.stderr()}`);
  }
  assert.notEqual(await runHealthcheck(layout, served.url), 0, 'the health check fails once the server is gone');
});

test('the runtime layout serves with --storage=redis --workers=2 (needs the copied lua/ scripts)', async () => {
  const layout = await imageLayout();
  const redis = await startRedis();
  try {
    const served = await serveFromLayout(layout, ['--storage=redis', `--redis-url=${redis.url}`, '--workers=2']);
    try {
      assert.equal(await runHealthcheck(layout, served.url), 0, 'the health check passes while serving');
      await roundTripConfigMap(served.url, 'from-image-layout-redis');
    } finally {
      assert.equal(await terminate(served), 0, `SIGTERM exits 0: ${served.stderr()}`);
    }
  } finally {
    await redis.stop();
  }
});
