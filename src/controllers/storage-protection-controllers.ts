import { metadataOf, stringField, type Obj } from '../api/object-util.js';
import { PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER } from '../admission/storage-object-in-use-protection.js';
import { logger } from '../logging/logger.js';
import type { ServerContext } from '../rest/server-context.js';
import { asObject } from '../api/values.js';
import { objects } from '../validation/value-access.js';
import { finalizersOf } from './garbage-collector-graph.js';
import { GarbageCollectorStore } from './garbage-collector-store.js';
import { WatchedCollection } from '../storage/watched-collection.js';
import { WorkQueue } from './work-queue.js';

/**
 * What a protection controller decides for one object: whether something still uses it. The
 * controller then keeps its finalizer on (adding it when missing) or, once the object is being
 * deleted and unused, removes it, which lets the delete finish.
 */
abstract class ProtectionController {
  private readonly abort = new AbortController();
  private readonly queue: WorkQueue<string>;
  private readonly store: GarbageCollectorStore;
  protected readonly protectedObjects: WatchedCollection;

  constructor(
    server: ServerContext,
    readonly name: string,
    private readonly kind: string,
    type: string,
    private readonly finalizer: string,
  ) {
    this.store = new GarbageCollectorStore(server);
    this.queue = new WorkQueue(
      (key) => this.sync(key),
      (key, err) => this.report(err, key),
    );
    this.protectedObjects = new WatchedCollection(
      server.storage,
      type,
      (c) => this.queue.add(c.key),
      this.abort.signal,
      (err) => this.report(err),
    );
  }

  protected get signal(): AbortSignal {
    return this.abort.signal;
  }

  protected enqueue(key: string): void {
    this.queue.add(key);
  }

  protected abstract inUse(object: Obj): boolean;

  /** Other collections to list before the protected objects. */
  protected async startDependencies(): Promise<void> {}

  async run(signal: AbortSignal): Promise<void> {
    signal.addEventListener('abort', () => this.abort.abort(), { once: true });
    await this.startDependencies();
    await this.protectedObjects.start();
    await this.queue.run(1, this.abort.signal);
  }

  private report(err: unknown, key?: string): void {
    logger.error('protection controller failed', { controller: this.name, key, error: err instanceof Error ? err.message : String(err) });
  }

  private async sync(key: string): Promise<'done' | 'retry'> {
    const current = this.protectedObjects.get(key);
    if (current === undefined) return 'done';
    const meta = metadataOf(current);
    const has = finalizersOf(meta).includes(this.finalizer);
    const deleting = meta.deletionTimestamp != null;
    let edit: ((m: Obj) => boolean) | undefined;
    if (deleting && has && !this.inUse(current)) edit = (m) => this.without(m);
    else if (!deleting && !has) edit = (m) => this.with(m);
    if (edit === undefined) return 'done';
    const identity = {
      apiVersion: 'v1',
      kind: this.kind,
      namespace: stringField(meta, 'namespace'),
      name: stringField(meta, 'name'),
      uid: stringField(meta, 'uid'),
    };
    await this.store.editMetadata(identity, edit);
    return 'done';
  }

  private without(meta: Obj): boolean {
    const finalizers = finalizersOf(meta);
    if (!finalizers.includes(this.finalizer)) return false;
    meta.finalizers = finalizers.filter((f) => f !== this.finalizer);
    return true;
  }

  private with(meta: Obj): boolean {
    const finalizers = finalizersOf(meta);
    if (finalizers.includes(this.finalizer) || meta.deletionTimestamp != null) return false;
    meta.finalizers = [...finalizers, this.finalizer];
    return true;
  }
}

/** The claim names a pod holds on to, as kube's pvc-protection controller reads them (scheduled pods only). */
function claimsUsedBy(pod: Obj): string[] {
  const spec = asObject(pod.spec);
  if (typeof spec.nodeName !== 'string' || spec.nodeName === '') return [];
  const meta = metadataOf(pod);
  const shutDown = meta.deletionTimestamp != null && meta.deletionGracePeriodSeconds === 0;
  const podName = stringField(meta, 'name');
  const names: string[] = [];
  for (const volume of objects(spec.volumes)) {
    const claim = asObject(volume.persistentVolumeClaim).claimName;
    if (typeof claim === 'string') names.push(claim);
    else if (volume.ephemeral != null && !shutDown) names.push(`${podName}-${String(volume.name)}`);
  }
  return names;
}

/**
 * kube-controller-manager's persistentvolumeclaim-protection-controller: a claim being deleted keeps
 * its `kubernetes.io/pvc-protection` finalizer while a scheduled pod of its namespace names it in a
 * volume (or holds it as a generic ephemeral volume), and loses it when none does; claims not being
 * deleted get the finalizer.
 */
export class PvcProtectionController extends ProtectionController {
  private readonly pods: WatchedCollection;

  constructor(server: ServerContext) {
    super(server, 'persistentvolumeclaim-protection-controller', 'PersistentVolumeClaim', 'persistentvolumeclaims', PVC_PROTECTION_FINALIZER);
    this.pods = new WatchedCollection(
      server.storage,
      'pods',
      (c) => {
        // A pod whose text names no claim and no ephemeral volume uses none (and is not parsed).
        if (!c.mentions('"persistentVolumeClaim"') && !c.mentions('"ephemeral"')) return;
        for (const pod of [c.previous, c.current]) if (pod !== undefined) for (const claim of claimsUsedBy(pod)) this.enqueue(`${c.namespace}/${claim}`);
      },
      this.signal,
      (err) => logger.error('pvc-protection pod watch failed', { error: err instanceof Error ? err.message : String(err) }),
    );
  }

  protected override async startDependencies(): Promise<void> {
    await this.pods.start();
  }

  protected inUse(claim: Obj): boolean {
    const meta = metadataOf(claim);
    const name = stringField(meta, 'name');
    for (const pod of this.pods.inNamespace(stringField(meta, 'namespace'))) if (claimsUsedBy(pod).includes(name)) return true;
    return false;
  }
}

/**
 * kube-controller-manager's persistentvolume-protection-controller: a volume being deleted keeps its
 * `kubernetes.io/pv-protection` finalizer while its status says Bound, and loses it otherwise;
 * volumes not being deleted get the finalizer.
 */
export class PvProtectionController extends ProtectionController {
  constructor(server: ServerContext) {
    super(server, 'persistentvolume-protection-controller', 'PersistentVolume', 'persistentvolumes', PV_PROTECTION_FINALIZER);
  }

  protected inUse(volume: Obj): boolean {
    return asObject(volume.status).phase === 'Bound';
  }
}
