import { ApiError, forbidden, notFound } from '../api/errors.js';
import { isObject, type Obj } from '../api/object-util.js';
import type { Storage } from '../storage/storage.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';

/** Namespaces that can never be deleted, as in kube-apiserver. */
export const IMMORTAL_NAMESPACES = new Set(['default', 'kube-system', 'kube-public']);

/**
 * kube's NamespaceLifecycle plugin: namespaced objects are created only in an existing namespace
 * that is not terminating, and the system namespaces cannot be deleted.
 */
export class NamespaceLifecycle implements AdmissionPlugin {
  readonly name = 'NamespaceLifecycle';

  constructor(private readonly storage: Storage) {}

  async validate(a: AdmissionAttributes): Promise<void> {
    const qr = { group: a.info.group, resource: a.info.resource };
    if (a.operation === 'DELETE' && a.info.group === '' && a.info.resource === 'namespaces' && IMMORTAL_NAMESPACES.has(a.name)) {
      throw forbidden(qr, a.name, 'this namespace may not be deleted');
    }
    if (a.operation !== 'CREATE' || !a.info.namespaced || a.namespace === '') return;
    const stored = await this.storage.get('namespaces', a.namespace);
    if (!stored) throw notFound({ group: '', resource: 'namespaces' }, a.namespace);
    const ns = JSON.parse(stored.json) as Obj;
    const phase = isObject(ns.status) ? ns.status.phase : undefined;
    const deleting = isObject(ns.metadata) && ns.metadata.deletionTimestamp !== undefined && ns.metadata.deletionTimestamp !== null;
    if (phase === 'Terminating' || deleting) {
      const err = forbidden(qr, a.name, `unable to create new content in namespace ${a.namespace} because it is being terminated`);
      throw new ApiError(err.code, err.reason, err.message, {
        ...err.details,
        causes: [{ reason: 'NamespaceTerminating', message: `namespace ${a.namespace} is being terminated`, field: 'metadata.namespace' }],
      });
    }
  }
}
