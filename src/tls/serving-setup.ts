import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { StartupError } from '../config/startup-error.js';
import type { ServerConfig } from '../config/server-config.js';
import { certDirPaths, ensureCertDir, servingNamesFor, type CertDirFiles } from './cert-dir.js';
import { pemCertificates, ReloadingFiles } from './reloading-files.js';

/**
 * Everything HTTPS serving needs, loaded once per process: the serving certificate (from
 * `--tls-cert-file`/`--tls-private-key-file`, or generated in `--cert-dir`), the CA bundles that
 * verify client certificates (`--client-ca-file` plus the cert-dir CA that signs the admin
 * certificate) and front-proxy certificates (`--requestheader-client-ca-file`), each re-read when
 * its files change, and the admin credentials the written kubeconfig carries.
 */
export class ServingSetup {
  private constructor(
    readonly certDir: CertDirFiles,
    private readonly serving: ReloadingFiles,
    private readonly clientCA: ReloadingFiles,
    private readonly requestheaderCA: ReloadingFiles | undefined,
    /** CA a client should trust for the serving certificate (the kubeconfig's certificate-authority-data). */
    readonly servingCA: string,
  ) {}

  static async load(config: ServerConfig): Promise<ServingSetup> {
    if ((config.tlsCertFile === '') !== (config.tlsPrivateKeyFile === '')) {
      throw new StartupError('--tls-cert-file and --tls-private-key-file must be given together');
    }
    const files = await ensureServingCertDir(config);
    const paths = certDirPaths(config.certDir);
    const own = config.tlsCertFile === '';
    const servingPaths = own ? [paths.servingCert, paths.servingKey] : [config.tlsCertFile, config.tlsPrivateKeyFile];
    const serving = readOrExplain(() => new ReloadingFiles(servingPaths, ([cert, key]) => void createSecureContext({ cert, key })), servingPaths);
    const clientPaths = [...(config.clientCAFile === '' ? [] : [config.clientCAFile]), paths.caCert];
    const clientCA = readOrExplain(() => new ReloadingFiles(clientPaths, (c) => void bundle(c)), clientPaths);
    const rh = config.requestheaderClientCAFile;
    const requestheaderCA = rh === '' ? undefined : readOrExplain(() => new ReloadingFiles([rh], (c) => void bundle(c)), [rh]);
    const servingCA = own ? files.caCert : lastCertificate(readFileSync(config.tlsCertFile, 'utf8'));
    return new ServingSetup(files, serving, clientCA, requestheaderCA, servingCA);
  }

  /** Options for `https.createServer`/`setSecureContext`: certificate, key, and the client CAs to ask for. */
  secureContextOptions(): SecureContextOptions {
    const [cert, key] = this.serving.current();
    return { cert, key, ca: [...this.clientRootsPem(), ...(this.requestheaderCA?.current().flatMap(pemCertificates) ?? [])] };
  }

  /** The PEM certificates of the client CA bundle (`--client-ca-file` and the cert-dir CA), as of the last reload. */
  clientRootsPem(): string[] {
    return this.clientCA.current().flatMap(pemCertificates);
  }

  /** The PEM certificates of `--requestheader-client-ca-file`; undefined when it is not set. */
  requestheaderRootsPem(): string[] | undefined {
    return this.requestheaderCA?.current().flatMap(pemCertificates);
  }

  /** Roots verifying client certificates, current as of the last reload. */
  clientRoots(): X509Certificate[] {
    return bundle(this.clientCA.current());
  }

  /** Roots verifying front-proxy certificates; undefined when `--requestheader-client-ca-file` is not set. */
  requestheaderRoots(): (() => X509Certificate[]) | undefined {
    const files = this.requestheaderCA;
    return files === undefined ? undefined : () => bundle(files.current());
  }

  /** Starts watching every file; `onChange` runs after any accepted change (to refresh the TLS context). */
  watch(onChange: () => void, intervalMs = 1000): void {
    for (const f of [this.serving, this.clientCA, this.requestheaderCA]) {
      if (f === undefined) continue;
      f.onChange(onChange);
      f.watch(intervalMs);
    }
  }

  stop(): void {
    this.serving.stop();
    this.clientCA.stop();
    this.requestheaderCA?.stop();
  }
}

/** The `--cert-dir` files, generated on first start with this server's names and addresses. */
export function ensureServingCertDir(config: ServerConfig): Promise<CertDirFiles> {
  return ensureCertDir(config.certDir, servingNamesFor([config.bindAddress, config.advertiseAddress, firstServiceIP(config)]));
}

/** Parsed bundles by the contents array they came from (replaced, never mutated, on reload). */
const parsedBundles = new WeakMap<string[], X509Certificate[]>();

function bundle(contents: string[]): X509Certificate[] {
  const cached = parsedBundles.get(contents);
  if (cached !== undefined) return cached;
  const certs = contents.flatMap(pemCertificates).map((pem) => new X509Certificate(pem));
  if (certs.length === 0) throw new Error('no certificate found in the CA bundle');
  parsedBundles.set(contents, certs);
  return certs;
}

function lastCertificate(pem: string): string {
  const certs = pemCertificates(pem);
  return `${certs[certs.length - 1] ?? ''}\n`;
}

function readOrExplain<T>(load: () => T, paths: string[]): T {
  try {
    return load();
  } catch (err) {
    throw new StartupError(`cannot load ${paths.join(', ')}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The first address of the service range (the `kubernetes` Service's cluster IP). */
function firstServiceIP(config: ServerConfig): string {
  const n = config.serviceClusterIPRange.network + 1;
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}
