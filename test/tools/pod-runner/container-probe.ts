/**
 * Runs a container's probe (readiness, liveness) or lifecycle hook against the pod IP as the
 * kubelet's prober does: httpGet (HTTP or HTTPS without verifying the certificate; 200-399
 * succeeds), tcpSocket (a connection succeeds), exec (the command, run in the container by the
 * runner's `exec`, exits 0) and gRPC (grpc.health.v1.Health/Check answers SERVING), each within
 * timeoutSeconds. A named port is looked up in the container's ports.
 */
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import net from 'node:net';

/** A timer that fired this much later than due found the runner's event loop stalled. */
const STALL_MS = 200;
/** How often a stalled deadline gives the container a new (short) window. */
const STALL_RETRIES = 3;

/**
 * Calls `expire` once `ms` have passed, unless cancelled by the returned function. A timer that
 * fires late found this runner's event loop stalled (it copies root file systems and runs `ip`
 * synchronously), during which the container's answer may have arrived unread: the container then
 * gets a new window of up to a second, a few times, rather than failing a probe it answered in time.
 */
export function probeDeadline(ms: number, expire: () => void): () => void {
  let timer: NodeJS.Timeout;
  let retries = 0;
  const arm = (wait: number): void => {
    const due = Date.now() + wait;
    timer = setTimeout(() => {
      if (Date.now() - due > STALL_MS && retries++ < STALL_RETRIES) arm(Math.min(ms, 1000));
      else expire();
    }, wait);
  };
  arm(ms);
  return () => clearTimeout(timer);
}

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
  return Boolean(probe.httpGet || probe.tcpSocket || probe.exec || probe.grpc);
}

/** Runs a command in the container, resolving with its exit code (or undefined when it could not run or timed out). */
export type ExecInContainer = (argv: string[], timeoutMs: number) => Promise<number | undefined>;

/** Why a probe failed, in the words of the kubelet's event ("timeout: ...", "HTTP probe failed with statuscode: 500"). */
export type ProbeFailure = (reason: string) => void;

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Runs the probe once; resolves to success or failure, never rejects; a failure's reason goes to `failed`. */
export function runProbe(probe: any, container: any, podIP: string, exec?: ExecInContainer, failed?: ProbeFailure): Promise<boolean> {
  const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000;
  return new Promise<boolean>((answer) => {
    const resolve = (ok: boolean, reason?: string): void => {
      if (!ok) failed?.(reason ?? 'probe failed');
      answer(ok);
    };
    try {
      if (probe.exec) {
        if (exec === undefined) return resolve(false, 'exec: the container is not running');
        exec(probe.exec.command ?? [], timeoutMs).then(
          (code) => resolve(code === 0, code === undefined ? `command timed out or could not run within ${timeoutMs} ms` : `command exited with ${code}`),
          (err: unknown) => resolve(false, errorText(err)),
        );
        return;
      }
      if (probe.httpGet) {
        const g = probe.httpGet;
        const headers: Record<string, string> = { 'User-Agent': 'kube-probe/1.36' };
        for (const h of g.httpHeaders ?? []) headers[h.name] = h.value;
        const options = { host: g.host || podIP, port: resolvePort(g.port, container), path: g.path || '/', headers };
        const answered = (res: http.IncomingMessage): void => {
          cancel();
          res.resume();
          const code = res.statusCode ?? 0;
          resolve(code >= 200 && code < 400, `HTTP probe failed with statuscode: ${code}`);
        };
        const req = g.scheme === 'HTTPS' ? https.get({ ...options, rejectUnauthorized: false }, answered) : http.get(options, answered);
        const cancel = probeDeadline(timeoutMs, () => req.destroy(new Error(`timeout: no answer within ${timeoutMs} ms`)));
        req.on('error', (err) => {
          cancel();
          resolve(false, errorText(err));
        });
        return;
      }
      if (probe.grpc) {
        grpcHealthCheck(podIP, probe.grpc.port, probe.grpc.service ?? '', timeoutMs, (reason) => failed?.(reason)).then(answer, (err: unknown) =>
          resolve(false, errorText(err)),
        );
        return;
      }
      if (probe.tcpSocket) {
        const socket = net.connect({ host: probe.tcpSocket.host || podIP, port: resolvePort(probe.tcpSocket.port, container) });
        const cancel = probeDeadline(timeoutMs, () => socket.destroy(new Error(`timeout: not connected within ${timeoutMs} ms`)));
        socket.on('connect', () => {
          cancel();
          socket.destroy();
          resolve(true);
        });
        socket.on('error', (err) => {
          cancel();
          resolve(false, errorText(err));
        });
        return;
      }
      resolve(false, 'no probe handler the runner knows');
    } catch (err) {
      resolve(false, errorText(err));
    }
  });
}

/**
 * One gRPC health check (grpc.health.v1.Health/Check over HTTP/2 without TLS): whether it answers
 * status 0 and SERVING; a failure's reason goes to `failed`.
 */
export function grpcHealthCheck(host: string, port: number, service: string, timeoutMs: number, failed?: ProbeFailure): Promise<boolean> {
  return new Promise((resolve) => {
    let settled = false;
    const client = http2.connect(`http://${host.includes(':') ? `[${host}]` : host}:${port}`);
    const done = (ok: boolean, reason?: string): void => {
      if (settled) return;
      settled = true;
      cancel();
      client.close();
      client.destroy();
      if (!ok) failed?.(reason ?? 'gRPC probe failed');
      resolve(ok);
    };
    const cancel = probeDeadline(timeoutMs, () => done(false, `timeout: health rpc did not complete within ${timeoutMs} ms`));
    client.on('error', (err) => done(false, `failed to connect service "${host}:${port}": ${errorText(err)}`));
    // HealthCheckRequest{service}: field 1, length-delimited; the gRPC message prefix: not compressed, length.
    const name = Buffer.from(service);
    const message = name.length > 0 ? Buffer.concat([Buffer.from([0x0a, name.length]), name]) : Buffer.alloc(0);
    const frame = Buffer.alloc(5 + message.length);
    frame.writeUInt32BE(message.length, 1);
    message.copy(frame, 5);
    const req = client.request({ ':method': 'POST', ':path': '/grpc.health.v1.Health/Check', 'content-type': 'application/grpc', te: 'trailers' });
    const chunks: Buffer[] = [];
    let status: unknown;
    req.on('response', (headers) => {
      if (headers['grpc-status'] !== undefined) status = headers['grpc-status'];
    });
    req.on('trailers', (trailers) => {
      status = trailers['grpc-status'];
    });
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      // HealthCheckResponse{status: SERVING (1)}: field 1, varint.
      if (String(status) !== '0') return done(false, `health rpc failed: grpc-status ${String(status)}`);
      const serving = body.length >= 7 && body[5] === 0x08 && body[6] === 1;
      done(serving, `service unhealthy (responded with ${body.length >= 7 && body[5] === 0x08 ? `status ${body[6]}` : `${body.length} bytes`})`);
    });
    req.on('error', (err) => done(false, `health rpc failed: ${errorText(err)}`));
    req.end(frame);
  });
}
