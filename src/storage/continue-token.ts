import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ApiError, badRequest, type StatusObject } from '../api/errors.js';
import { isResourceVersion } from './resource-version.js';

/**
 * Continue tokens of chunked lists: opaque, tamper-evident (HMAC-signed) and time-limited. A token
 * carries the list's resourceVersion, the last key served, and when it was issued.
 * Tokens made by one server process are checked with a key shared by all workers (see `setTokenKey`).
 */
export interface ContinueState {
  /** The snapshot every page reads; LATEST_VERSION: each page reads the newest state (an inconsistent list). */
  resourceVersion: string;
  /** Last key returned; the next page starts strictly after it. */
  startAfter: string;
  /** Issue time, ms since epoch. */
  issuedAt: number;
}

/**
 * The version of the token a 410 hands back for continuing without the snapshot (kube's -1): the
 * remaining pages read the latest state, so the list may mix versions. It does not expire.
 */
export const LATEST_VERSION = '-1';

/** How long a continue token stays valid (kube-apiserver's default with etcd compaction every 5 minutes). */
export const CONTINUE_TOKEN_LIFETIME_MS = 5 * 60 * 1000;

let tokenKey: Buffer = randomBytes(32);

/** Sets the signing key (workers of one deployment must share it so pages can move between them). */
export function setTokenKey(key: Buffer): void {
  tokenKey = key;
}

function sign(payload: string): string {
  return createHmac('sha256', tokenKey).update(payload).digest('base64url').slice(0, 22);
}

export function encodeContinue(state: ContinueState): string {
  const payload = Buffer.from(JSON.stringify({ v: 1, rv: state.resourceVersion, start: state.startAfter, t: state.issuedAt })).toString('base64url');
  return `${payload}.${sign(payload)}`;
}

const INVALID = 'continue key is not valid: ';

/** Decodes and verifies a token; 400 BadRequest when it is malformed or modified. */
export function decodeContinue(token: string): ContinueState {
  const dot = token.lastIndexOf('.');
  if (dot <= 0) throw badRequest(`${INVALID}incorrect encoded start resourceVersion (version meta.k8s.io/v1)`);
  const payload = token.slice(0, dot);
  const mac = Buffer.from(token.slice(dot + 1));
  const expected = Buffer.from(sign(payload));
  if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) {
    throw badRequest(`${INVALID}the token has been modified or was not issued by this server`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw badRequest(`${INVALID}invalid encoding`);
  }
  if (typeof parsed !== 'object' || parsed === null) throw badRequest(`${INVALID}invalid encoding`);
  const p = parsed as Record<string, unknown>;
  if (
    p.v !== 1 ||
    typeof p.rv !== 'string' ||
    !(isResourceVersion(p.rv) || p.rv === LATEST_VERSION) ||
    typeof p.start !== 'string' ||
    typeof p.t !== 'number'
  ) {
    throw badRequest(`${INVALID}invalid encoding`);
  }
  return { resourceVersion: p.rv, startAfter: p.start, issuedAt: p.t };
}

/** A 410 whose Status also carries, as its list metadata, the token that continues without the snapshot. */
class InconsistentContinueError extends ApiError {
  constructor(private readonly next: string) {
    super(
      410,
      'Expired',
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, ' +
        'or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an ' +
        'inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
      {},
    );
  }

  override toStatus(): StatusObject {
    return { ...super.toStatus(), metadata: { continue: this.next } };
  }
}

/**
 * 410 Gone for a token that expired or whose version left the history, in kube's words: as etcd3's
 * store answers a compacted page, the Status offers a token (LATEST_VERSION) for the rest after the
 * token's last key, issued at `now`.
 */
export function expiredContinue(state: ContinueState, now: number): ApiError {
  return new InconsistentContinueError(encodeContinue({ resourceVersion: LATEST_VERSION, startAfter: state.startAfter, issuedAt: now }));
}
