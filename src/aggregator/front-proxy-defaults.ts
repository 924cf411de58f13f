import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { ServerConfig } from '../config/server-config.js';
import { StartupError } from '../config/startup-error.js';
import { ensureServingCertDir } from '../tls/serving-setup.js';

/** The common name of the generated proxy client certificate (kubeadm's). */
export const FRONT_PROXY_CLIENT_NAME = 'front-proxy-client';

/** Where the generated front-proxy files live: `--cert-dir`/front-proxy/. */
export function frontProxyPaths(certDir: string): { caCert: string; caKey: string; clientCert: string; clientKey: string } {
  const dir = join(resolve(certDir), 'front-proxy');
  return { caCert: join(dir, 'ca.crt'), caKey: join(dir, 'ca.key'), clientCert: join(dir, 'client.crt'), clientKey: join(dir, 'client.key') };
}

/**
 * The configuration with kubeadm's front-proxy set-up filled in when the command line configures
 * neither side of it (no `--requestheader-client-ca-file`, no `--proxy-client-cert-file`/`-key-file`)
 * and Capstan serves HTTPS: a front-proxy CA and a client certificate for `front-proxy-client`,
 * generated once in `--cert-dir`/front-proxy/, become the requestheader CA (allowed name
 * `front-proxy-client`, headers `X-Remote-User`, `X-Remote-Group`, `X-Remote-Extra-` unless given) and
 * the aggregator's proxy client certificate. Extension API servers then trust what the aggregator
 * sends them through the `extension-apiserver-authentication` ConfigMap, with no flag to set.
 * Otherwise the configuration is returned as it is, as kube-apiserver takes its flags.
 */
export async function withFrontProxyDefaults(config: ServerConfig): Promise<ServerConfig> {
  if (config.securePort === undefined) return config;
  if (config.requestheaderClientCAFile !== '' || config.proxyClientCertFile !== '' || config.proxyClientKeyFile !== '') return config;
  // The cert dir is made whole first: it is generated only where it does not exist yet.
  await ensureServingCertDir(config);
  const paths = frontProxyPaths(config.certDir);
  if (!existsSync(paths.clientKey)) await generate(paths);
  const orDefault = (given: string[], fallback: string): string[] => (given.length > 0 ? given : [fallback]);
  return {
    ...config,
    requestheaderClientCAFile: paths.caCert,
    requestheaderAllowedNames: orDefault(config.requestheaderAllowedNames, FRONT_PROXY_CLIENT_NAME),
    requestheaderUsernameHeaders: orDefault(config.requestheaderUsernameHeaders, 'X-Remote-User'),
    requestheaderGroupHeaders: orDefault(config.requestheaderGroupHeaders, 'X-Remote-Group'),
    requestheaderExtraHeadersPrefix: orDefault(config.requestheaderExtraHeadersPrefix, 'X-Remote-Extra-'),
    proxyClientCertFile: paths.clientCert,
    proxyClientKeyFile: paths.clientKey,
  };
}

/**
 * Generates the four files into a sibling temporary directory renamed into place, so processes
 * starting together (workers, pods sharing a cert dir) end up with one set.
 */
async function generate(paths: ReturnType<typeof frontProxyPaths>): Promise<void> {
  const target = dirname(paths.caCert);
  const { generateCA, generateLeaf } = await import('../tls/certificates.js');
  const ca = await generateCA(`front-proxy-ca@${Math.floor(Date.now() / 1000)}`);
  const client = await generateLeaf(ca, { usage: 'client', user: FRONT_PROXY_CLIENT_NAME, groups: [] });
  const tmp = `${target}.tmp-${process.pid}-${Date.now()}`;
  try {
    mkdirSync(tmp, { recursive: true, mode: 0o700 });
    writeFileSync(join(tmp, 'ca.crt'), ca.cert, { mode: 0o600 });
    writeFileSync(join(tmp, 'ca.key'), ca.key, { mode: 0o600 });
    writeFileSync(join(tmp, 'client.crt'), client.cert, { mode: 0o600 });
    writeFileSync(join(tmp, 'client.key'), client.key, { mode: 0o600 });
    renameSync(tmp, target);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    // Another process generated them first: use those.
    if (existsSync(paths.clientKey)) return;
    throw new StartupError(`cannot write the front-proxy certificates in ${target}: ${err instanceof Error ? err.message : String(err)}`);
  }
}
