/**
 * The garbage collector's reads and writes: look an object up by its coordinates, delete it with a
 * propagation policy and a uid precondition, edit its metadata (owner references, finalizers) in one
 * compare-and-swap loop, and record Events. Every write is conditional on the object's uid, so a
 * new object that reuses an old name is never touched for the old one.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from '../api/errors.js';
import { canonicalize, isObject, jsonEqual, metadataOf, nowTimestamp, objectKey, stringField, type Obj } from '../api/object-util.js';
import { deleteObject } from '../rest/delete.js';
import type { ResourceInfo } from '../api/resource-info.js';
import { storageTypeOf } from '../api/resource-info.js';
import { guaranteedUpdate, RETRY } from '../rest/guaranteed-update.js';
import { makeTarget, type ServerContext } from '../rest/server-context.js';
import { finalizersOf, groupOf, type ObjectIdentity } from './garbage-collector-graph.js';
import { afterKindDelete } from '../rest/kind-hooks.js';
import { StorageError } from '../api/storage-error.js';

/** An owner reference's apiVersion/kind that no served resource matches (kube's restMappingError): retried later. */
export class RestMappingError extends Error {
  constructor(apiVersion: string, kind: string) {
    super(`unable to get REST mapping for ${apiVersion}/${kind}`);
    this.name = 'RestMappingError';
  }
}

/** What a conditional write found: done, or the object (with that uid) is gone. */
export type WriteResult = 'ok' | 'gone';

/** The object changed its owner references since the decision to delete it: decide again. */
export class StaleDecision extends Error {
  constructor(identity: ObjectIdentity) {
    super(`the owner references of ${identity.kind} ${identity.name} changed; deciding again`);
    this.name = 'StaleDecision';
  }
}

/** Storage access for the garbage collector, over the server's services. */
export class GarbageCollectorStore {
  constructor(private readonly server: ServerContext) {}

  /**
   * The served resource of `apiVersion`/`kind`. Exact for owner references (as kube's REST mapper);
   * `lenient` also accepts another version of the kind's group (identities read from storage carry
   * the storage version, which may not be served).
   */
  resolve(apiVersion: string, kind: string, lenient = false): ResourceInfo {
    const group = groupOf(apiVersion);
    const version = apiVersion.slice(apiVersion.indexOf('/') + 1);
    const exact = this.server.catalog.byKind(group, version, kind);
    if (exact !== undefined) return exact;
    if (lenient) {
      for (const info of this.server.catalog.all()) if (info.group === group && info.kind === kind) return info;
    }
    throw new RestMappingError(apiVersion, kind);
  }

  /** The object at `info`'s coordinates, or undefined when there is none. */
  async get(info: ResourceInfo, namespace: string, name: string): Promise<Obj | undefined> {
    const stored = await this.server.storage.get(storageTypeOf(info), objectKey(info.namespaced ? namespace : '', name));
    return stored === undefined ? undefined : (JSON.parse(stored.json) as Obj);
  }

  /** The current object of a node's identity, or undefined when absent. */
  async latest(identity: ObjectIdentity): Promise<Obj | undefined> {
    return this.get(this.resolve(identity.apiVersion, identity.kind, true), identity.namespace, identity.name);
  }

  /**
   * DELETE of the object with `policy`, only if it still has the identity's uid and is at
   * `resourceVersion` (the version the decision was made on). When only the version moved on and
   * the owner references are still `owners`, the delete is repeated with the uid precondition alone
   * (kube's collector does the same); when the references changed, `StaleDecision` is thrown so the
   * item is decided again.
   */
  async delete(identity: ObjectIdentity, policy: 'Background' | 'Foreground' | 'Orphan', resourceVersion: string, owners: unknown): Promise<WriteResult> {
    const info = this.resolve(identity.apiVersion, identity.kind, true);
    const target = makeTarget(this.server, info, info.namespaced ? identity.namespace : '', identity.name);
    const attempt = async (rv: string | undefined): Promise<WriteResult | 'conflict'> => {
      try {
        await deleteObject(target, identity.name, { dryRun: false, propagationPolicy: policy, preconditions: { uid: identity.uid, resourceVersion: rv } });
        return 'ok';
      } catch (err) {
        if (err instanceof ApiError && err.code === 404) return 'gone';
        if (err instanceof ApiError && err.code === 409) return rv === undefined ? 'gone' : 'conflict';
        throw err;
      }
    };
    const first = await attempt(resourceVersion === '' ? undefined : resourceVersion);
    if (first !== 'conflict') return first;
    const live = await this.get(info, identity.namespace, identity.name);
    if (live === undefined || metadataOf(live).uid !== identity.uid) return 'gone';
    if (!jsonEqual(metadataOf(live).ownerReferences, owners)) throw new StaleDecision(identity);
    const second = await attempt(undefined);
    return second === 'conflict' ? 'gone' : second;
  }

