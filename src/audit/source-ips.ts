import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';

/** An address as Go's net.IP prints it: IPv4-mapped IPv6 addresses as IPv4. */
function canonical(address: string): string | undefined {
  const a = address.trim();
  const kind = isIP(a);
  if (kind === 0) return undefined;
  if (kind === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
    return mapped ? mapped[1] : a.toLowerCase();
  }
  return a;
}

/**
 * The client addresses of a request, as kube's SourceIPs lists them: every valid address of
 * X-Forwarded-For, then X-Real-Ip unless already listed, then the connection's peer unless it is the
 * last one listed (it is the only address a client cannot forge).
 */
export function sourceIPs(req: IncomingMessage): string[] {
  const ips: string[] = [];
  const forwarded = req.headers['x-forwarded-for'];
  const forwardedText = Array.isArray(forwarded) ? forwarded[0] : forwarded;
  if (forwardedText !== undefined && forwardedText !== '') {
    for (const part of forwardedText.split(',')) {
      const ip = canonical(part);
      if (ip !== undefined) ips.push(ip);
    }
  }
  const realIp = req.headers['x-real-ip'];
  const real = typeof realIp === 'string' && realIp !== '' ? canonical(realIp) : undefined;
  if (real !== undefined && !ips.includes(real)) ips.push(real);
  const remote = req.socket.remoteAddress === undefined ? undefined : canonical(req.socket.remoteAddress);
  if (remote !== undefined && (ips.length === 0 || ips[ips.length - 1] !== remote)) ips.push(remote);
  return ips;
}
