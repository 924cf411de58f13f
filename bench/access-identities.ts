/**
 * The identities the `access` scenario measures with: a static token file (an administrator in
 * system:masters and a user outside it) written before the server starts, and, once it runs, a
 * ServiceAccount, a RoleBinding of the bootstrap `edit` ClusterRole to the user and the
 * ServiceAccount in the benchmark's namespace, and a service account token from TokenRequest. The
 * `floor` scenario starts its server the same way.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { certDirPaths } from '../src/tls/cert-dir.js';
import type { HttpClient } from './http-client.js';
import type { BenchOptions, TargetName } from './options.js';
import { sleep, withTarget } from './scenario.js';
import type { RunningTarget } from './target.js';

export const BENCH_USER = 'bench-user';
export const BENCH_SERVICE_ACCOUNT = 'bench-robot';

/** Files the server reads at start: its cert dir (generated there) and the static token file. */
export interface AccessFiles {
  dir: string;
  certDir: string;
  tokenFile: string;
  /** Static token of `bench-admin` (group system:masters). */
  adminToken: string;
  /** Static token of `bench-user` (no groups: RBAC decides). */
  userToken: string;
  /** Server flags that use these files. */
  serverArgs: string[];
  remove(): void;
}

/** Writes a fresh token file in a temporary directory that also holds the server's cert dir. */
export function writeAccessFiles(): AccessFiles {
  const dir = mkdtempSync(join(tmpdir(), 'capstan-bench-access-'));
  const certDir = join(dir, 'pki');
  const tokenFile = join(dir, 'tokens.csv');
  const adminToken = randomBytes(24).toString('hex');
  const userToken = randomBytes(24).toString('hex');
  writeFileSync(tokenFile, `${adminToken},bench-admin,bench-admin-uid,"system:masters"\n${userToken},${BENCH_USER},bench-user-uid\n`, { mode: 0o600 });
  return {
    dir,
    certDir,
    tokenFile,
    adminToken,
    userToken,
    serverArgs: ['--authorization-mode=RBAC', '--cert-dir', certDir, '--token-auth-file', tokenFile],
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * Starts target `name` with fresh access files (RBAC, the static tokens, a cert dir of its own), runs
 * `body` with the running target, the files and the server's HTTPS URL, then stops the target and
 * removes the files.
 */
export async function withAccessTarget<T>(
  name: TargetName,
  options: BenchOptions,
  body: (t: RunningTarget, files: AccessFiles, secureUrl: string) => Promise<T>,
): Promise<T> {
  const files = writeAccessFiles();
  try {
    return await withTarget(
      name,
      options,
      async (t) => {
        const secureUrl = t.server.secureUrl;
        if (secureUrl === undefined) throw new Error('the server announced no HTTPS URL');
        return body(t, files, secureUrl);
      },
      files.serverArgs,
    );
  } finally {
    files.remove();
  }
}

/** The CA and the admin client certificate (CN capstan-admin, O system:masters) the server generated. */
export function readAdminCredentials(certDir: string): { ca: string; cert: string; key: string } {
  const paths = certDirPaths(certDir);
  return { ca: readFileSync(paths.caCert, 'utf8'), cert: readFileSync(paths.adminCert, 'utf8'), key: readFileSync(paths.adminKey, 'utf8') };
}

async function expect(client: HttpClient, method: string, path: string, body: unknown, accepted: number[]): Promise<string> {
  const res = await client.request(method, path, { body: JSON.stringify(body) });
  if (!accepted.includes(res.status)) throw new Error(`${method} ${path}: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
  return res.body;
}

/**
 * As the administrator (`admin`, the plain port): creates the ServiceAccount, binds `edit` in `ns`
 * to the user and the ServiceAccount, and returns a one-hour token of the ServiceAccount.
 */
export async function grantEditAndIssueToken(admin: HttpClient, ns: string): Promise<string> {
  await expect(
    admin,
    'POST',
    `/api/v1/namespaces/${ns}/serviceaccounts`,
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: BENCH_SERVICE_ACCOUNT } },
    [201],
  );
  await expect(
    admin,
    'POST',
    `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`,
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'bench-edit' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
      subjects: [
        { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: BENCH_USER },
        { kind: 'ServiceAccount', name: BENCH_SERVICE_ACCOUNT, namespace: ns },
      ],
    },
    [201],
  );
  const body = await expect(
    admin,
    'POST',
    `/api/v1/namespaces/${ns}/serviceaccounts/${BENCH_SERVICE_ACCOUNT}/token`,
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
    [201],
  );
  const token = (JSON.parse(body) as { status?: { token?: unknown } }).status?.token;
  if (typeof token !== 'string' || token === '') throw new Error('TokenRequest returned no token');
  return token;
}

/**
 * Waits until `client` may list ConfigMaps in `ns` (every worker has seen the RoleBinding); throws
 * with the last answer after `timeoutMs`.
 */
export async function waitAllowed(client: HttpClient, ns: string, label: string, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let last = '';
  // Several in a row: with workers, each connection may land on another process.
  let inARow = 0;
  while (performance.now() < deadline) {
    const res = await client.request('GET', `/api/v1/namespaces/${ns}/configmaps?limit=1`);
    if (res.status === 200) {
      if (++inARow >= 8) return;
      continue;
    }
    inARow = 0;
    last = `HTTP ${res.status}: ${res.body.slice(0, 300)}`;
    await sleep(50);
  }
  throw new Error(`${label}: not allowed to list configmaps in ${ns} after ${timeoutMs} ms: ${last}`);
}
