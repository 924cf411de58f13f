import { WatchedCollection, type CollectionChange } from '../storage/watched-collection.js';
import type { Storage } from '../storage/storage.js';
import { API_SERVICES_TYPE, apiServiceInfoOf, type ApiServiceInfo } from './api-service.js';

/** Called after the registry applied a change: the APIService before and after (undefined when absent). */
export type ApiServiceListener = (previous: ApiServiceInfo | undefined, current: ApiServiceInfo | undefined) => void;

/**
 * This process's view of the stored APIServices, kept current by their change stream (as every
 * process watches the webhook configurations), so every worker and pod proxies what any of them
 * registered. Lookups are synchronous map reads; `generation` moves on every change, so documents
 * derived from the APIServices (discovery) can be cached by it.
 */
export class ApiServiceRegistry {
  private readonly byName = new Map<string, ApiServiceInfo>();
  /** APIServices with a service reference, by `group/version`. */
  private readonly remoteByGroupVersion = new Map<string, ApiServiceInfo>();
  private readonly listeners: ApiServiceListener[] = [];
  private readonly collection: WatchedCollection;
  private started: Promise<void> | undefined;
  /** Increases on every change. */
  generation = 0;

  constructor(storage: Storage, signal: AbortSignal, onError: (err: unknown) => void) {
    this.collection = new WatchedCollection(storage, API_SERVICES_TYPE, (change) => this.apply(change), signal, onError);
  }

  /** Lists and starts watching; resolves once the stored APIServices are known. Idempotent. */
  start(): Promise<void> {
    this.started ??= this.collection.start();
    return this.started;
  }

  /** Calls `listener` after every change (the listed APIServices arrive as changes too). */
  onChange(listener: ApiServiceListener): void {
    this.listeners.push(listener);
  }

  /** Whether any APIService names a service: when none does, nothing is proxied. */
  get hasRemote(): boolean {
    return this.remoteByGroupVersion.size > 0;
  }

  /** The APIService with a service reference that serves GROUP/VERSION, if any. */
  remote(group: string, version: string): ApiServiceInfo | undefined {
    return this.remoteByGroupVersion.get(`${group}/${version}`);
  }

  /** Every APIService with a service reference. */
  remotes(): ApiServiceInfo[] {
    return [...this.remoteByGroupVersion.values()];
  }

  /** Every APIService, local ones included. */
  all(): ApiServiceInfo[] {
    return [...this.byName.values()];
  }

  /** The APIService named `name`, if stored. */
  get(name: string): ApiServiceInfo | undefined {
    return this.byName.get(name);
  }

  private apply(change: CollectionChange): void {
    const previous = this.byName.get(change.key);
    const current = change.current === undefined ? undefined : apiServiceInfoOf(change.current);
    if (previous?.service !== undefined) this.remoteByGroupVersion.delete(`${previous.group}/${previous.version}`);
    if (current === undefined) this.byName.delete(change.key);
    else {
      this.byName.set(change.key, current);
      if (current.service !== undefined) this.remoteByGroupVersion.set(`${current.group}/${current.version}`, current);
    }
    this.generation++;
    for (const listener of this.listeners) listener(previous, current);
  }
}
