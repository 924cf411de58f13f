/**
 * The part of kube-controller-manager's node-lifecycle-controller that works without kubelets: the
 * NoSchedule tainting pass. Every Node's condition taints (`not-ready` for Ready False,
 * `unreachable` for Ready Unknown, `memory-pressure`, `disk-pressure`, `pid-pressure`,
 * `network-unavailable` for those conditions True, `unschedulable` for `spec.unschedulable`) are
 * added when missing and removed when stale, so the `not-ready` taint TaintNodesByCondition puts on
 * a new Node goes once its conditions say nothing against it. There is no heartbeat monitoring and
 * no NoExecute eviction: nothing marks a silent node Unknown. Writes are compare-and-swap on the
 * stored Node; a lost race is decided again from the newer object. Run it in one process per storage.
 */
import type { Obj } from '../api/object-util.js';
import { logger } from '../logging/logger.js';
import { reconciledTaints } from '../nodes/node-condition-taints.js';
import { type Storage } from '../storage/storage.js';
import { asObject } from '../api/values.js';
import { WatchedCollection } from '../storage/watched-collection.js';
import { WorkQueue, type WorkOutcome } from './work-queue.js';
import { StorageError } from '../api/storage-error.js';

/** Storage type of Nodes. */
const NODES = 'nodes';

export class NodeLifecycleController {
  private readonly abort = new AbortController();
  private readonly nodes: WatchedCollection;
  private readonly queue: WorkQueue<string>;

  constructor(private readonly storage: Storage) {
    this.nodes = new WatchedCollection(storage, NODES, (c) => this.queue.add(c.key), this.abort.signal, this.report);
    this.queue = new WorkQueue(
      (key) => this.sync(key),
      (key, err) => this.report(err, key),
    );
  }

  /** Brings every Node's taints in line, then follows changes until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    signal.addEventListener('abort', () => this.abort.abort(), { once: true });
    await this.nodes.start();
    await this.queue.run(2, this.abort.signal);
  }

  private readonly report = (err: unknown, key?: string): void => {
    if (this.abort.signal.aborted) return;
    logger.warn('node-lifecycle-controller', { node: key, error: err instanceof Error ? err.message : String(err) });
  };

  private async sync(key: string): Promise<WorkOutcome> {
    const stored = await this.storage.get(NODES, key);
    if (stored === undefined) return 'done';
    const node = JSON.parse(stored.json) as Obj;
    const taints = reconciledTaints(node);
    if (taints === undefined) return 'done';
    const spec = asObject(node.spec);
    if (taints.length === 0) delete spec.taints;
    else spec.taints = taints;
    node.spec = spec;
    try {
      await this.storage.update(NODES, key, node, stored.resourceVersion);
    } catch (err) {
      if (err instanceof StorageError && err.code === 'NotFound') return 'done';
      if (err instanceof StorageError && err.code === 'Conflict') return 'retry';
      throw err;
    }
    return 'done';
  }
}
