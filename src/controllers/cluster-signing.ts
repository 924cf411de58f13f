import { readFile } from 'node:fs/promises';
import { StartupError } from '../config/startup-error.js';
import type { ServerConfig } from '../config/server-config.js';
import type { SigningConfig } from './csr-signing-controller.js';
import type { ServingSetup } from '../tls/serving-setup.js';
import { SigningAuthority } from '../certificates/signing-authority.js';

/**
 * The CSR signing controller's CA: `--cluster-signing-cert-file`/`--cluster-signing-key-file` (both
 * or neither), else the --cert-dir CA that client certificates are always verified against (so the
 * certificates it signs authenticate); undefined without either (plain HTTP only). Files are read
 * when a term as leader first signs (so that start-up does not load the X.509 code).
 */
export function clusterSigningConfig(config: ServerConfig, serving: ServingSetup | undefined): SigningConfig | undefined {
  const { clusterSigningCertFile: certFile, clusterSigningKeyFile: keyFile } = config;
  if ((certFile === '') !== (keyFile === '')) throw new StartupError('--cluster-signing-cert-file and --cluster-signing-key-file must be given together');
  const maxDurationMs = config.clusterSigningDurationMs;
  if (certFile !== '') {
    return { maxDurationMs, authority: async () => SigningAuthority.load(await readFile(certFile, 'utf8'), await readFile(keyFile, 'utf8')) };
  }
  if (serving === undefined) return undefined;
  const { caCert, caKey } = serving.certDir;
  return { maxDurationMs, authority: () => SigningAuthority.load(caCert, caKey) };
}
