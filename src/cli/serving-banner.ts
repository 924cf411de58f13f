import { accessSync, constants, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { ServerConfig } from '../config/server-config.js';
import { adminKubeconfigFor, kubeconfigFor } from './kubeconfig.js';
import { certDirPaths } from '../tls/cert-dir.js';
import { pemCertificates } from '../tls/reloading-files.js';
import { describeSocketError, StartupError } from '../config/startup-error.js';
import { logger, type LogFields } from '../logging/logger.js';

/**
 * What is printed once the server listens: with JSON logs the `serving` line (URL, storage, kubeconfig
 * path) that scripts wait for; with text logs (a terminal) a short banner for a person instead,
 * saying how to connect and what Capstan does not do (run workload controllers). The kubeconfig is written here, so the banner never names a file that
 * is not there.
 */

/**
 * Fails at start-up, before anything listens, when `--write-kubeconfig` names a file that cannot be
 * written (a directory, a missing or read-only folder): one line, exit 1.
 */
export function checkKubeconfigPath(config: ServerConfig): void {
  if (config.writeKubeconfig === undefined) return;
  const path = resolve(config.writeKubeconfig);
  try {
    if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    accessSync(dirname(path), constants.W_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'EISDIR' ? 'it is a directory' : code === 'ENOENT' ? 'no such directory' : describeSocketError(err);
    throw new StartupError(`cannot write kubeconfig to ${path}: ${why}`);
  }
}

/**
 * The kubeconfig `--write-kubeconfig` writes: with HTTPS, the admin one (the CA, and the client
 * certificate in system:masters generated in --cert-dir); else the plain-HTTP loopback URL.
 */
function kubeconfigText(config: ServerConfig, url: string, secureUrl: string | undefined): string {
  if (secureUrl === undefined) return kubeconfigFor(url);
  const paths = certDirPaths(config.certDir);
  const read = (p: string): string => readFileSync(p, 'utf8');
  const certs = config.tlsCertFile === '' ? [read(paths.caCert)] : pemCertificates(read(config.tlsCertFile));
  return adminKubeconfigFor(secureUrl, `${certs[certs.length - 1] ?? ''}\n`.replace(/\n\n$/, '\n'), read(paths.adminCert), read(paths.adminKey));
}

/**
 * Writes the kubeconfig (when asked), then logs `serving` (with `secureUrl` when HTTPS is served)
 * or, with text logs, prints the banner.
 */
export function announceServing(config: ServerConfig, url: string, fields: LogFields = {}, secureUrl?: string): void {
  let kubeconfig: string | undefined;
  if (config.writeKubeconfig !== undefined) {
    const path = resolve(config.writeKubeconfig);
    try {
      writeFileSync(path, kubeconfigText(config, url, secureUrl), { mode: 0o600 });
      kubeconfig = path;
    } catch (err) {
      logger.error('cannot write kubeconfig', { path, error: describeSocketError(err) });
    }
  }
  if (logger.format === 'text') {
    process.stderr.write(bannerText(config, secureUrl ?? url, kubeconfig, secureUrl !== undefined && secureUrl !== url ? url : undefined));
    return;
  }
  logger.announce('serving', {
    url,
    ...(secureUrl !== undefined ? { secureUrl } : {}),
    storage: config.storage,
    ...fields,
    ...(kubeconfig !== undefined ? { kubeconfig } : {}),
  });
}

/** The human banner: where the API is, how to point kubectl at it, what does not happen here. */
export function bannerText(config: ServerConfig, url: string, kubeconfig: string | undefined, localUrl?: string): string {
  const store = config.storage === 'memory' ? 'embedded in-memory store: objects are lost when it stops' : 'Redis store';
  const lines = ['', `Capstan is serving the Kubernetes API at ${url} (${store}).`];
  if (localUrl !== undefined) lines.push(`Plain HTTP for this host only (every request is the administrator): ${localUrl}`);
  if (kubeconfig !== undefined) {
    lines.push(`Kubeconfig written to ${kubeconfig}. In another terminal:`, `  export KUBECONFIG=${kubeconfig}`, '  kubectl get namespaces');
  } else {
    lines.push('In another terminal:', `  kubectl --server ${url} get namespaces`, '(or start with --write-kubeconfig PATH and export KUBECONFIG=PATH)');
  }
  lines.push(
    'No workload controllers, scheduler or kubelet run here: Deployments, ReplicaSets, Jobs and the like are stored, but no Pods are created or run.',
    'Request lines are logged with --log-level=debug. Press Ctrl-C to stop.',
    '',
  );
  return `${lines.join('\n')}\n`;
}
