/**
 * The search kube's allocators make for a free IP or port: start at a random slot above the static
 * band (the low slots kept for requested values) and walk up, wrapping, through that upper part; only
 * when it is full, walk the static band the same way. Each slot is offered to `tryReserve`, which
 * must reserve it atomically (create-if-absent) and answer false when it is taken, so that two
 * processes searching at once never end with the same slot.
 */

/**
 * Offers slots 0..size-1 to `tryReserve` in kube's order and returns the first it reserved, or
 * undefined when every slot is taken. `staticBand` is how many low slots come last.
 */
export async function reserveFreeSlot(size: number, staticBand: number, tryReserve: (slot: number) => Promise<boolean>): Promise<number | undefined> {
  const upper = size - staticBand;
  if (upper > 0) {
    const start = Math.floor(Math.random() * upper);
    for (let i = 0; i < upper; i++) {
      const slot = staticBand + ((start + i) % upper);
      if (await tryReserve(slot)) return slot;
    }
  }
  if (staticBand > 0) {
    const start = Math.floor(Math.random() * staticBand);
    for (let i = 0; i < staticBand; i++) {
      const slot = (start + i) % staticBand;
      if (await tryReserve(slot)) return slot;
    }
  }
  return undefined;
}
