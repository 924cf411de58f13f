import { isObject, type Obj } from '../../api/object-util.js';
import { WatchedCollection, type CollectionChange } from '../../storage/watched-collection.js';
import type { ResourceCatalog } from '../../catalog/resource-catalog.js';
import { type Storage } from '../../storage/storage.js';
import { typeCheckPolicy } from './policy-type-check.js';
import { VALIDATING_POLICIES } from './validating-policy-admission.js';
import { StorageError } from '../../api/storage-error.js';

/**
 * kube's ValidatingAdmissionPolicy status controller: once per generation of every policy, type
 * checks its expressions against the schemas of the kinds it matches and writes
 * `status.typeChecking` (with `expressionWarnings` when there are any) and
 * `status.observedGeneration`, keeping the conditions others wrote. Writes compare-and-swap on the
 * version read and retry on conflict; run in one process per storage (others racing it are harmless).
 */
export class PolicyStatusController {
  private readonly abort = new AbortController();
  private readonly policies: WatchedCollection;
  private readonly pending = new Set<string>();
  private running = false;

  constructor(
    private readonly storage: Storage,
    private readonly catalog: ResourceCatalog,
    private readonly onError: (err: unknown) => void,
  ) {
    this.policies = new WatchedCollection(storage, VALIDATING_POLICIES, (c) => this.changed(c), this.abort.signal, onError);
  }

  async start(): Promise<void> {
    await this.policies.start();
  }

  stop(): void {
    this.abort.abort();
  }

  private changed(c: CollectionChange): void {
    if (c.current === undefined || !needsStatus(c.current)) return;
    this.pending.add(c.key);
    if (!this.running) void this.drain();
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.pending.size > 0 && !this.abort.signal.aborted) {
        const [key] = this.pending;
        if (key === undefined) break;
        this.pending.delete(key);
        try {
          await this.sync(key);
        } catch (err) {
          this.onError(err);
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** Writes the status of the policy under `key` if its generation has not been observed yet. */
  private async sync(key: string): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const stored = await this.storage.get(VALIDATING_POLICIES, key);
      if (stored === undefined) return;
      const policy = JSON.parse(stored.json) as Obj;
      if (!needsStatus(policy)) return;
      const meta = isObject(policy.metadata) ? policy.metadata : {};
      const warnings = await typeCheckPolicy(this.storage, this.catalog, policy);
      const status: Obj = { ...(isObject(policy.status) ? policy.status : {}) };
      status.observedGeneration = meta.generation;
      status.typeChecking = warnings.length > 0 ? { expressionWarnings: warnings } : {};
      try {
        await this.storage.update(VALIDATING_POLICIES, key, { ...policy, status }, stored.resourceVersion);
        return;
      } catch (err) {
        if (err instanceof StorageError && err.code === 'Conflict') continue;
        throw err;
      }
    }
  }
}

function needsStatus(policy: Obj): boolean {
  const meta = isObject(policy.metadata) ? policy.metadata : {};
  const status = isObject(policy.status) ? policy.status : {};
  return status.observedGeneration !== meta.generation || !isObject(status.typeChecking);
}
