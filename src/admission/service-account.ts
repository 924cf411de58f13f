import type { ResourceInfo } from '../api/resource-info.js';
import { forbidden } from '../api/errors.js';
import type { Obj } from '../api/object-util.js';
import type { Storage } from '../storage/storage.js';
import { generateNameFrom } from '../validation/generate-name.js';
import { asObject, asString } from '../api/values.js';
import { objects } from '../validation/value-access.js';
import { podReferences } from '../auth/node/pod-references.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admittedPod, podSpecOf } from './pod-admission-target.js';

const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';
const TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
const TOKEN_VOLUME_PREFIX = 'kube-api-access-';
/** How often, and how far apart, a missing `default` account is looked up again (kube: 10 tries, 100-200 ms). */
const DEFAULT_ACCOUNT_ATTEMPTS = 10;

/** kube's projected volume for a pod's API credentials: a bound token, the cluster CA and the namespace. */
function tokenVolume(name: string): Obj {
  return {
    name,
    projected: {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    },
  };
}

/**
 * kube's ServiceAccount plugin for Pod creates: the pod runs as `default` unless it names an account;
 * the account must exist in the namespace (403 `error looking up service account ...` otherwise; the
 * `default` account is waited for briefly, as it is created with its namespace); unless the pod or
 * the account opts out, every container mounts a `kube-api-access-*` projected token volume; the
 * account's imagePullSecrets are copied to a pod that has none. Mirror pods may not name an account.
 */
export class ServiceAccountAdmission implements AdmissionPlugin {
  readonly name = 'ServiceAccount';

  constructor(
    private readonly storage: Storage,
    private readonly sleep = (ms: number) => new Promise((r) => setTimeout(r, ms)),
  ) {}

  private async account(namespace: string, name: string): Promise<Obj | undefined> {
    const attempts = name === 'default' ? DEFAULT_ACCOUNT_ATTEMPTS : 1;
    for (let i = 0; i < attempts; i++) {
      if (i > 0) await this.sleep(100 + Math.floor(Math.random() * 100));
      const stored = await this.storage.get('serviceaccounts', `${namespace}/${name}`);
      if (stored !== undefined) return JSON.parse(stored.json) as Obj;
    }
    return undefined;
  }

  /** Pod creates only. */
  handles(operation: AdmissionAttributes['operation'], info: ResourceInfo, subresource: string): boolean {
    return operation === 'CREATE' && subresource === '' && info.group === '' && info.resource === 'pods';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE') return;
    const pod = admittedPod(a);
    if (pod === undefined) return;
    const spec = podSpecOf(pod);
    const annotations = (pod.metadata as Obj | undefined)?.annotations as Obj | undefined;
    if (annotations?.[MIRROR_POD_ANNOTATION] !== undefined) {
      if (asString(spec.serviceAccountName) !== '') throw forbidden({ group: '', resource: 'pods' }, a.name, 'a mirror pod may not reference service accounts');
      if (podReferences(pod).secrets.length > 0) throw forbidden({ group: '', resource: 'pods' }, a.name, 'a mirror pod may not reference secrets');
      const projections = objects(spec.volumes).flatMap((v) => objects(asObject(v.projected).sources));
      if (projections.some((p) => p.serviceAccountToken !== undefined)) {
        throw forbidden({ group: '', resource: 'pods' }, a.name, 'a mirror pod may not use ServiceAccountToken volume projections');
      }
      return;
    }
    if (asString(spec.serviceAccountName) === '') spec.serviceAccountName = 'default';
    const name = asString(spec.serviceAccountName);
    spec.serviceAccount = name;
    const account = await this.account(a.namespace, name);
    if (account === undefined) {
      throw forbidden({ group: '', resource: 'pods' }, a.name, `error looking up service account ${a.namespace}/${name}: serviceaccount "${name}" not found`);
    }
    const automount =
      typeof spec.automountServiceAccountToken === 'boolean'
        ? spec.automountServiceAccountToken
        : typeof account.automountServiceAccountToken === 'boolean'
          ? account.automountServiceAccountToken
          : true;
    if (automount) mountToken(spec);
    if (objects(spec.imagePullSecrets).length === 0 && objects(account.imagePullSecrets).length > 0) {
      spec.imagePullSecrets = objects(account.imagePullSecrets).map((s) => ({ name: asString(s.name) }));
    }
  }
}

/** mountServiceAccountToken: one token volume, mounted read-only into every container lacking the path. */
function mountToken(spec: Obj): void {
  const volumes = objects(spec.volumes);
  const existing = volumes.find((v) => asString(v.name).startsWith(TOKEN_VOLUME_PREFIX));
  const volumeName = existing !== undefined ? asString(existing.name) : generateNameFrom(TOKEN_VOLUME_PREFIX);
  let needsVolume = false;
  for (const key of ['initContainers', 'containers'] as const) {
    for (const container of objects(spec[key])) {
      const mounts = objects(container.volumeMounts);
      if (mounts.some((m) => m.mountPath === TOKEN_MOUNT_PATH)) continue;
      container.volumeMounts = [...mounts, { name: volumeName, readOnly: true, mountPath: TOKEN_MOUNT_PATH }];
      needsVolume = true;
    }
  }
  if (existing === undefined && needsVolume) spec.volumes = [...volumes, tokenVolume(volumeName)];
}
