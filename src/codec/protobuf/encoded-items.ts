/**
 * The protobuf message bytes of list items (without the list's tag and length), keyed by the JSON
 * text they were encoded from, so that a
 * LIST repeated over unchanged objects (informers relisting, controllers resyncing, every client-go
 * component starting) neither parses nor encodes them again. For one item message and view, the
 * JSON text is the whole identity of an item's encoding, so an entry is never stale: a changed
 * object has another text and misses.
 *
 * Bounded: each entry counts its bytes and its key's length (the key may be the only reference left
 * to an old version's text), all caches together at most BUDGET; past it the cache being filled
 * drops its oldest entries, and when that is not enough every cache is emptied.
 */

import { Gauge } from 'prom-client';
import { metricsRegistry } from '../../metrics/metrics.js';

/** Budget of all item caches together: the encoded items and texts of about 15,000 typical Pods. */
const BUDGET = 128 * 1024 * 1024;

let total = 0;
const caches = new Map<string, EncodedItems>();

/** The cached items of one item message seen through one view. */
export class EncodedItems {
  private readonly entries = new Map<string, Buffer>();
  private size = 0;

  get(json: string): Buffer | undefined {
    return this.entries.get(json);
  }

  set(json: string, bytes: Buffer): void {
    const cost = bytes.length + json.length;
    if (cost > BUDGET / 16 || this.entries.has(json)) return;
    this.entries.set(json, bytes);
    this.size += cost;
    total += cost;
    if (total <= BUDGET) return;
    for (const [k, v] of this.entries) {
      if (total <= BUDGET || k === json) break;
      this.entries.delete(k);
      const freed = v.length + k.length;
      this.size -= freed;
      total -= freed;
    }
    if (total > BUDGET) for (const c of caches.values()) c.clear();
  }

  /** Drops the entry of `json`, if any. */
  delete(json: string): void {
    const bytes = this.entries.get(json);
    if (bytes === undefined) return;
    this.entries.delete(json);
    const freed = bytes.length + json.length;
    this.size -= freed;
    total -= freed;
  }

  clear(): void {
    this.entries.clear();
    total -= this.size;
    this.size = 0;
  }
}

/** The cache of items of message MESSAGE seen through VIEW ('' for the whole object). */
export function encodedItemsFor(message: string, view: string): EncodedItems {
  const key = `${message}|${view}`;
  let c = caches.get(key);
  if (c === undefined) {
    c = new EncodedItems();
    caches.set(key, c);
  }
  return c;
}

/** Drops `json`'s entries of item message `message` in every view: a version no LIST serves again. */
export function forgetItem(message: string, json: string): void {
  const prefix = `${message}|`;
  for (const [key, c] of caches) if (key.startsWith(prefix)) c.delete(json);
}

/** Bytes held by all caches (entries and their keys), per process; the workers' add up. */
new Gauge({
  name: 'capstan_protobuf_item_cache_bytes',
  help: 'Bytes held by the protobuf encodings of list items kept for the next LIST and watch frame (entries and their JSON texts), per process at most 128 MiB.',
  aggregator: 'sum',
  registers: [metricsRegistry],
  collect() {
    this.set(total);
  },
});
