import type { Obj } from '../api/object-util.js';
import { strategyFor } from '../strategy/strategies.js';
import type { ResourceTarget } from './server-context.js';

/**
 * Runs a store's write of `obj` (created when `old` is undefined) inside the bookkeeping its kind's
 * strategy declares (see KindStrategy.storeHooks); a kind without any is written as is.
 */
export function writeWithKindHooks<T>(r: ResourceTarget, obj: Obj, old: Obj | undefined, dryRun: boolean, write: () => Promise<T>): Promise<T> {
  const hooks = strategyFor(r.info).storeHooks;
  return hooks === undefined ? write() : hooks.aroundWrite(r, obj, old, dryRun, write);
}

/** Tells the kind's strategy that `removed` left storage (see KindStrategy.storeHooks); never throws. */
export async function afterKindDelete(r: ResourceTarget, removed: Obj): Promise<void> {
  await strategyFor(r.info).storeHooks?.afterDelete(r, removed);
}
