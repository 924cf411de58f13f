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

/**
 * Creates what a fresh kube-apiserver has: the system namespaces and the `default/kubernetes`
 * Service. Idempotent, so every worker may run it at start.
 */
export async function bootstrapCluster(storage: Storage, advertisePort: number): Promise<void> {
  for (const name of SYSTEM_NAMESPACES) {
    await createIfAbsent(storage, 'namespaces', name, systemObject('Namespace', 'v1', {
      name, labels: { 'kubernetes.io/metadata.name': name },
    }, { spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } }));
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
