import { randomUUID } from 'node:crypto';
import { canonicalize, isObject, nowTimestamp, type Obj } from '../api/object-util.js';
import { type Storage } from '../storage/storage.js';
import { StorageError } from '../api/storage-error.js';

/**
 * What kube-controller-manager's serviceaccount controller does for Capstan users who run none: every
 * namespace that is not terminating has a `default` ServiceAccount, created when the namespace
 * appears (and for existing namespaces at start). Creation is create-if-absent, so several processes,
 * or a real kube-controller-manager beside Capstan, never make two.
 */
export class DefaultServiceAccounts {
  private readonly abort = new AbortController();
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly storage: Storage,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  async start(): Promise<void> {
    const existing = await this.storage.list('namespaces');
    await this.storage.watch(
      'namespaces',
      existing.resourceVersion,
      (e) => {
        if (e.type === 'ADDED') this.enqueue(e.json);
      },
      this.abort.signal,
    );
    for (const item of existing.items) this.enqueue(item.json);
    await this.queue;
  }

  stop(): void {
    this.abort.abort();
  }

  private enqueue(namespaceJson: string): void {
    this.queue = this.queue.then(() => this.ensure(namespaceJson)).catch(this.onError);
  }

  private async ensure(namespaceJson: string): Promise<void> {
    if (this.abort.signal.aborted) return;
    const ns = JSON.parse(namespaceJson) as Obj;
    const meta = isObject(ns.metadata) ? ns.metadata : {};
    const name = typeof meta.name === 'string' ? meta.name : '';
    if (name === '' || meta.deletionTimestamp !== undefined) return;
    const key = `${name}/default`;
    if (await this.storage.get('serviceaccounts', key)) return;
    const account = canonicalize(
      {
        metadata: { name: 'default', namespace: name, uid: randomUUID(), creationTimestamp: nowTimestamp() },
      },
      'ServiceAccount',
      'v1',
    );
    try {
      await this.storage.create('serviceaccounts', key, account);
    } catch (err) {
      if (!(err instanceof StorageError && err.code === 'AlreadyExists')) throw err;
    }
  }
}
