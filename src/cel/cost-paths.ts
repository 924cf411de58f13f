/**
 * The paths cel-go's cost estimator keeps for expressions (`self`, `spec`, `items`, `@items`...),
 * held as Go keeps them: slices that share a backing array. Appending to a slice with spare
 * capacity writes into that shared array, so two appends to the same path (a two-variable
 * comprehension's key and value variables) can leave both with the second step. kube's estimates
 * depend on this, so Capstan reproduces it: capacities grow as Go's append grows a []string.
 */

/** A Go []string: a view of LEN elements of a backing array with room for CAP. */
export interface GoPath {
  readonly backing: string[];
  readonly len: number;
  readonly cap: number;
}

/** A new one-element path (`[]string{name}`). */
export function pathOf(name: string): GoPath {
  return { backing: [name], len: 1, cap: 1 };
}

/** Go's append(PATH, STEP): in place while there is room, else into a new array of doubled capacity. */
export function appendStep(path: GoPath | undefined, step: string): GoPath {
  if (path === undefined) return { backing: [step], len: 1, cap: 1 };
  if (path.len < path.cap) {
    path.backing[path.len] = step;
    return { backing: path.backing, len: path.len + 1, cap: path.cap };
  }
  const needed = path.len + 1;
  // Doubling below 256 elements; a []string's capacities (16-byte elements) land on Go's size classes unchanged.
  const cap = needed > path.cap * 2 ? needed : path.cap * 2;
  const backing = path.backing.slice(0, path.len);
  backing.push(step);
  return { backing, len: needed, cap };
}

/** The elements PATH currently shows (undefined for a nil path). */
export function steps(path: GoPath | undefined): string[] | undefined {
  return path === undefined ? undefined : path.backing.slice(0, path.len);
}
