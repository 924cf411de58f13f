import { randomUUID } from 'node:crypto';
import { canonicalize, nowTimestamp, type Obj } from '../api/object-util.js';
import { networkInterfaces } from 'node:os';
import { type Storage } from '../storage/storage.js';
import { IP_ADDRESS_TYPE, ipAddressObject } from '../services/cluster-ip-allocator.js';
import { firstServiceAddress, formatIPv4, ipv4Problem, type IpRange } from '../config/ip-range.js';
import { ensureFlowControlConfiguration } from '../controllers/flowcontrol-bootstrap.js';
import { StorageError } from '../api/storage-error.js';

/** Namespaces every cluster has. */
export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

function systemObject(kind: string, apiVersion: string, metadata: Obj, rest: Obj): Obj {
  return canonicalize({ metadata: { ...metadata, uid: randomUUID(), creationTimestamp: nowTimestamp() }, ...rest }, kind, apiVersion);
}

async function createIfAbsent(storage: Storage, type: string, key: string, obj: Obj): Promise<void> {
  if (await storage.get(type, key)) return;
  try {
    await storage.create(type, key, obj);
  } catch (err) {
    // Another worker created it first.
    if (!(err instanceof StorageError && err.code === 'AlreadyExists')) throw err;
  }
}

/** The PriorityClasses kube-apiserver's scheduling bootstrap creates (name, value, description). */
const SYSTEM_PRIORITY_CLASSES: ReadonlyArray<readonly [string, number, string]> = [
  ['system-cluster-critical', 2000000000, 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.'],
  ['system-node-critical', 2000001000, 'Used for system critical pods that must not be moved from their current node.'],
];

/** The ConfigMap kube-apiserver's legacy service account token tracking keeps in kube-system. */
const LEGACY_TOKEN_TRACKING = 'kube-apiserver-legacy-service-account-token-tracking';

/** Where clients inside the cluster reach this server: the `kubernetes` Service's endpoint. */
export interface AdvertisedEndpoint {
  address: string;
  port: number;
}

/**
 * The address the server announces in the `kubernetes` Endpoints: the bind address when it is one
 * IPv4 address, else (bound to every address) the host's first non-loopback IPv4 address, as
 * kube-apiserver picks its default --advertise-address; 127.0.0.1 when the host has none.
 */
export function advertiseAddressFor(bindAddress: string): string {
  if (ipv4Problem(bindAddress) === undefined && bindAddress !== '0.0.0.0') return bindAddress;
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

/**
 * Creates what a fresh kube-apiserver has: the system namespaces; the ServiceCIDR `kubernetes` over
 * the cluster IP range; the `default/kubernetes` Service on the range's first address (reserved by
 * its IPAddress object like any Service's) with port 443 named https; and, unless the advertised
 * address is a loopback one (kube cannot store those in Endpoints either), its Endpoints and
 * EndpointSlice pointing at this server; the system PriorityClasses; the API priority-and-fairness
 * FlowSchemas and PriorityLevelConfigurations (see ensureFlowControlConfiguration); and the
 * `kube-system/kube-apiserver-legacy-service-account-token-tracking` ConfigMap recording the day
 * tracking started. Idempotent, so every worker may run it at start.
 */
export async function bootstrapCluster(storage: Storage, endpoint: AdvertisedEndpoint, clusterIPRange: IpRange): Promise<void> {
  for (const name of SYSTEM_NAMESPACES) {
    await createIfAbsent(
      storage,
      'namespaces',
      name,
      systemObject(
        'Namespace',
        'v1',
        {
          name,
          labels: { 'kubernetes.io/metadata.name': name },
        },
        { spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } },
      ),
    );
  }
  for (const [name, value, description] of SYSTEM_PRIORITY_CLASSES) {
    await createIfAbsent(
      storage,
      'priorityclasses.scheduling.k8s.io',
      name,
      systemObject(
        'PriorityClass',
        'scheduling.k8s.io/v1',
        {
          name,
          generation: 1,
        },
        { value, description, preemptionPolicy: 'PreemptLowerPriority' },
      ),
    );
  }
  await ensureFlowControlConfiguration(storage);
  // kube-apiserver's legacy token tracking controller: the day since which legacy tokens are tracked.
  await createIfAbsent(
    storage,
    'configmaps',
    `kube-system/${LEGACY_TOKEN_TRACKING}`,
    systemObject('ConfigMap', 'v1', { name: LEGACY_TOKEN_TRACKING, namespace: 'kube-system' }, { data: { since: nowTimestamp().slice(0, 10) } }),
  );
  await createIfAbsent(
    storage,
    'servicecidrs.networking.k8s.io',
    'kubernetes',
    systemObject(
      'ServiceCIDR',
      'networking.k8s.io/v1',
      {
        name: 'kubernetes',
      },
      {
        spec: { cidrs: [clusterIPRange.text] },
        status: {
          conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: nowTimestamp(), reason: '', message: 'Kubernetes default Service CIDR is ready' }],
        },
      },
    ),
  );
  const serviceIP = formatIPv4(firstServiceAddress(clusterIPRange));
  const owner = { namespace: 'default', name: 'kubernetes' };
  await createIfAbsent(storage, IP_ADDRESS_TYPE, serviceIP, ipAddressObject(serviceIP, owner));
  await createIfAbsent(
    storage,
    'services',
    'default/kubernetes',
    systemObject(
      'Service',
      'v1',
      {
        name: 'kubernetes',
        namespace: 'default',
        labels: { component: 'apiserver', provider: 'kubernetes' },
      },
      {
        spec: {
          ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: endpoint.port }],
          clusterIP: serviceIP,
          clusterIPs: [serviceIP],
          type: 'ClusterIP',
          sessionAffinity: 'None',
          ipFamilies: ['IPv4'],
          ipFamilyPolicy: 'SingleStack',
          internalTrafficPolicy: 'Cluster',
        },
        status: { loadBalancer: {} },
      },
    ),
  );
  // kube's validation refuses loopback endpoint addresses, so kube-apiserver advertising one writes none.
  if (endpoint.address.startsWith('127.')) return;
  await createIfAbsent(
    storage,
    'endpoints',
    'default/kubernetes',
    systemObject(
      'Endpoints',
      'v1',
      {
        name: 'kubernetes',
        namespace: 'default',
        labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' },
      },
      {
        subsets: [{ addresses: [{ ip: endpoint.address }], ports: [{ name: 'https', port: endpoint.port, protocol: 'TCP' }] }],
      },
    ),
  );
  await createIfAbsent(
    storage,
    'endpointslices.discovery.k8s.io',
    'default/kubernetes',
    systemObject(
      'EndpointSlice',
      'discovery.k8s.io/v1',
      {
        name: 'kubernetes',
        namespace: 'default',
        generation: 1,
        labels: { 'kubernetes.io/service-name': 'kubernetes' },
      },
      {
        addressType: 'IPv4',
        endpoints: [{ addresses: [endpoint.address], conditions: { ready: true } }],
        ports: [{ name: 'https', protocol: 'TCP', port: endpoint.port }],
      },
    ),
  );
}
