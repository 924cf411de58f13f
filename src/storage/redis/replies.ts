import { StorageError } from '../../api/storage-error.js';
/**
 * What Redis answers, turned into values and StorageErrors. Replies are `unknown` until narrowed
 * here; a reply of the wrong shape is a protocol failure (a plain Error), never a guessed value.
 */

/** A script reply narrowed to a non-empty array; throws on anything else. */
export function replyArray(reply: unknown, what: string): unknown[] {
  if (!Array.isArray(reply) || reply.length === 0) throw new Error(`unexpected reply from ${what}`);
  return reply;
}

/** A reply element narrowed to a string (integers are given as their decimal text); throws on anything else. */
export function replyString(value: unknown, what: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isInteger(value)) return String(value);
  throw new Error(`unexpected reply from ${what}`);
}

/** A reply element narrowed to an integer (from a number or its decimal text); throws on anything else. */
export function replyNumber(value: unknown, what: string): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  if (!Number.isInteger(n)) throw new Error(`unexpected reply from ${what}`);
  return n;
}

/**
 * The one place where script outcomes (the status word a script returns first) become
 * StorageErrors, with MemoryStorage's messages; undefined for `ok`. `subject` is the object key
 * (writes) or the requested version (lists).
 */
export function scriptFailure(reply: unknown[], subject: string): StorageError | undefined {
  const code = reply[0];
  const detail = reply[1] === undefined ? '' : replyString(reply[1], 'script');
  switch (code) {
    case 'ok':
      return undefined;
    case 'AlreadyExists':
      return new StorageError('AlreadyExists', `${subject} already exists`);
    case 'NotFound':
      return new StorageError('NotFound', `${subject} not found`);
    case 'Conflict':
      return new StorageError('Conflict', `${subject} is at ${detail}`, detail);
    case 'Gone':
      return new StorageError('Gone', `resource version ${subject} is older than the history kept`, detail);
    case 'TooLarge':
      return new StorageError('TooLarge', `resource version ${subject} is newer than ${detail}`);
    default:
      return new StorageError('Unavailable', `unexpected script reply ${String(code)}`);
  }
}

/**
 * A failed Redis call (connection, timeout, OOM, READONLY, failover) as `Unavailable`; a
 * StorageError passes through unchanged.
 */
export function unavailable(err: unknown): StorageError {
  if (err instanceof StorageError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new StorageError('Unavailable', `storage unavailable: ${message}`);
}
