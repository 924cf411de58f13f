/**
 * Secrets shared by every server on one Redis, such as the key that signs continue tokens, so a
 * chunked list started on one worker or pod can continue on any other.
 */
import { randomBytes } from 'node:crypto';
import type { RedisClient } from './scripts.js';
import { unavailable } from './replies.js';

/**
 * The secret `name` under `prefix`: 32 random bytes created by whichever server asks first (SET NX),
 * then the same bytes for every caller on this Redis. Rejects with `Unavailable` when Redis cannot be
 * reached or the secret is missing after the write (e.g. evicted between the two commands).
 */
export async function sharedSecret(client: RedisClient, prefix: string, name: string): Promise<Buffer> {
  const key = `${prefix}{secrets}:${name}`;
  try {
    await client.call('SET', [key, randomBytes(32).toString('base64'), 'NX']);
    const value = await client.call('GET', [key]);
    if (typeof value !== 'string' || value === '') throw new Error(`secret ${name} is missing`);
    return Buffer.from(value, 'base64');
  } catch (err) {
    throw unavailable(err);
  }
}
