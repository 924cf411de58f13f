import { randomUUID } from 'node:crypto';
import { canonicalize, nowTimestamp, type Obj } from '../handlers/object-util.js';
import { StorageError, type Storage } from '../storage/storage.js';

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

/**
 * Creates what a fresh kube-apiserver has: the system namespaces, the `default/kubernetes` Service
 * and the system PriorityClasses. Idempotent, so every worker may run it at start.
 */
export async function bootstrapCluster(storage: Storage, advertisePort: number): Promise<void> {
  for (const name of SYSTEM_NAMESPACES) {
    await createIfAbsent(storage, 'namespaces', name, systemObject('Namespace', 'v1', {
      name, labels: { 'kubernetes.io/metadata.name': name },
    }, { spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } }));
  }
  for (const [name, value, description] of SYSTEM_PRIORITY_CLASSES) {
    await createIfAbsent(storage, 'priorityclasses.scheduling.k8s.io', name, systemObject('PriorityClass', 'scheduling.k8s.io/v1', {
      name, generation: 1,
    }, { value, description, preemptionPolicy: 'PreemptLowerPriority' }));
  }
  await createIfAbsent(storage, 'services', 'default/kubernetes', systemObject('Service', 'v1', {
    name: 'kubernetes', namespace: 'default', labels: { component: 'apiserver', provider: 'kubernetes' },
  }, {
    spec: {
      ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: advertisePort }],
      clusterIP: '10.96.0.1', clusterIPs: ['10.96.0.1'], type: 'ClusterIP', sessionAffinity: 'None',
      ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', internalTrafficPolicy: 'Cluster',
    },
    status: { loadBalancer: {} },
  }));
}
