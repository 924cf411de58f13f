import { readFileSync } from 'node:fs';

/** Node's default listen backlog, used where the kernel's limit cannot be read. */
const NODE_DEFAULT_BACKLOG = 511;

function kernelLimit(): number {
  try {
    const value = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8').trim());
    return Number.isInteger(value) && value > 0 ? Math.min(value, 65_535) : NODE_DEFAULT_BACKLOG;
  } catch {
    return NODE_DEFAULT_BACKLOG;
  }
}

/**
 * The backlog of the listening sockets: the kernel's limit (`net.core.somaxconn`), as Go's net
 * package (kube-apiserver's listener) uses it, instead of Node's 511. Under a burst of new
 * connections (thousands of clients at once) while the event loop is busy, a short backlog makes
 * the kernel drop the handshakes it cannot queue, and clients see their connections reset; with
 * the kernel's limit they wait to be accepted and are answered (or refused with a 429).
 */
export const LISTEN_BACKLOG = kernelLimit();
