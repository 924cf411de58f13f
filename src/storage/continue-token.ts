import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ApiError, badRequest } from '../api/errors.js';
import { isResourceVersion } from './resource-version.js';

/**
 * Continue tokens of chunked lists: opaque, tamper-evident (HMAC-signed) and time-limited. A token
 * carries the list's resourceVersion, the last key served, and when it was issued.
 * Tokens made by one server process are checked with a key shared by all workers (see `setTokenKey`).
 */
export interface ContinueState {
  resourceVersion: string;
  /** Last key returned; the next page starts strictly after it. */
  startAfter: string;
  /** Issue time, ms since epoch. */
  issuedAt: number;
}

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
  if (p.v !== 1 || typeof p.rv !== 'string' || !isResourceVersion(p.rv) || typeof p.start !== 'string' || typeof p.t !== 'number') {
    throw badRequest(`${INVALID}invalid encoding`);
  }
  return { resourceVersion: p.rv, startAfter: p.start, issuedAt: p.t };
}

/** 410 Gone for an expired token or one whose version left the history, with kube's wording. */
export function expiredContinue(): ApiError {
  return new ApiError(
    410,
    'Expired',
    'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
    {},
  );
}