  /**
   * Applies `edit` to the object's metadata (it answers whether it changed anything) and writes the
   * result against the version it read, retrying lost races. A terminating object left without
   * finalizers is removed, as an update that drops the last finalizer does.
   */
  async editMetadata(identity: ObjectIdentity, edit: (meta: Obj) => boolean): Promise<WriteResult> {
    const info = this.resolve(identity.apiVersion, identity.kind, true);
    const target = makeTarget(this.server, info, info.namespaced ? identity.namespace : '', identity.name);
    const storage = this.server.storage;
    return guaranteedUpdate(target, identity.name, async (stored, key): Promise<WriteResult | typeof RETRY> => {
      if (stored === undefined) return 'gone';
      const obj = JSON.parse(stored.json) as Obj;
      const meta = metadataOf(obj);
      if (stringField(meta, 'uid') !== identity.uid) return 'gone';
      const changed = edit(meta);
      if (Array.isArray(meta.finalizers) && meta.finalizers.length === 0) delete meta.finalizers;
      if (Array.isArray(meta.ownerReferences) && meta.ownerReferences.length === 0) delete meta.ownerReferences;
      const grace = typeof meta.deletionGracePeriodSeconds === 'number' ? meta.deletionGracePeriodSeconds : 0;
      const specFinalizers = isObject(obj.spec) && Array.isArray(obj.spec.finalizers) ? obj.spec.finalizers : [];
      const namespaceHeld = info.group === '' && info.resource === 'namespaces' && specFinalizers.length > 0;
      const removeNow = meta.deletionTimestamp !== undefined && finalizersOf(meta).length === 0 && grace === 0 && !namespaceHeld;
      if (!changed && !removeNow) return 'ok';
      try {
        // Emptied finalizers delete the object in one compare-and-swap, as kube's store does: a
        // collector killed mid-way cannot leave it deleted-but-kept.
        if (removeNow) {
          await storage.delete(target.type, key, stored.resourceVersion);
          await afterKindDelete(target, obj);
        } else await storage.update(target.type, key, obj, stored.resourceVersion);
        return 'ok';
      } catch (err) {
        if (err instanceof StorageError && (err.code === 'Conflict' || err.code === 'NotFound')) return RETRY;
        throw err;
      }
    });
  }

  /** Records a core/v1 Event about `involved` as kube's event recorder does (component garbage-collector-controller). */
  async recordEvent(involved: ObjectIdentity, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const namespace = involved.namespace === '' ? 'default' : involved.namespace;
    const now = nowTimestamp();
    const name = `${involved.name}.${(BigInt(Date.now()) * 1_000_000n + BigInt(Math.floor(Math.random() * 1_000_000))).toString(16)}`;
    const event = canonicalize(
      {
        metadata: { name, namespace, uid: randomUUID(), creationTimestamp: now },
        involvedObject: {
          kind: involved.kind,
          namespace: involved.namespace === '' ? undefined : involved.namespace,
          name: involved.name,
          uid: involved.uid,
          apiVersion: involved.apiVersion,
        },
        reason,
        message,
        source: { component: 'garbage-collector-controller' },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
        type,
        eventTime: null,
        reportingComponent: 'garbage-collector-controller',
        reportingInstance: '',
      },
      'Event',
      'v1',
    );
    const involvedObject = event.involvedObject;
    if (isObject(involvedObject) && involvedObject.namespace === undefined) delete involvedObject.namespace;
    await this.server.storage.create('events', objectKey(namespace, name), event);
  }
}
