import { ApiError, forbidden, notFound } from '../api/errors.js';
import { isObject, type Obj } from '../api/object-util.js';
import type { Storage } from '../storage/storage.js';
import { LazyWatchedCollection } from '../storage/watched-collection.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';

/** Namespaces that can never be deleted, as in kube-apiserver. */
export const IMMORTAL_NAMESPACES = new Set(['default', 'kube-system', 'kube-public']);

/** How long a namespace whose deletion this server admitted is read live rather than from the cache (kube's 30 s). */
const FORCE_LIVE_LOOKUP_MS = 30_000;

/**
 * kube's NamespaceLifecycle plugin: namespaced objects are created only in an existing namespace
 * that is not terminating, and the system namespaces cannot be deleted.
 *
 * Given a signal, it answers from a watched cache of the namespaces, as kube's plugin answers from
 * its informer: a namespace missing from the cache is read live (it may have been created a moment
 * ago), and so is one whose deletion this server admitted in the last 30 s. Until the cache has
 * listed, and without a signal, every lookup is live.
 */
export class NamespaceLifecycle implements AdmissionPlugin {
  readonly name = 'NamespaceLifecycle';
  private readonly cache: LazyWatchedCollection | undefined;
  private readonly forceLive = new Map<string, number>();

  constructor(
    private readonly storage: Storage,
    signal?: AbortSignal,
    private readonly now: () => number = Date.now,
  ) {
    this.cache = signal === undefined ? undefined : new LazyWatchedCollection(storage, 'namespaces', signal);
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const qr = { group: a.info.group, resource: a.info.resource };
    const isNamespace = a.info.group === '' && a.info.resource === 'namespaces';
    if (a.operation === 'DELETE' && isNamespace) {
      if (IMMORTAL_NAMESPACES.has(a.name)) throw forbidden(qr, a.name, 'this namespace may not be deleted');
      const now = this.now();
      for (const [name, until] of this.forceLive) if (until <= now) this.forceLive.delete(name);
      this.forceLive.set(a.name, now + FORCE_LIVE_LOOKUP_MS);
    }
    if (a.operation !== 'CREATE' || !a.info.namespaced || a.namespace === '') return;
    const ns = this.lookup(a.namespace) ?? (await this.live(a.namespace));
    if (ns === undefined) throw notFound({ group: '', resource: 'namespaces' }, a.namespace);
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

  /** The cached namespace, or undefined when it must be read live (no cache yet, missing, or recently deleted here). */
  private lookup(name: string): Obj | undefined {
    const until = this.forceLive.get(name);
    if (until !== undefined) {
      if (until > this.now()) return undefined;
      this.forceLive.delete(name);
    }
    return this.cache?.listed()?.get(name);
  }

  private async live(name: string): Promise<Obj | undefined> {
    const stored = await this.storage.get('namespaces', name);
    return stored === undefined ? undefined : (JSON.parse(stored.json) as Obj);
  }
}
