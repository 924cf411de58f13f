/**
 * Makes the API server reachable from pods at the `kubernetes` Service's address, as kube-proxy
 * would: the Service's cluster IP is added to the pod bridge (pods route to it through their default
 * gateway, the host) and a TCP forwarder listening there passes each connection to the API server's
 * secure port. TLS is end to end: the pod verifies the API server's certificate, which names the
 * Service's cluster IP.
 */
import { execFileSync } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';

export interface ApiForwarder {
  stop(): void;
}

/** Forwards `service.host:service.port` (added to `bridge`) to `target`. */
export async function startApiForwarder(bridge: string, service: { host: string; port: number }, target: { host: string; port: number }): Promise<ApiForwarder> {
  execFileSync('ip', ['addr', 'replace', `${service.host}/32`, 'dev', bridge], { stdio: ['ignore', 'ignore', 'pipe'] });
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(service.port, service.host, () => resolve());
  });
  return {
    stop: () => {
      server.close();
      for (const s of sockets) s.destroy();
      try {
        execFileSync('ip', ['addr', 'del', `${service.host}/32`, 'dev', bridge], { stdio: ['ignore', 'ignore', 'pipe'] });
      } catch {
        // the bridge (and its addresses) may be gone already
      }
    },
  };
}
