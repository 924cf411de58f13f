/**
 * The kubelet API's exec, as kube-apiserver and client-go reach it: `POST|GET
 * /exec/NAMESPACE/POD/[UID/]CONTAINER?command=...&input=1&output=1&error=1&tty=0` (or stdin,
 * stdout, stderr) upgraded to
 * SPDY/3.1 with the remotecommand protocol v4.channel.k8s.io (spdy.ts): the client opens an error
 * stream and one stream per standard stream asked for (their `streamtype` header names them); once
 * all are there the command runs in the container (the runner's `exec`: its namespaces, root, user
 * and environment), stdin is fed to it and stdout and stderr come back on their streams; at its end
 * the error stream carries the metav1.Status kube writes (Success, or Failure NonZeroExitCode with
 * the exit code as the ExitCode cause); the client then closes the connection (this side does after
 * 10 s). A WebSocket upgrade is answered 400,
 * so client-go falls back to SPDY; a container that is not running, 404 or 500 before any upgrade.
 * tty=1 runs the command without a terminal, its output on the stdout stream.
 */
import { ChildProcess } from 'node:child_process';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { SpdyConnection, type SpdyStream } from './spdy.js';

/** Starts `argv` in a running container (stdio pipes), or says why it cannot. */
export type ExecInPod = (namespace: string, pod: string, container: string, argv: string[]) => ChildProcess | { status: number; message: string };

const PROTOCOL = 'v4.channel.k8s.io';

function refuse(socket: Duplex, status: number, message: string): void {
  const reason = { 400: 'Bad Request', 404: 'Not Found', 500: 'Internal Server Error' }[status] ?? 'Error';
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(message)}\r\nConnection: close\r\n\r\n${message}`);
}

const truthy = (v: string | null): boolean => v === '1' || v === 'true';

/** Whether an upgrade request is for this handler. */
export function isExecRequest(req: IncomingMessage): boolean {
  return /^\/exec\//.test(new URL(req.url ?? '/', 'https://kubelet').pathname);
}

/** Serves one exec upgrade request (the `upgrade` event of the kubelet API's server). */
export function handleExecUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, exec: ExecInPod): void {
  const url = new URL(req.url ?? '/', 'https://kubelet');
  const m = /^\/exec\/([^/]+)\/([^/]+)\/(?:[^/]+\/)?([^/]+)$/.exec(url.pathname);
  if (m === null) return refuse(socket, 404, '404 page not found\n');
  const [, namespace, pod, container] = m.map(decodeURIComponent);
  const upgrade = String(req.headers.upgrade ?? '').toLowerCase();
  if (!upgrade.includes('spdy/3.1')) return refuse(socket, 400, `upgrade ${upgrade || '(none)'} is not supported: use SPDY/3.1\n`);
  const offered = String(req.headers['x-stream-protocol-version'] ?? '')
    .split(',')
    .map((s) => s.trim());
  if (!offered.includes(PROTOCOL)) return refuse(socket, 400, `none of the stream protocols ${offered.join(', ')} is supported (${PROTOCOL} is)\n`);
  const argv = url.searchParams.getAll('command');
  // The kubelet's names (kube-apiserver's streamParams: input, output, error), or the options' own.
  const param = (kubelet: string, option: string): boolean => truthy(url.searchParams.get(kubelet)) || truthy(url.searchParams.get(option));
  const tty = truthy(url.searchParams.get('tty'));
  const wanted = new Set(['error']);
  if (param('input', 'stdin')) wanted.add('stdin');
  if (param('output', 'stdout')) wanted.add('stdout');
  if (param('error', 'stderr') && !tty) wanted.add('stderr');
  if (tty) wanted.add('resize');
  const child = exec(namespace, pod, container, argv);
  if (!(child instanceof ChildProcess)) return refuse(socket, child.status, `${child.message}\n`);
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${PROTOCOL}\r\n\r\n`);
  const streams = new Map<string, SpdyStream>();
  const proc = child;
  let started = false;
  const conn = new SpdyConnection(
    socket,
    head,
    (stream) => {
      const type = stream.headers.streamtype ?? '';
      streams.set(type, stream);
      if (type === 'stdin') {
        stream.onData = (data) => {
          if (data === null) proc.stdin?.end();
          else proc.stdin?.write(data);
        };
      }
      if (!started && [...wanted].every((t) => streams.has(t))) {
        started = true;
        run();
      }
    },
    () => proc.kill('SIGKILL'),
  );
  // The command's streams are read from the start, and sent once the client's streams are there.
  const pending: Array<[string, Buffer]> = [];
  const forward = (type: string, data: Buffer): void => {
    const s = streams.get(tty ? 'stdout' : type);
    if (started && s) s.write(data);
    else pending.push([type, data]);
  };
  proc.stdout?.on('data', (d: Buffer) => forward('stdout', d));
  proc.stderr?.on('data', (d: Buffer) => forward('stderr', d));
  if (!wanted.has('stdin')) proc.stdin?.end();
  const ended = new Promise<string>((resolve) => {
    proc.on('error', (err) => resolve(JSON.stringify({ metadata: {}, status: 'Failure', message: err.message, reason: 'InternalError', code: 500 })));
    proc.on('close', (code, signal) => {
      const exit = code ?? 128 + (signal === 'SIGKILL' ? 9 : 15);
      resolve(
        exit === 0
          ? JSON.stringify({ metadata: {}, status: 'Success' })
          : JSON.stringify({
              metadata: {},
              status: 'Failure',
              message: `command terminated with non-zero exit code: error executing command [${argv.join(' ')}], exit code ${exit}`,
              reason: 'NonZeroExitCode',
              details: { causes: [{ reason: 'ExitCode', message: String(exit) }] },
            }),
      );
    });
  });
  const run = (): void => {
    for (const [type, data] of pending.splice(0)) streams.get(tty ? 'stdout' : type)?.write(data);
    void ended.then((status) => {
      streams.get('stdout')?.end();
      streams.get('stderr')?.end();
      const error = streams.get('error');
      error?.write(Buffer.from(status));
      error?.end();
      // The client closes the connection once it read everything; closing first could lose what it has not read yet.
      setTimeout(() => conn.close(), 10_000).unref();
    });
  };
}
