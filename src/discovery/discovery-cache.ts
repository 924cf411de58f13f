/** What derived documents are computed from: a change counter that increases on every change. */
export interface Generational {
  readonly generation: number;
}

/** The registry's change counter: every add/remove increases it, so it keys derived documents. */
export function registryGeneration(catalog: Generational): number {
  return catalog.generation;
}

/**
 * Memoises values derived from the registry. Everything is dropped as soon as the registry's
 * generation moves, so a document is never served from a registry state older than the request.
 * Keys are bounded by the number of discovery paths times formats.
 */
export class GenerationCache<V> {
  private generation = -1;
  private readonly entries = new Map<string, V>();

  constructor(private readonly catalog: Generational) {}

  /**
   * The cached value for `key` at the current generation, built by `build` on a miss. An undefined
   * result is not stored, so lookups of unknown paths cannot grow the cache.
   */
  get(key: string, build: () => V): V {
    const current = registryGeneration(this.catalog);
    if (current !== this.generation) {
      this.entries.clear();
      this.generation = current;
    }
    const hit = this.entries.get(key);
    if (hit !== undefined) return hit;
    const value = build();
    if (value !== undefined) this.entries.set(key, value);
    return value;
  }
}
