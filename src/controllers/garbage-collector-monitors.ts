/**
 * The garbage collector's view of storage: for every served type that can be listed, watched and
 * deleted, a list (the state at one version) followed by a watch from that version, delivered to one
 * sink in each type's order. A watch that loses history (410, trimmed stream) is replaced by a
 * relist, which reports objects that went away meanwhile as deletions. Types that appear later
 * (CustomResourceDefinitions) are picked up by `sync`.
 */
import { metadataOf, stringField, type Obj } from '../api/object-util.js';
import { logger } from '../logging/logger.js';
import type { ResourceInfo } from '../api/resource-info.js';
import { storageTypeOf } from '../api/resource-info.js';
import { type ChangeEvent, type Storage } from '../storage/storage.js';
import type { ResourceCatalog } from '../catalog/resource-catalog.js';
import { StorageError } from '../api/storage-error.js';

/** One observed change: the object's JSON after it, and before it when the stream knows. */
export interface ObservedChange {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  json: string;
  prevJson?: string;
  /** The storage change it comes from (none for a listed object), whose parse readers share. */
  event?: ChangeEvent;
}

/**
 * `metadata.uid` of stored JSON without parsing it all: stored objects are canonical (metadata first,
 * uid before any field that could hold another uid); anything else is parsed.
 */
export function uidOf(json: string): string {
  const at = json.indexOf('"uid":"');
  // Only the text before the uid is searched for owner references (the uid comes early).
  if (at >= 0 && json.lastIndexOf('"ownerReferences"', at) < 0) {
    const start = at + 7;
    const end = json.indexOf('"', start);
    if (end > start) return json.slice(start, end);
  }
  return stringField(metadataOf(JSON.parse(json) as Obj), 'uid');
}

/** Receives changes; for a relist, `present` lists the uids of a type still there. */
export interface ChangeSink {
  change(c: ObservedChange): void;
  /** After a relist of `info`'s type: every observed object of that kind whose uid is not in `present` is gone. */
  relisted(info: ResourceInfo, present: Set<string>): void;
}

/** Types kube's garbage collector ignores (DefaultIgnoredResources). */
const IGNORED = new Set(['events', 'events.events.k8s.io']);

const RELIST_DELAY_MS = 200;

class TypeMonitor {
  private readonly abort = new AbortController();
  private failing = false;

  constructor(
    private readonly storage: Storage,
    readonly info: ResourceInfo,
    private readonly sink: ChangeSink,
  ) {}

  get type(): string {
    return storageTypeOf(this.info);
  }

  stop(): void {
    this.abort.abort();
  }

  /** Lists, then watches from the list's version; `relist` tells the sink to drop what is gone. */
  async start(relist: boolean): Promise<void> {
    const signal = this.abort.signal;
    if (signal.aborted) return;
    const listed = await this.storage.list(this.type);
    this.failing = false;
    const present = new Set<string>();
    for (const item of listed.items) {
      present.add(uidOf(item.json));
      this.sink.change({ type: 'ADDED', json: item.json });
    }
    if (relist) this.sink.relisted(this.info, present);
    const restart = (): void => {
      if (signal.aborted) return;
      setTimeout(() => {
        this.start(true).catch((err: unknown) => this.failed(err));
      }, RELIST_DELAY_MS);
    };
    try {
      await this.storage.watch(
        this.type,
        listed.resourceVersion,
        (e) => this.deliver(e),
        signal,
        () => restart(),
      );
    } catch (err) {
      if (err instanceof StorageError && err.code === 'Gone') restart();
      else throw err;
    }
  }

  /** A failed (re)start is retried: the collector must not stop observing a type. */
  failed(err: unknown): void {
    if (this.abort.signal.aborted) return;
    // One line per outage, not one per retry of every type.
    if (!this.failing)
      logger.warn('garbage collector cannot list or watch a type; retrying', { type: this.type, error: err instanceof Error ? err.message : String(err) });
    this.failing = true;
    setTimeout(() => {
      this.start(true).catch((e: unknown) => this.failed(e));
    }, 1000);
  }

  private deliver(e: ChangeEvent): void {
    this.sink.change(e.prevJson === undefined ? { type: e.type, json: e.json, event: e } : { type: e.type, json: e.json, prevJson: e.prevJson, event: e });
  }
}

/** The set of per-type monitors of one garbage collector. */
export class Monitors {
  private readonly monitors = new Map<string, TypeMonitor>();

  constructor(
    private readonly storage: Storage,
    private readonly catalog: ResourceCatalog,
    private readonly sink: ChangeSink,
    private readonly signal: AbortSignal,
  ) {
    // One listener for every monitor (one per type would pass the signal's listener limit and
    // outlive the monitors of types no longer served).
    signal.addEventListener('abort', () => this.stopAll(), { once: true });
  }

  private stopAll(): void {
    for (const m of this.monitors.values()) m.stop();
  }

  /** One representative served resource per deletable storage type (kube's GetDeletableResources). */
  deletableTypes(): Map<string, ResourceInfo> {
    const out = new Map<string, ResourceInfo>();
    for (const info of this.catalog.all()) {
      if (!['list', 'watch', 'delete'].every((v) => info.verbs.includes(v))) continue;
      const type = storageTypeOf(info);
      if (IGNORED.has(type) || out.has(type)) continue;
      out.set(type, info);
    }
    return out;
  }

  /**
   * Starts monitors for types not yet watched and stops those no longer served. Resolves once the
   * new types' initial lists have been delivered (a type that fails is retried in the background).
   */
  async sync(): Promise<void> {
    if (this.signal.aborted) return;
    const wanted = this.deletableTypes();
    for (const [type, m] of this.monitors) {
      if (!wanted.has(type)) {
        m.stop();
        this.monitors.delete(type);
      }
    }
    const starting: Promise<void>[] = [];
    for (const [type, info] of wanted) {
      if (this.monitors.has(type)) continue;
      const m = new TypeMonitor(this.storage, info, this.sink);
      this.monitors.set(type, m);
      starting.push(m.start(false).catch((err: unknown) => m.failed(err)));
    }
    await Promise.all(starting);
  }
}
