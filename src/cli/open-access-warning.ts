import { isIP } from 'node:net';
import type { ServerConfig } from '../config/server-config.js';
import { logger } from '../logging/logger.js';

/**
 * True only for addresses no other host can reach: 127.0.0.0/8, ::1 (also IPv4-mapped) and
 * `localhost`. Anything else, host names included, counts as reachable from other hosts.
 */
export function isLoopbackAddress(address: string): boolean {
  const a = address.toLowerCase().replace(/^\[|\]$/g, '');
  if (a === 'localhost' || a === '::1') return true;
  const v4 = a.startsWith('::ffff:') ? a.slice('::ffff:'.length) : a;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

/**
 * The warning for a server that authorizes with AlwaysAllow while other hosts can reach its secure
 * port, or undefined when there is nothing to warn about. Anonymous requests are off in this
 * combination (kube's rule: auth/anonymous-auth-flag.ts), but every credential is still all-powerful.
 */
export function openAccessWarning(config: Pick<ServerConfig, 'bindAddress' | 'authorizationMode'>): string | undefined {
  const modes = config.authorizationMode.split(',').map((m) => m.trim());
  if (!modes.includes('AlwaysAllow') || isLoopbackAddress(config.bindAddress)) return undefined;
  return (
    `--authorization-mode=${config.authorizationMode} on --bind-address=${config.bindAddress}: every client with any valid credential may read and change everything, ` +
    'Secrets and RBAC included; use --authorization-mode=Node,RBAC (as the image and the Helm chart do) or bind a loopback address'
  );
}

/** Logs openAccessWarning's text at `warn` level when it applies (once, at start, by the primary). */
export function warnIfOpenToOtherHosts(config: ServerConfig): void {
  const text = openAccessWarning(config);
  if (text !== undefined) logger.warn(text, { bindAddress: config.bindAddress, authorizationMode: config.authorizationMode });
}
