/**
 * The protobuf message bytes of list items (without the list's tag and length), keyed by the JSON
 * text they were encoded from, so that a
 * LIST repeated over unchanged objects (informers relisting, controllers resyncing, every client-go
 * component starting) neither parses nor encodes them again. For one item message and view, the
 * JSON text is the whole identity of an item's encoding, so an entry is never stale: a changed
 * object has another text and misses.
 *
 * Entries are found by a short fingerprint of the text, then the text itself (see `fingerprint`).
 *
 * Bounded: each entry counts its bytes, its text's length and its key's (the entry may hold the only
 * reference left to an old version's text), all caches together at most BUDGET; past it the cache
 * being filled drops its oldest entries, and when that is not enough every cache is emptied.
 */

import { Gauge } from 'prom-client';
import { metricsRegistry } from '../../metrics/metrics.js';

/** Budget of all item caches together: the encoded items and texts of about 15,000 typical Pods. */
const BUDGET = 128 * 1024 * 1024;

let total = 0;
/** Every cache, by item message, then by view. */
const caches = new Map<string, Map<string, EncodedItems>>();

/** Texts up to this long are their own key; longer ones are keyed by `fingerprint`. */
const WHOLE_KEY = 320;

/**
 * A short stand-in for a JSON text as a map key. A map hashes a string key whole the first time it
 * meets that string, and a change's text is a new string each time it is read from storage: for a
 * Pod of a few kilobytes that is microseconds per lookup, this reads a few hundred characters.
 * Texts that share a fingerprint (versions of one object of the same length, differing in the
 * middle) are told apart by comparing them whole. A long text's fingerprint starts with a digit, so
 * it is never a short text (which starts with `{`).
 */
function fingerprint(json: string): string {
  return json.length <= WHOLE_KEY ? json : `${json.length}:${json.slice(0, 192)}${json.slice(-96)}`;
}

/** One cached item; `next` chains the items whose texts share a fingerprint. */
interface Entry {
  json: string;
  bytes: Buffer;
  cost: number;
  next: Entry | undefined;
}

/** The cached items of one item message seen through one view. */
export class EncodedItems {
  private readonly entries = new Map<string, Entry>();
  private size = 0;

  get(json: string): Buffer | undefined {
    for (let e = this.entries.get(fingerprint(json)); e !== undefined; e = e.next) if (e.json === json) return e.bytes;
    return undefined;
  }

  set(json: string, bytes: Buffer): void {
    const key = fingerprint(json);
    const cost = bytes.length + json.length + (key === json ? 0 : key.length);
    if (cost > BUDGET / 16) return;
    const first = this.entries.get(key);
    for (let e = first; e !== undefined; e = e.next) if (e.json === json) return;
    this.entries.set(key, { json, bytes, cost, next: first });
    this.size += cost;
    total += cost;
    if (total <= BUDGET) return;
    for (const [k, chain] of this.entries) {
      if (total <= BUDGET || k === key) break;
      this.entries.delete(k);
      for (let e: Entry | undefined = chain; e !== undefined; e = e.next) {
        this.size -= e.cost;
        total -= e.cost;
      }
    }
    if (total > BUDGET) for (const views of caches.values()) for (const c of views.values()) c.clear();
  }

  /** Drops the entry of `json`, if any. */
  delete(json: string): void {
    const key = fingerprint(json);
    let before: Entry | undefined;
    for (let e = this.entries.get(key); e !== undefined; before = e, e = e.next) {
      if (e.json !== json) continue;
      if (before !== undefined) before.next = e.next;
      else if (e.next !== undefined) this.entries.set(key, e.next);
      else this.entries.delete(key);
      this.size -= e.cost;
      total -= e.cost;
      return;
    }
  }

  clear(): void {
    this.entries.clear();
    total -= this.size;
    this.size = 0;
  }
}

/** The cache of items of message MESSAGE seen through VIEW ('' for the whole object). */
export function encodedItemsFor(message: string, view: string): EncodedItems {
  let views = caches.get(message);
  if (views === undefined) {
    views = new Map();
    caches.set(message, views);
  }
  let c = views.get(view);
  if (c === undefined) {
    c = new EncodedItems();
    views.set(view, c);
  }
  return c;
}

/** Drops `json`'s entries of item message `message` in every view: a version no LIST serves again. */
export function forgetItem(message: string, json: string): void {
  const views = caches.get(message);
  if (views !== undefined) for (const c of views.values()) c.delete(json);
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
