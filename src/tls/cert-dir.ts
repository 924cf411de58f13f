import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { StartupError } from '../config/startup-error.js';

/** The files Capstan keeps in `--cert-dir`, generated on first start and reused afterwards. */
export interface CertDirFiles {
  /** The certificate authority that signed the serving and admin certificates (PEM). */
  caCert: string;
  caKey: string;
  /** Serving certificate and key, used unless `--tls-cert-file`/`--tls-private-key-file` are given. */
  servingCert: string;
  servingKey: string;
  /** Client certificate of the admin kubeconfig: CN capstan-admin, O system:masters. */
  adminCert: string;
  adminKey: string;
  /** RSA key signing service account tokens when `--service-account-signing-key-file` is not given. */
  serviceAccountKey: string;
}

const NAMES = {
  caCert: 'ca.crt',
  caKey: 'ca.key',
  servingCert: 'apiserver.crt',
  servingKey: 'apiserver.key',
  adminCert: 'admin.crt',
  adminKey: 'admin.key',
  serviceAccountKey: 'service-account.key',
} as const;

/** Names and addresses a generated serving certificate is valid for. */
export interface ServingNames {
  dnsNames: string[];
  ips: string[];
}

/** kube-apiserver's names for itself, the host's name, and loopback plus the given addresses. */
export function servingNamesFor(addresses: string[]): ServingNames {
  const dnsNames = ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local', hostname()];
  const ips = ['127.0.0.1', '::1'];
  for (const a of addresses) if (a !== '' && a !== '0.0.0.0' && a !== '::' && !ips.includes(a)) ips.push(a);
  return { dnsNames: [...new Set(dnsNames)], ips };
}

/** The paths of the files in `dir`. */
export function certDirPaths(dir: string): Record<keyof CertDirFiles, string> {
  const out = {} as Record<keyof CertDirFiles, string>;
  for (const [k, name] of Object.entries(NAMES)) out[k as keyof CertDirFiles] = join(resolve(dir), name);
  return out;
}

function load(dir: string): CertDirFiles {
  const paths = certDirPaths(dir);
  const out = {} as CertDirFiles;
  for (const [k, path] of Object.entries(paths)) out[k as keyof CertDirFiles] = readFileSync(path, 'utf8');
  return out;
}

/**
 * Loads the CA, serving and admin certificates and the service account key from `dir`, generating
 * them on first use. Generation writes a sibling temporary directory and renames it into place, so
 * processes starting together (cluster workers, parallel tests) all end up with one consistent set.
 */
export async function ensureCertDir(dir: string, names: ServingNames): Promise<CertDirFiles> {
  const target = resolve(dir);
  if (existsSync(join(target, NAMES.serviceAccountKey))) return load(target);
  if (existsSync(join(target, NAMES.servingCert)) && existsSync(join(target, NAMES.servingKey))) return completeAroundServingPair(target);
  try {
    mkdirSync(dirname(target), { recursive: true });
  } catch (err) {
    throw new StartupError(`cannot create --cert-dir ${target}: ${err instanceof Error ? err.message : String(err)}`);
  }
  // Loaded only to generate: @peculiar/x509 is not needed to serve existing files.
  const { generateCA, generateLeaf } = await import('./certificates.js');
  const ca = await generateCA(`capstan-ca@${Math.floor(Date.now() / 1000)}`);
  const serving = await generateLeaf(ca, { usage: 'server', commonName: 'kube-apiserver', ...names });
  const admin = await generateLeaf(ca, { usage: 'client', user: 'capstan-admin', groups: ['system:masters'] });
  const saKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const files: CertDirFiles = {
    caCert: ca.cert,
    caKey: ca.key,
    servingCert: serving.cert,
    servingKey: serving.key,
    adminCert: admin.cert,
    adminKey: admin.key,
    serviceAccountKey: saKey,
  };
  const tmp = `${target}.tmp-${process.pid}-${Date.now()}`;
  mkdirSync(tmp, { recursive: true, mode: 0o700 });
  for (const [k, name] of Object.entries(NAMES)) writeFileSync(join(tmp, name), files[k as keyof CertDirFiles], { mode: 0o600 });
  try {
    renameSync(tmp, target);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST')
      throw new StartupError(`cannot write --cert-dir ${target}: ${err instanceof Error ? err.message : String(err)}`);
    // Another process generated it first (or the directory holds other files): use what is there.
    if (!existsSync(join(target, NAMES.serviceAccountKey))) throw new StartupError(`--cert-dir ${target} exists but lacks ${Object.values(NAMES).join(', ')}`);
    return load(target);
  }
  return files;
}

/**
 * A directory that already holds a serving pair (apiserver.crt, apiserver.key) but not Capstan's
 * other files, as envtest prepares it: kube-apiserver serves with that pair, and so does Capstan.
 * The missing files (CA, admin certificate, service account key) are added beside it; files
 * present are never overwritten, so processes starting together agree on one set.
 */
async function completeAroundServingPair(target: string): Promise<CertDirFiles> {
  const { generateCA, generateLeaf } = await import('./certificates.js');
  const ca = await generateCA(`capstan-ca@${Math.floor(Date.now() / 1000)}`);
  const admin = await generateLeaf(ca, { usage: 'client', user: 'capstan-admin', groups: ['system:masters'] });
  // ECDSA P-256 (ES256 tokens): generated in a millisecond where RSA takes up to a second, and such
  // a directory comes with its own signing key (envtest passes --service-account-signing-key-file).
  const saKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  // The CA first, the service account key (whose presence marks a complete set) last.
  const missing: [string, string][] = [
    [NAMES.caCert, ca.cert],
    [NAMES.caKey, ca.key],
    [NAMES.adminCert, admin.cert],
    [NAMES.adminKey, admin.key],
    [NAMES.serviceAccountKey, saKey],
  ];
  if (missing.some(([name]) => existsSync(join(target, name))) && !existsSync(join(target, NAMES.serviceAccountKey))) {
    throw new StartupError(`--cert-dir ${target} holds part of ${Object.values(NAMES).join(', ')}: remove it or complete it`);
  }
  for (const [name, content] of missing) {
    try {
      writeFileSync(join(target, name), content, { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST')
        throw new StartupError(`cannot write --cert-dir ${target}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return load(target);
}
