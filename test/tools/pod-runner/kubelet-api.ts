/**
 * The part of the kubelet's HTTPS API the pod runner serves, so that the API server's pods/log
 * reaches it: `GET /containerLogs/NAMESPACE/POD/CONTAINER` with kube's log options (see
 * container-log.ts), `previous=true` reading the container's log before its last restart, and the
 * SPDY upgrade of `/exec/NAMESPACE/POD/CONTAINER` (kubelet-exec.ts). Other paths answer 404. The serving certificate is self-signed (kube-apiserver verifies a kubelet only
 * with --kubelet-certificate-authority).
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generateCertificates } from '../../helpers/webhook-server.js';
import { logOptionsOf, streamLog } from './container-log.js';
import { handleExecUpgrade, isExecRequest, type ExecInPod } from './kubelet-exec.js';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

/** Where a container's log is, and whether it still runs (undefined: no such container). */
export type ContainerLogs = (namespace: string, pod: string, container: string, previous: boolean) => { file: string; running: () => boolean } | undefined;

/** Starts the API on `host`:`port` (0: a free one); resolves with the server and its port. */
export async function startKubeletApi(host: string, port: number, logs: ContainerLogs, exec?: ExecInPod): Promise<{ server: Server; port: number }> {
  const certs = await generateCertificates(['localhost'], [host === '0.0.0.0' ? '127.0.0.1' : host]);
  const server = createServer({ cert: certs.certPem, key: certs.keyPem }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://kubelet');
    const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (req.method !== 'GET' || m === null) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n');
      return;
    }
    const [, namespace, pod, container] = m.map(decodeURIComponent);
    const found = logs(namespace, pod, container, url.searchParams.get('previous') === 'true');
    if (found === undefined) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end(`container ${container} of pod ${namespace}/${pod} not found\n`);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    streamLog(found.file, logOptionsOf(url.searchParams), res, found.running);
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (exec !== undefined && isExecRequest(req)) handleExecUpgrade(req, socket, head, exec);
    else socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return { server, port: (server.address() as AddressInfo).port };
}
