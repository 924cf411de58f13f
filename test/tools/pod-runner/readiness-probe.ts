/**
 * Runs a container's readiness probe against the pod IP as the kubelet's prober does: httpGet
 * (HTTP or HTTPS without verifying the certificate; 200-399 succeeds) or tcpSocket (a connection
 * succeeds), exec (the command, run in the container by the runner's `exec`, exits 0), each
 * within timeoutSeconds. A named port is looked up in the container's ports. gRPC probes are
 * reported as unsupported.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

 

function resolvePort(port: unknown, container: any): number {
  if (typeof port === 'number') return port;
  const asNumber = Number(port);
  if (Number.isInteger(asNumber)) return asNumber;
  const named = (container.ports ?? []).find((p: any) => p.name === port);
  if (!named) throw new Error(`port ${String(port)} not found in container ${container.name}`);
  return named.containerPort as number;
}

/** Whether the probe can be run by this prober. */
export function probeSupported(probe: any): boolean {
  return Boolean(probe.httpGet || probe.tcpSocket || probe.exec);
}

/** Runs a command in the container, resolving with its exit code (or undefined when it could not run or timed out). */
export type ExecInContainer = (argv: string[], timeoutMs: number) => Promise<number | undefined>;

/** Runs the probe once; resolves to success or failure, never rejects. */
export function runProbe(probe: any, container: any, podIP: string, exec?: ExecInContainer): Promise<boolean> {
  const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000;
  return new Promise<boolean>((resolve) => {
    try {
      if (probe.exec) {
        if (exec === undefined) return resolve(false);
        exec(probe.exec.command ?? [], timeoutMs).then(
          (code) => resolve(code === 0),
          () => resolve(false),
        );
        return;
      }
      if (probe.httpGet) {
        const g = probe.httpGet;
        const headers: Record<string, string> = { 'User-Agent': 'kube-probe/1.36' };
        for (const h of g.httpHeaders ?? []) headers[h.name] = h.value;
        const options = { host: g.host || podIP, port: resolvePort(g.port, container), path: g.path || '/', headers, timeout: timeoutMs };
        const req =
          g.scheme === 'HTTPS'
            ? https.get({ ...options, rejectUnauthorized: false }, (res) => {
                res.resume();
                resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 400);
              })
            : http.get(options, (res) => {
                res.resume();
                resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 400);
              });
        req.on('timeout', () => req.destroy(new Error('timeout')));
        req.on('error', () => resolve(false));
        return;
      }
      if (probe.tcpSocket) {
        const socket = net.connect({ host: probe.tcpSocket.host || podIP, port: resolvePort(probe.tcpSocket.port, container) });
        socket.setTimeout(timeoutMs, () => socket.destroy(new Error('timeout')));
        socket.on('connect', () => {
          socket.destroy();
          resolve(true);
        });
        socket.on('error', () => resolve(false));
        return;
      }
      resolve(false);
    } catch {
      resolve(false);
    }
  });
}
