import type { Response } from 'express';

/**
 * Pacing of large response bodies. One event loop serves every request, so a body of megabytes
 * built and written in one go delays every other request (a health probe, a Lease renewal) by the
 * whole encoding. Large bodies are built and written in pieces of about BODY_CHUNK_BYTES, and the
 * event loop serves what is waiting between two pieces: after the socket drained when it was full,
 * else after one turn (setImmediate). Bodies smaller than one piece keep their single write.
 */

/** Size of one piece of a large body: a fraction of a millisecond of encoding. */
export const BODY_CHUNK_BYTES = 64 * 1024;

/** Items parsed, converted or encoded between two turns of the event loop. */
export const ITEMS_PER_TURN = 256;

/** Resolves after the event loop served the I/O and timers waiting now. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Resolves true when the response can take more data, false when the client went away. */
export function drained(res: Response): Promise<boolean> {
  return new Promise((resolve) => {
    const onDrain = (): void => {
      res.off('close', onClose);
      resolve(true);
    };
    const onClose = (): void => {
      res.off('drain', onDrain);
      resolve(false);
    };
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}

/**
 * Writes one piece of a body and resolves when the next may be written: after 'drain' when the
 * socket's buffer is full (so a slow client holds at most one piece plus that buffer), else after
 * one turn of the event loop. False: the client went away, write nothing more.
 */
export async function writePiece(res: Response, piece: string | Buffer): Promise<boolean> {
  if (!res.write(piece)) return drained(res);
  await nextTurn();
  return !res.destroyed;
}

/**
 * `items.map(fn)`, giving the event loop a turn every ITEMS_PER_TURN items when there are more than
 * that (a short array is mapped in one go).
 */
export async function mapInTurns<T, U>(items: readonly T[], fn: (item: T) => U): Promise<U[]> {
  if (items.length <= ITEMS_PER_TURN) return items.map(fn);
  const out: U[] = new Array<U>(items.length);
  for (let i = 0; i < items.length; i++) {
    if (i > 0 && i % ITEMS_PER_TURN === 0) await nextTurn();
    out[i] = fn(items[i]);
  }
  return out;
}
