import { strategyFor } from '../strategy/strategies.js';
/**
 * The garbage-collection finalizers a DELETE puts on (or takes off) an object, as kube's generic
 * store decides them (deletionFinalizersForGarbageCollection): `orphan` when dependents are to be
 * orphaned, `foregroundDeletion` when they are to be deleted first, neither for background deletion.
 */

/** Finalizer of an owner whose dependents are orphaned before it goes. */
export const ORPHAN_FINALIZER = 'orphan';
/** Finalizer of an owner that waits for its blocking dependents to be deleted. */
export const FOREGROUND_FINALIZER = 'foregroundDeletion';

/** A type's default for DELETE without a policy: kube's DefaultGarbageCollectionPolicy. */
export type GarbageCollectionPolicy = 'DeleteDependents' | 'OrphanDependents' | 'Unsupported';

/** The propagation choices of DeleteOptions that this decision reads. */
export interface PropagationOptions {
  propagationPolicy?: string;
  orphanDependents?: boolean;
}

/** kube 1.36's per-strategy default: the kind's strategy's, else dependents are deleted. */
export function defaultGarbageCollectionPolicy(info: { group: string; version: string; resource: string }): GarbageCollectionPolicy {
  return strategyFor(info).garbageCollectionPolicy?.(info.version) ?? 'DeleteDependents';
}

function shouldOrphan(policy: GarbageCollectionPolicy, finalizers: readonly string[], opts: PropagationOptions): boolean {
  if (opts.orphanDependents !== undefined) return opts.orphanDependents;
  if (opts.propagationPolicy === 'Orphan') return true;
  if (opts.propagationPolicy === 'Background' || opts.propagationPolicy === 'Foreground') return false;
  for (const f of finalizers) {
    if (f === ORPHAN_FINALIZER) return true;
    if (f === FOREGROUND_FINALIZER) return false;
  }
  return policy === 'OrphanDependents';
}

function shouldDeleteInForeground(finalizers: readonly string[], opts: PropagationOptions): boolean {
  if (opts.orphanDependents !== undefined) return false;
  if (opts.propagationPolicy === 'Foreground') return true;
  if (opts.propagationPolicy === 'Background' || opts.propagationPolicy === 'Orphan') return false;
  for (const f of finalizers) {
    if (f === FOREGROUND_FINALIZER) return true;
    if (f === ORPHAN_FINALIZER) return false;
  }
  return false;
}

/**
 * The finalizers an object has after a DELETE with `opts`: other finalizers keep their order, then
 * `orphan` and/or `foregroundDeletion` as the options, the existing finalizers and the type's
 * default decide (in that precedence). `changed` is false when the set is the same as before (then
 * `finalizers` is the input, untouched).
 */
export function deletionFinalizers(
  info: { group: string; version: string; resource: string },
  finalizers: readonly string[],
  opts: PropagationOptions,
): { changed: boolean; finalizers: string[] } {
  const policy = defaultGarbageCollectionPolicy(info);
  if (policy === 'Unsupported') return { changed: false, finalizers: [...finalizers] };
  const next = finalizers.filter((f) => f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER);
  if (shouldOrphan(policy, finalizers, opts)) next.push(ORPHAN_FINALIZER);
  if (shouldDeleteInForeground(finalizers, opts)) next.push(FOREGROUND_FINALIZER);
  const before = new Set(finalizers);
  const after = new Set(next);
  const same = before.size === after.size && [...after].every((f) => before.has(f));
  return same ? { changed: false, finalizers: [...finalizers] } : { changed: true, finalizers: next };
}
