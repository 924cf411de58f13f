import { isObject, type Obj } from '../../api/object-util.js';
import { WatchedCollection } from '../../storage/watched-collection.js';
import type { Storage } from '../../storage/storage.js';

/** A policy with its compiled form and the bindings that name it, sorted by name. */
export interface PolicyEntry<C> {
  policy: Obj;
  compiled: C;
  bindings: Obj[];
}

function nameOf(o: Obj): string {
  const meta = isObject(o.metadata) ? o.metadata : {};
  return typeof meta.name === 'string' ? meta.name : '';
}

function generationKey(o: Obj): string {
  const meta = isObject(o.metadata) ? o.metadata : {};
  return `${String(meta.uid)}/${String(meta.generation)}`;
}

/**
 * The policies and bindings of one kind (validating or mutating) as this process sees them: watched
 * from storage (so every worker and pod sharing the store sees a change as soon as its change stream
 * delivers it), with each policy compiled once per uid and generation. `ready` settles once the
 * first lists are cached.
 */
export class PolicyCache<C> {
  private readonly policies: WatchedCollection;
  private readonly bindings: WatchedCollection;
  private readonly compiled = new Map<string, { key: string; compiled: C }>();
  private snapshot: PolicyEntry<C>[] | undefined;
  /** Settles once both collections hold their listed state (requests arriving earlier wait for it). */
  readonly ready: Promise<void>;
  private markReady: () => void = () => undefined;
  /** Whether `ready` has settled. */
  private isReady = false;

  constructor(
    storage: Storage,
    policyType: string,
    bindingType: string,
    private readonly compile: (policy: Obj) => C,
    signal: AbortSignal,
    onError: (err: unknown) => void,
  ) {
    this.ready = new Promise((resolve) => {
      this.markReady = resolve;
    });
    const changed = (): void => {
      this.snapshot = undefined;
    };
    this.policies = new WatchedCollection(storage, policyType, changed, signal, onError);
    this.bindings = new WatchedCollection(storage, bindingType, changed, signal, onError);
  }

  /** Lists and starts watching both kinds. */
  async start(): Promise<void> {
    await Promise.all([this.policies.start(), this.bindings.start()]);
    this.isReady = true;
    this.markReady();
  }

  /** True once the first lists are cached and no policy has a binding (a write has nothing to evaluate). */
  idle(): boolean {
    return this.isReady && this.entries().length === 0;
  }

  /** Every policy that has at least one binding, with its bindings; compiled on first use per generation. */
  entries(): PolicyEntry<C>[] {
    if (this.snapshot !== undefined) return this.snapshot;
    const byPolicy = new Map<string, Obj[]>();
    for (const b of this.bindings.inNamespace('')) {
      const spec = isObject(b.spec) ? b.spec : {};
      const policyName = typeof spec.policyName === 'string' ? spec.policyName : '';
      let list = byPolicy.get(policyName);
      if (list === undefined) byPolicy.set(policyName, (list = []));
      list.push(b);
    }
    const out: PolicyEntry<C>[] = [];
    const live = new Set<string>();
    for (const policy of this.policies.inNamespace('')) {
      const name = nameOf(policy);
      live.add(name);
      const bindings = byPolicy.get(name);
      if (bindings === undefined) continue;
      bindings.sort((x, y) => nameOf(x).localeCompare(nameOf(y)));
      out.push({ policy, compiled: this.compiledFor(policy), bindings });
    }
    for (const name of this.compiled.keys()) if (!live.has(name)) this.compiled.delete(name);
    out.sort((x, y) => nameOf(x.policy).localeCompare(nameOf(y.policy)));
    this.snapshot = out;
    return out;
  }

  /** The compiled form of `policy` at its current generation. */
  compiledFor(policy: Obj): C {
    const name = nameOf(policy);
    const key = generationKey(policy);
    const found = this.compiled.get(name);
    if (found !== undefined && found.key === key) return found.compiled;
    const compiled = this.compile(policy);
    this.compiled.set(name, { key, compiled });
    return compiled;
  }
}
