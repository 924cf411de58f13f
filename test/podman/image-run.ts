/**
 * The container image, built by scripts/image-test.sh and run here for real with podman (issue 26).
 * Not part of `npm test` (it needs podman, root and a built image): the script runs it with
 * `node --test dist/test/podman/image-run.js`, CAPSTAN_IMAGE naming the image.
 *
 * - It runs as its CMD says (tini, node, Node,RBAC on 0.0.0.0:6443, as uid 1000) and answers
 *   /readyz through a published port; the time from `podman run` to that answer is reported.
 * - Its HEALTHCHECK passes once it serves.
 * - A request without credentials gets what kube-apiserver 1.36 gives system:anonymous under its
 *   bootstrap policy: health and version, 403 for discovery, Secrets and creating a
 *   ClusterRoleBinding, 401 for a bad token.
 * - The admin credentials, copied out with the commands docs/production.md gives (read from the
 *   page, not copied here), work for kubectl over verified HTTPS.
 * - SIGTERM (`podman stop`) ends an open watch cleanly and the container exits 0.
 * - The same image serves with `--storage=redis --workers=2` against a redis-server on the host
 *   (host network, loopback only): two workers run, and an object written through one container is
 *   read back through a new container on the same Redis.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'node:https';
import { freePort, startRedis, type RedisServer } from '../helpers/redis-process.js';
import { SERVER_NODE_FLAGS } from '../../src/cluster/node-flags.js';
import { https, isRunning, podman, podmanOk, PODMAN_GLOBAL, PODMAN_ULIMITS, run, waitExit, waitForOk } from './podman.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const IMAGE = process.env.CAPSTAN_IMAGE ?? '';
const SUFFIX = Math.random().toString(36).slice(2, 8);
const containers: string[] = [];
const work = mkdtempSync(join(tmpdir(), 'capstan-image-run-'));

interface ImageConfig {
  Entrypoint: string[];
  Cmd: string[];
  User: string;
  Healthcheck?: { Test: string[] };
}

/** The `sh` block following `heading` in docs/production.md. */
function docsBlock(heading: string): string {
  const page = readFileSync(join(ROOT, 'docs', 'production.md'), 'utf8');
  const at = page.indexOf(`\n${heading}\n`);
  assert.ok(at >= 0, `docs/production.md has the heading "${heading}"`);
  const block = /```sh\n([\s\S]*?)```/.exec(page.slice(at));
  assert.ok(block, `a sh block follows "${heading}"`);
  return block[1];
}

/** Starts a container of IMAGE with `args` (none: the image's CMD) and returns its name. */
async function startContainer(role: string, podmanArgs: string[], args: string[] = []): Promise<string> {
  const name = `capstan-${role}-${SUFFIX}`;
  containers.push(name);
  await podmanOk(['run', '-d', '--name', name, ...PODMAN_ULIMITS, ...podmanArgs, IMAGE, ...args]);
  return name;
}

/** The processes of a container as `podman top` lists them: user and full command line. */
async function processes(name: string): Promise<{ user: string; args: string }[]> {
  const out = await podmanOk(['top', name, 'user', 'pid', 'args']);
  return out
    .split('\n')
    .slice(1)
    .map((line) => {
      const [user, , ...rest] = line.trim().split(/\s+/);
      return { user: user ?? '', args: rest.join(' ') };
    });
}

/** Copies the container's cert dir out and returns the admin TLS material. */
async function adminCredentials(name: string, dir: string): Promise<{ ca: Buffer; cert: Buffer; key: Buffer }> {
  await podmanOk(['cp', `${name}:/tmp/capstan-pki`, dir]);
  return {
    ca: readFileSync(join(dir, 'capstan-pki', 'ca.crt')),
    cert: readFileSync(join(dir, 'capstan-pki', 'admin.crt')),
    key: readFileSync(join(dir, 'capstan-pki', 'admin.key')),
  };
}

