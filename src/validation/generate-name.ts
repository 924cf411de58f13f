/** Names generated from `metadata.generateName`, as kube's SimpleNameGenerator makes them. */
import { randomInt } from 'node:crypto';

/** The alphabet of kube's utilrand.String: no vowels (no accidental words), no 0/1/3 lookalikes. */
export const GENERATED_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
/** Length of the random suffix. */
export const GENERATED_SUFFIX_LENGTH = 5;
/** The prefix is cut so that prefix + suffix is at most this many characters. */
export const MAX_GENERATED_NAME_LENGTH = 63;

/**
 * `prefix` (cut to 58 characters) followed by 5 random characters from kube's alphabet. The result
 * is at most 63 characters; it is not checked against any name rule (validation does that).
 */
export function generateNameFrom(prefix: string): string {
  const base = prefix.slice(0, MAX_GENERATED_NAME_LENGTH - GENERATED_SUFFIX_LENGTH);
  let suffix = '';
  for (let i = 0; i < GENERATED_SUFFIX_LENGTH; i++) suffix += GENERATED_NAME_ALPHABET[randomInt(GENERATED_NAME_ALPHABET.length)];
  return base + suffix;
}
