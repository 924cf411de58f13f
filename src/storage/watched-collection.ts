import type { Obj } from '../api/object-util.js';
import type { ChangeEvent, Storage } from './storage.js';
import { parsedObject } from './parsed-changes.js';

/**
 * One change a collection applied to its cache: the object before and after (undefined when absent).
 * The objects are parsed from their stored text when first read (and kept), so a change nobody looks
 * into costs no parse; `mentions` lets a reader skip both on the text alone.
 */
export interface CollectionChange {
  readonly type: string;
  readonly key: string;
  readonly namespace: string;
  readonly previous: Obj | undefined;
  readonly current: Obj | undefined;
  /** Whether the change removed the key (`current` is undefined); answered without parsing. */
  readonly removed: boolean;
  /**
   * Whether either object's stored text contains `fragment` (e.g. `"persistentVolumeClaim"`); when
   * false, no field of either holds it.
   */
  mentions(fragment: string): boolean;
}

/**
 * An object a collection holds: its stored text and the change that carried it, if any, parsed once,
 * on first read, as the process's other readers of the same change parse it (parsed-changes.ts), so a
 * change is parsed at most once however many collections and watches follow its type. One that does
 * not decode as a stored object is parsed on its own (JSON.parse's error, as before).
 */
class HeldObject {
  private parsed: Obj | undefined;

  constructor(
    readonly json: string,
    private readonly event: ChangeEvent | undefined,
  ) {}

  get object(): Obj {
    this.parsed ??= (this.event !== undefined ? parsedObject(this.event) : undefined) ?? (JSON.parse(this.json) as Obj);
    return this.parsed;
  }
}

class AppliedChange implements CollectionChange {
  constructor(
    readonly type: string,
    readonly key: string,
    readonly namespace: string,
    private readonly before: HeldObject | undefined,
    private readonly after: HeldObject | undefined,
  ) {}

  get previous(): Obj | undefined {
    return this.before?.object;
  }

  get current(): Obj | undefined {
    return this.after?.object;
  }

  get removed(): boolean {
    return this.after === undefined;
  }

  mentions(fragment: string): boolean {
    return this.before?.json.includes(fragment) === true || this.after?.json.includes(fragment) === true;
  }
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
 * `signal` aborts. Objects are held as their stored text until first read. The objects it holds and
 * reports are shared with the process's other readers of the same changes (watch selectors and
 * frames, other collections): never mutate them.
 */
export class WatchedCollection {
  private readonly byNamespace = new Map<string, Map<string, HeldObject>>();

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
      this.apply(item.key, new HeldObject(item.json, undefined));
    }
    for (const [, objects] of this.byNamespace) for (const key of [...objects.keys()]) if (!seen.has(key)) this.apply(key, undefined);
    await this.storage.watch(
      this.type,
      listed.resourceVersion,
      (e) => this.apply(e.key, e.type === 'DELETED' ? undefined : new HeldObject(e.json, e)),
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
    return this.byNamespace.get(namespaceOfKey(key))?.get(key)?.object;
  }

  /** Whether the cache holds any object of `namespace` (nothing is parsed). */
  hasNamespace(namespace: string): boolean {
    return this.byNamespace.has(namespace);
  }

  /** The cached objects of one namespace. */
  *inNamespace(namespace: string): Iterable<Obj> {
    const objects = this.byNamespace.get(namespace);
    if (objects !== undefined) for (const cached of objects.values()) yield cached.object;
  }

  private apply(key: string, current: HeldObject | undefined): void {
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
    this.onChange(new AppliedChange(this.type, key, namespace, previous, current));
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