/** Milliseconds from the container's start (podman's record) to the server's `serving` log line. */
async function serverStartMs(name: string): Promise<number> {
  const startedAt = await podmanOk(['inspect', '-f', '{{.State.StartedAt}}', name]);
  const m = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(\.\d+)? ([+-]\d\d)(\d\d)/.exec(startedAt);
  assert.ok(m, `podman's StartedAt: ${startedAt}`);
  const fraction = (m[3] ?? '.0').slice(0, 4);
  const started = Date.parse(`${m[1]}T${m[2]}${fraction}${m[4]}:${m[5]}`);
  // With workers, /readyz can answer before the primary logs `serving` (it waits for every worker): wait for the line.
  const deadline = Date.now() + 120_000;
  for (;;) {
    const logs = await podman(['logs', name]);
    const serving = /"msg":"serving".*"ts":"([^"]+)"/.exec(logs.stderr + logs.stdout);
    if (serving) return Date.parse(serving[1]) - started;
    assert.ok(Date.now() < deadline, `the server logged serving: ${logs.stderr}${logs.stdout}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('the image, run with podman', { concurrency: false, timeout: 15 * 60_000 }, () => {
  let name = '';
  let port = 0;
  let base = '';

  before(() => {
    assert.notEqual(IMAGE, '', 'CAPSTAN_IMAGE names the image to run (scripts/image-test.sh builds it)');
  });

  after(async () => {
    for (const c of containers) await podman(['rm', '-f', '-t', '0', c]);
    rmSync(work, { recursive: true, force: true });
  });

  test('runs as its CMD says and becomes ready', async (t) => {
    const config = (JSON.parse(await podmanOk(['image', 'inspect', IMAGE])) as { Config: ImageConfig }[])[0].Config;
    assert.deepEqual(config.Entrypoint, ['/usr/bin/tini', '--', 'node', ...SERVER_NODE_FLAGS, '/app/dist/src/main.js']);
    for (const flag of [
      '--bind-address=0.0.0.0',
      '--secure-port=6443',
      '--cert-dir=/tmp/capstan-pki',
      '--authorization-mode=Node,RBAC',
      '--enable-admission-plugins=NodeRestriction',
    ]) {
      assert.ok(config.Cmd.includes(flag), `CMD has ${flag}: ${config.Cmd.join(' ')}`);
    }
    assert.equal(config.User, 'node:node');
    const size = Number(await podmanOk(['image', 'inspect', '-f', '{{.Size}}', IMAGE]));
    t.diagnostic(`image size: ${(size / 1e6).toFixed(1)} MB (${size} bytes)`);
    assert.ok(size < 150e6, `image under 150 MB (${size} bytes)`);

    port = await freePort();
    base = `https://127.0.0.1:${port}`;
    const started = Date.now();
    name = await startContainer('cmd', ['-p', `127.0.0.1:${port}:6443`]);
    await waitForOk(`${base}/readyz`, 120_000, () => isRunning(name));
    t.diagnostic(`start to ready (podman run to the first 200 from /readyz): ${Date.now() - started} ms`);
    t.diagnostic(`of which the server, from the container's start to its 'serving' line: ${await serverStartMs(name)} ms`);

    const procs = await processes(name);
    const server = `node ${SERVER_NODE_FLAGS.join(' ')} /app/dist/src/main.js`;
    assert.ok((procs[0]?.args ?? '').startsWith(`/usr/bin/tini -- ${server} --bind-address=0.0.0.0 `), JSON.stringify(procs));
    assert.ok(
      procs.some((p) => p.args.startsWith(server) && p.args.includes('--authorization-mode=Node,RBAC')),
      JSON.stringify(procs),
    );
    for (const p of procs) assert.equal(p.user, 'node', `every process runs as node: ${JSON.stringify(procs)}`);
    const logs = await podman(['logs', name]);
    assert.match(logs.stderr + logs.stdout, /"msg":"serving","url":"https:\/\/0\.0\.0\.0:6443"/);
    assert.doesNotMatch(logs.stderr + logs.stdout, /"level":"warn","msg":"--authorization-mode=/, 'no open-access warning with Node,RBAC');
  });

  test('it holds production dependencies only, pruned, and no shell or npm', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const probe = [
      "const fs = require('node:fs');",
      'const has = (p) => fs.existsSync(p);',
      'const walk = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(d + "/" + e.name) : [d + "/" + e.name]));',
      'const files = walk("/app/node_modules");',
      `const deps = ${JSON.stringify([...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)])};`,
      'console.log(JSON.stringify({',
      '  present: deps.filter((d) => has("/app/node_modules/" + d + "/package.json")),',
      '  declarations: files.filter((f) => f.endsWith(".d.ts")).length,',
      '  sourceMaps: files.filter((f) => f.endsWith(".map")).length,',
      '  shell: has("/bin/sh") || has("/usr/bin/sh"),',
      '  npm: has("/usr/local/bin/npm") || has("/usr/local/lib/node_modules/npm"),',
      '}));',
    ].join('\n');
    const out = await podmanOk(['run', '--rm', ...PODMAN_ULIMITS, '--network', 'none', '--entrypoint', 'node', IMAGE, '-e', probe]);
    const found = JSON.parse(out) as { present: string[]; declarations: number; sourceMaps: number; shell: boolean; npm: boolean };
    for (const dep of Object.keys(pkg.dependencies)) assert.ok(found.present.includes(dep), `dependency ${dep} is in the image`);
    for (const dep of Object.keys(pkg.devDependencies)) assert.ok(!found.present.includes(dep), `devDependency ${dep} is not in the image`);
    assert.equal(found.declarations, 0, 'no .d.ts files');
    assert.equal(found.sourceMaps, 0, 'no source maps');
    assert.equal(found.shell, false, 'no shell');
    assert.equal(found.npm, false, 'no npm');
  });

  test('its entrypoint compiles the server from the code cache the image was built with', async () => {
    const r = await podman(['run', '--rm', ...PODMAN_ULIMITS, '--network', 'none', '-e', 'CAPSTAN_DEBUG_CODE_CACHE=1', IMAGE, '--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^code cache: accepted$/m);
  });

  test('its HEALTHCHECK passes', async () => {
    const r = await podman(['healthcheck', 'run', name]);
    assert.equal(r.code, 0, `podman healthcheck run: ${r.stdout}${r.stderr}`);
    const state = await podmanOk(['inspect', '-f', '{{.State.Health.Status}}', name]);
    assert.equal(state, 'healthy');
  });

  test('a request without credentials gets only health and version (kube-apiserver 1.36 answers the same)', async () => {
    for (const path of ['/healthz', '/livez', '/readyz', '/version']) assert.equal((await https(`${base}${path}`)).status, 200, path);
    for (const path of ['/api', '/apis', '/openapi/v2', '/metrics', '/api/v1/namespaces']) assert.equal((await https(`${base}${path}`)).status, 403, path);
    const secrets = await https(`${base}/api/v1/namespaces/kube-system/secrets`);
    assert.equal(secrets.status, 403);
    assert.equal(
      (JSON.parse(secrets.body) as { message: string }).message,
      'secrets is forbidden: User "system:anonymous" cannot list resource "secrets" in API group "" in the namespace "kube-system"',
    );
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `anonymous-admin-${SUFFIX}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:unauthenticated' }],
    };
    const created = await https(`${base}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(binding),
    });
    assert.equal(created.status, 403, created.body);
    assert.match(created.body, /User \\"system:anonymous\\" cannot create resource \\"clusterrolebindings\\"/);
    const badToken = await https(`${base}/api/v1/namespaces/kube-system/secrets`, { headers: { authorization: 'Bearer not-a-token' } });
    assert.equal(badToken.status, 401);
    const admin = await adminCredentials(name, mkdtempSync(join(work, 'check-')));
    const after = await https(`${base}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${binding.metadata.name}`, admin);
    assert.equal(after.status, 404, 'the anonymous ClusterRoleBinding was not stored');
  });

  test('the admin credentials, copied out as docs/production.md says, work for kubectl over HTTPS', async () => {
    const block = docsBlock('### Admin credentials from the container');
    assert.match(block, /docker cp capstan:\/tmp\/capstan-pki/);
    // The page's commands, with podman for docker, this run's container name and published port.
    const script = block
      .replace(/^docker /gm, `podman ${PODMAN_GLOBAL.join(' ')} `)
      .replace(/\bcapstan:\/tmp\//g, `${name}:/tmp/`)
      .replace(/127\.0\.0\.1:6443/g, `127.0.0.1:${port}`);
    const cwd = mkdtempSync(join(work, 'docs-'));
    const r = await run('bash', ['-euo', 'pipefail', '-c', script], 120_000, { cwd, env: { ...process.env, KUBECONFIG: '' } });
    assert.equal(r.code, 0, `${script}\n${r.stdout}${r.stderr}`);
    for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) assert.match(r.stdout, new RegExp(`^${ns}\\s+Active`, 'm'));
    const kubectl = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
      run('kubectl', ['--kubeconfig', join(cwd, 'capstan.kubeconfig'), ...args], 60_000);
    const whoami = await kubectl(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username} {.status.userInfo.groups}']);
    assert.equal(whoami.code, 0, whoami.stderr);
    assert.match(whoami.stdout, /^capstan-admin .*system:masters/);
    const create = await kubectl(['create', 'secret', 'generic', 'probe', '--from-literal=k=v', '-n', 'kube-system']);
    assert.equal(create.code, 0, create.stderr);
    const read = await kubectl(['get', 'secret', 'probe', '-n', 'kube-system', '-o', 'jsonpath={.data.k}']);
    assert.equal(Buffer.from(read.stdout, 'base64').toString(), 'v');
  });

  test('SIGTERM ends an open watch cleanly and the container exits 0', async () => {
    const admin = await adminCredentials(name, mkdtempSync(join(work, 'watch-')));
    const watchEnded = new Promise<string>((resolve, reject) => {
      const req = request(`${base}/api/v1/namespaces/default/configmaps?watch=1`, { ...admin, agent: false }, (res) => {
        assert.equal(res.statusCode, 200);
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve(body));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
    const stopped = Date.now();
    const stop = await podman(['stop', '-t', '60', name], 90_000);
    assert.equal(stop.code, 0, stop.stderr);
    await watchEnded;
    const code = await waitExit(name);
    assert.equal(code, 0, 'exit status after SIGTERM');
    const logs = await podman(['logs', name]);
    assert.match(logs.stderr + logs.stdout, /"msg":"shutting down","signal":"SIGTERM"/);
    assert.ok(Date.now() - stopped < 30_000, 'stopped well within the grace period');
  });

  test('the same image serves with --storage=redis --workers=2 against Redis', async (t) => {
    let redis: RedisServer | undefined;
    try {
      redis = await startRedis({ appendOnly: true });
      const securePort = await freePort();
      const args = [
        '--bind-address=127.0.0.1',
        `--secure-port=${securePort}`,
        '--cert-dir=/tmp/capstan-pki',
        '--authorization-mode=Node,RBAC',
        '--enable-admission-plugins=NodeRestriction',
        '--storage=redis',
        `--redis-url=${redis.url}`,
        '--workers=2',
      ];
      const redisBase = `https://127.0.0.1:${securePort}`;
      const first = await startContainer('redis-1', ['--network', 'host'], args);
      const started = Date.now();
      await waitForOk(`${redisBase}/readyz`, 120_000, () => isRunning(first));
      t.diagnostic(`start to ready with redis and 2 workers: ${Date.now() - started} ms (server: ${await serverStartMs(first)} ms)`);
      const procs = await processes(first);
      // The primary as the entrypoint starts it, and the workers it forks with the same Node flags.
      const server = `node ${SERVER_NODE_FLAGS.join(' ')} /app/dist/src/main.js `;
      assert.equal(
        procs.filter((p) => p.args.startsWith(server) || p.args.startsWith(`/usr/local/bin/${server}`)).length,
        3,
        `a primary and two workers: ${JSON.stringify(procs)}`,
      );
      const admin = await adminCredentials(first, mkdtempSync(join(work, 'redis-1-')));
      const created = await https(`${redisBase}/api/v1/namespaces/default/configmaps`, {
        ...admin,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kept-in-redis' }, data: { a: 'b' } }),
      });
      assert.equal(created.status, 201, created.body);
      await podmanOk(['stop', '-t', '60', first], 90_000);
      assert.equal(await waitExit(first), 0);

      const second = await startContainer('redis-2', ['--network', 'host'], args);
      await waitForOk(`${redisBase}/readyz`, 120_000, () => isRunning(second));
      const admin2 = await adminCredentials(second, mkdtempSync(join(work, 'redis-2-')));
      const read = await https(`${redisBase}/api/v1/namespaces/default/configmaps/kept-in-redis`, admin2);
      assert.equal(read.status, 200, read.body);
      assert.deepEqual((JSON.parse(read.body) as { data: unknown }).data, { a: 'b' });
      await podmanOk(['stop', '-t', '60', second], 90_000);
      assert.equal(await waitExit(second), 0);
    } finally {
      await redis?.stop();
    }
  });
});
