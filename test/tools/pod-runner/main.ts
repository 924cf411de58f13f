/**
 * Command line of the test-only pod runner (see pod-runner.ts):
 *   node dist/test/tools/pod-runner/main.js --server http://127.0.0.1:PORT --agnhost PATH
 *     [--node fake-node] [--work-dir DIR] [--bridge capstan-pods]
 *     [--apiserver HOST:PORT] [--sample-apiserver PATH] [--etcd PATH] [--busybox PATH] [--token TOKEN] [--no-bind]
 * --apiserver (the API server's secure port) makes it reachable from pods at the `kubernetes`
 * Service's cluster IP; --sample-apiserver and --etcd run the e2e Aggregator test's images; --busybox
 * is the static busybox of busybox images (scripts/pod-runner/build-busybox.sh; default /bin/busybox);
 * --token authenticates to an HTTPS --server (the reference kube-apiserver, for baselines);
 * --no-bind leaves scheduling to a kube-scheduler that runs beside it (npm run conformance);
 * --kubelet-port (default 10250, 0: a free one) is where its kubelet API (container logs, exec) listens, on
 * the node's InternalIP, which the runner adds to the bridge when no interface has it, and which it
 * writes into the node's status.daemonEndpoints.
 * Needs root (network namespaces). Runs until SIGTERM/SIGINT, then kills every pod process and
 * removes the pod namespaces and the bridge. Logs one line per event on stderr.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ApiClient } from './api-client.js';
import { startApiForwarder, type ApiForwarder } from './api-forwarder.js';
import { startNodeHeartbeat } from './node-heartbeat.js';
import { PodNetworks } from './pod-network.js';
import { PodRunner } from './pod-runner.js';
import { startKubeletApi } from './kubelet-api.js';

const { values } = parseArgs({
  options: {
    server: { type: 'string' },
    agnhost: { type: 'string' },
    node: { type: 'string', default: 'fake-node' },
    'work-dir': { type: 'string' },
    bridge: { type: 'string', default: 'capstan-pods' },
    apiserver: { type: 'string' },
    'sample-apiserver': { type: 'string' },
    etcd: { type: 'string' },
    busybox: { type: 'string' },
    token: { type: 'string' },
    'no-bind': { type: 'boolean', default: false },
    'kubelet-port': { type: 'string', default: '10250' },
  },
});
if (!values.server || !values.agnhost) {
  process.stderr.write('usage: pod-runner --server URL --agnhost PATH [--node NAME] [--work-dir DIR] [--bridge NAME]\n');
  process.exit(2);
}
const log = (msg: string): void => void process.stderr.write(`${new Date().toISOString()} pod-runner: ${msg}\n`);
const api = new ApiClient(values.server, values.token);
const node = values.node;

const nodeRes = await api.get(`/api/v1/nodes/${node}`);
if (nodeRes.status !== 200) {
  log(`node ${node} not found (HTTP ${nodeRes.status})`);
  process.exit(1);
}
 
const hostIP = (nodeRes.body.status?.addresses ?? []).find((a: any) => a.type === 'InternalIP')?.address ?? '127.0.0.1';
const digestOf = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');
const digest = digestOf(values.agnhost);
const allocatable = (nodeRes.body.status?.allocatable ?? nodeRes.body.status?.capacity ?? {}) as Record<string, string>;

const kubernetes = await api.get('/api/v1/namespaces/default/services/kubernetes');
const kubernetesService =
  kubernetes.status === 200 ? { host: kubernetes.body.spec.clusterIP as string, port: kubernetes.body.spec.ports[0].port as number } : { host: '10.96.0.1', port: 443 };

const networks = new PodNetworks(values.bridge);
networks.setUp();
// The node's address must reach this runner's kubelet API: a fake node's InternalIP is added to the bridge.
const local = Object.values(networkInterfaces()).some((list) => (list ?? []).some((a) => a.address === hostIP));
if (!local) networks.addHostAddress(hostIP);
let forwarder: ApiForwarder | undefined;
if (values.apiserver !== undefined) {
  const colon = values.apiserver.lastIndexOf(':');
  forwarder = await startApiForwarder(networks.bridge, kubernetesService, { host: values.apiserver.slice(0, colon), port: Number(values.apiserver.slice(colon + 1)) });
  log(`forwarding ${kubernetesService.host}:${kubernetesService.port} to ${values.apiserver}`);
}
const runner = new PodRunner(api, networks, {
  node,
  bind: values['no-bind'] !== true,
  hostIP,
  programs: { agnhost: values.agnhost, busybox: values.busybox, sampleApiserver: values['sample-apiserver'], etcd: values.etcd },
  imageIDs: {
    agnhost: `registry.k8s.io/e2e-test-images/agnhost@sha256:${digest}`,
    pause: `registry.k8s.io/pause@sha256:${digest}`,
    busybox: `registry.k8s.io/e2e-test-images/busybox@sha256:${digestOf(values.busybox ?? (existsSync('/bin/busybox') ? '/bin/busybox' : '/usr/bin/busybox'))}`,
    'sample-apiserver': values['sample-apiserver'] === undefined ? '' : `registry.k8s.io/e2e-test-images/sample-apiserver@sha256:${digestOf(values['sample-apiserver'])}`,
    etcd: values.etcd === undefined ? '' : `registry.k8s.io/etcd@sha256:${digestOf(values.etcd)}`,
  },
  workDir: values['work-dir'] ?? mkdtempSync(join(tmpdir(), 'pod-runner-')),
  allocatable,
  log,
});
const kubeletApi = await startKubeletApi(hostIP, Number(values['kubelet-port']), (ns, pod, container, previous) => runner.containerLogs(ns, pod, container, previous),
  (ns, pod, container, argv) => runner.execInPod(ns, pod, container, argv),
);
const endpoint = await api.mergePatch(`/api/v1/nodes/${node}/status`, { status: { daemonEndpoints: { kubeletEndpoint: { Port: kubeletApi.port } } } });
if (endpoint.status !== 200) log(`node ${node}: writing the kubelet port: HTTP ${endpoint.status}`);
log(`kubelet API (container logs, exec) on ${hostIP}:${kubeletApi.port}`);
const stopHeartbeat = startNodeHeartbeat(api, node, log);
runner.start();
log(`running pods of node ${node} (host IP ${hostIP}) on bridge ${networks.bridge}`);

let stopping = false;
const shutDown = (): void => {
  if (stopping) return;
  stopping = true;
  stopHeartbeat();
  void runner
    .shutDown()
    .catch((err: unknown) => log(`shutting down: ${String(err)}`))
    .finally(() => {
      forwarder?.stop();
      kubeletApi.server.close();
      networks.tearDown();
      log('stopped');
      process.exit(0);
    });
};
process.on('SIGTERM', shutDown);
process.on('SIGINT', shutDown);
