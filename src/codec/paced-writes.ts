import type { Response } from 'express';
import { performance } from 'node:perf_hooks';

/**
 * Pacing of large response bodies. One event loop serves every request, so a body of megabytes
 * built and written in one go delays every other request (a health probe, a Lease renewal) by the
 * whole encoding. Large bodies are built and written in pieces of about BODY_CHUNK_BYTES; a request
 * waits for 'drain' when the socket is full, and gives the event loop a turn (setImmediate) once it
 * has run SLICE_MS since its last, so no stretch is longer than that. Yielding after every piece
 * instead made a LIST under load last many turns of a busy loop, holding its APF seats longer (its
 * level's other flows then wait longer for them). Bodies smaller than one piece keep their single
 * write.
 */

/** Size of one piece of a large body: a fraction of a millisecond of encoding. */
export const BODY_CHUNK_BYTES = 64 * 1024;

/** Lists of at most this many items are built and written in one go. */
export const ITEMS_PER_TURN = 256;

/** Longest stretch one large response runs before the event loop serves others. */
export const SLICE_MS = 4;

/** Items handled between two looks at the clock. */
const ITEMS_PER_CHECK = 32;

/** Resolves after the event loop served the I/O and timers waiting now. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** What each response's one 'drain' and one 'close' listener wake: the waits of `drained`. */
const drainWaits = new WeakMap<Response, Array<(open: boolean) => void>>();

/**
 * Resolves true when the response can take more data, false when the client went away. A response
 * gets one 'drain' and one 'close' listener for its life, however many times it waits: the
 * compression middleware moves 'drain' listeners onto its gzip stream, where removing them through
 * the response does not reach, so listeners added per wait would pile up there.
 */
export function drained(res: Response): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  let waits = drainWaits.get(res);
  if (waits === undefined) {
    const list: Array<(open: boolean) => void> = [];
    drainWaits.set(res, list);
    res.on('drain', () => {
      for (const wake of list.splice(0)) wake(true);
    });
    res.once('close', () => {
      for (const wake of list.splice(0)) wake(false);
    });
    waits = list;
  }
  const pending = waits;
  return new Promise((resolve) => pending.push(resolve));
}

/** One large response's share of the event loop: a turn for the others every SLICE_MS of its work. */
export class Pacer {
  private since = performance.now();

  /** Gives the event loop a turn when this response has run SLICE_MS since its last one. */
  async turn(): Promise<void> {
    if (performance.now() - this.since < SLICE_MS) return;
    await nextTurn();
    this.since = performance.now();
  }

  /** `turn()` every ITEMS_PER_CHECK items of a loop (`i` counts them). */
  async turnAt(i: number): Promise<void> {
    if (i > 0 && i % ITEMS_PER_CHECK === 0) await this.turn();
  }

  /**
   * Writes one piece of a body and resolves when the next may be written: after 'drain' when the
   * socket's buffer is full (so a slow client holds at most one piece plus that buffer), else after a
   * turn when the slice is used up. False: the client went away, write nothing more.
   */
  async write(res: Response, piece: string | Buffer): Promise<boolean> {
    if (!res.write(piece)) {
      const open = await drained(res);
      this.since = performance.now();
      return open;
    }
    await this.turn();
    return !res.destroyed;
  }

  /** `items.map(fn)` with turns (a short array is mapped in one go). */
  async map<T, U>(items: readonly T[], fn: (item: T) => U): Promise<U[]> {
    if (items.length <= ITEMS_PER_TURN) return items.map(fn);
    const out: U[] = new Array<U>(items.length);
    for (let i = 0; i < items.length; i++) {
      await this.turnAt(i);
      out[i] = fn(items[i]);
    }
    return out;
  }
}
