import type { Obj } from '../api/object-util.js';
import type { ChangeEvent, Storage } from './storage.js';
import { parsedObject } from './parsed-changes.js';

/** One change a collection applied to its cache: the object before and after (undefined when absent). */
export interface CollectionChange {
  type: string;
  key: string;
  namespace: string;
  previous: Obj | undefined;
  current: Obj | undefined;
}

/**
 * A change's object as the process's other readers of the change parse it (parsed-changes.ts), so
 * a change is parsed once however many collections and watches follow its type. One that does not
 * decode as a stored object is parsed on its own (JSON.parse's error, as before).
 */
function sharedObject(e: ChangeEvent): Obj {
  return parsedObject(e) ?? (JSON.parse(e.json) as Obj);
}

function namespaceOfKey(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? '' : key.slice(0, slash);
}

/**
 * An informer over one storage type: a list, then the change stream from the list's version, kept
 * in a map by namespace and key. Every change is applied to the map before `onChange` sees it, in
 * the stream's order. When the stream is lost (history trimmed past an unread change) the
 * collection lists again and reports every object as changed, so its owner resyncs; it stops when
 * `signal` aborts. The objects it holds and reports are shared with the process's other readers of
 * the same changes (watch selectors and frames, other collections): never mutate them.
 */
export class WatchedCollection {
  private readonly byNamespace = new Map<string, Map<string, Obj>>();

  constructor(
    private readonly storage: Storage,
    readonly type: string,
    private readonly onChange: (change: CollectionChange) => void,
    private readonly signal: AbortSignal,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Lists and starts watching; resolves once the cache holds the listed state. */
  async start(): Promise<void> {
    const watchAbort = new AbortController();
    const stopWatch = (): void => watchAbort.abort();
    this.signal.addEventListener('abort', stopWatch, { once: true });
    const listed = await this.storage.list(this.type);
    const seen = new Set<string>();
    for (const item of listed.items) {
      seen.add(item.key);
      this.apply(item.key, JSON.parse(item.json) as Obj);
    }
    for (const [, objects] of this.byNamespace) for (const key of [...objects.keys()]) if (!seen.has(key)) this.apply(key, undefined);
    await this.storage.watch(
      this.type,
      listed.resourceVersion,
      (e) => this.apply(e.key, e.type === 'DELETED' ? undefined : sharedObject(e)),
      watchAbort.signal,
      () => {
        stopWatch();
        this.signal.removeEventListener('abort', stopWatch);
        if (!this.signal.aborted) this.start().catch(this.onError);
      },
    );
  }

  /** The cached object under `key`. */
  get(key: string): Obj | undefined {
    return this.byNamespace.get(namespaceOfKey(key))?.get(key);
  }

  /** The cached objects of one namespace. */
  inNamespace(namespace: string): Iterable<Obj> {
    return this.byNamespace.get(namespace)?.values() ?? [];
  }

  private apply(key: string, current: Obj | undefined): void {
    const namespace = namespaceOfKey(key);
    let objects = this.byNamespace.get(namespace);
    const previous = objects?.get(key);
    if (current === undefined) {
      if (previous === undefined) return;
      objects?.delete(key);
      if (objects?.size === 0) this.byNamespace.delete(namespace);
    } else {
      if (objects === undefined) {
        objects = new Map();
        this.byNamespace.set(namespace, objects);
      }
      objects.set(key, current);
    }
    this.onChange({ type: this.type, key, namespace, previous, current });
  }
}

/**
 * A WatchedCollection for readers that fall back to live reads (kube's admission plugins reading
 * their informers): `listed()` starts it on first use and answers it only once it holds the listed
 * state; before that, after `signal` aborts, and after its stream is lost for good (`onDropped` is
 * told; the next call starts a new one), it answers undefined.
 */
export class LazyWatchedCollection {
  private collection: WatchedCollection | undefined;
  private ready = false;

  constructor(
    private readonly storage: Storage,
    private readonly type: string,
    private readonly signal: AbortSignal,
    private readonly onDropped: () => void = () => undefined,
  ) {}

  listed(): WatchedCollection | undefined {
    if (this.signal.aborted) return undefined;
    if (this.collection === undefined) {
      const collection = new WatchedCollection(
        this.storage,
        this.type,
        () => undefined,
        this.signal,
        () => this.drop(),
      );
      this.collection = collection;
      // Listing happens beside the caller, which reads live until it is done.
      collection.start().then(
        () => (this.ready = this.collection === collection),
        () => this.drop(),
      );
    }
    return this.ready ? this.collection : undefined;
  }

  private drop(): void {
    this.collection = undefined;
    this.ready = false;
    this.onDropped();
  }
}
