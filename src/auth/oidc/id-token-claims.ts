/**
 * The parts of an ID token kube's OIDC authenticator (through go-oidc) reads before trusting it: the
 * unverified issuer that picks the authenticator, and the standard claims decoded with encoding/json's
 * type errors.
 */
import { goQuote } from '../../validation/field-errors.js';
import { goValueTypeError, jsonKindOf } from './go-format.js';
import type { Claims } from './claim-mappings.js';

/** The claims go-oidc decodes itself from an ID token (issuer, audience, expiry, not-before), as ms since the epoch. */
export interface StandardClaims {
  issuer: string;
  audience: string[];
  /** -Infinity when the token has no `exp` (Go's zero time: always expired). */
  expiry: number;
  notBefore?: number;
}

/** The standard claims go-oidc decodes, or encoding/json's error for a claim of the wrong type. */
export function standardClaims(claims: Claims): StandardClaims | string {
  for (const name of ['iss', 'sub', 'nonce', 'at_hash']) {
    const v = claims[name];
    if (v !== undefined && v !== null && typeof v !== 'string')
      return `json: cannot unmarshal ${jsonKindOf(v)} into Go struct field idToken.${name} of type string`;
  }
  const aud = claims.aud;
  let audience: string[];
  if (aud === undefined || aud === null) audience = [];
  else if (typeof aud === 'string') audience = [aud];
  else if (Array.isArray(aud)) {
    const items: unknown[] = aud;
    const wrong = items.find((a) => typeof a !== 'string' && a !== null);
    if (wrong !== undefined) return goValueTypeError(wrong, 'string');
    audience = items.map((a) => (typeof a === 'string' ? a : ''));
  } else return goValueTypeError(aud, '[]string');
  const times: Record<string, number | undefined> = {};
  for (const name of ['exp', 'iat', 'nbf']) {
    const v = claims[name];
    if (v === undefined || v === null) continue;
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(v) ? Number(v) : undefined;
    if (n === undefined) {
      if (typeof v === 'string') return `json: invalid number literal, trying to unmarshal ${goQuote(JSON.stringify(v))} into Number`;
      return goValueTypeError(v, 'json.Number');
    }
    times[name] = Math.trunc(n) * 1000;
  }
  const names = claims._claim_names;
  if (names !== undefined && names !== null) {
    if (typeof names !== 'object' || Array.isArray(names))
      return `json: cannot unmarshal ${jsonKindOf(names)} into Go struct field idToken._claim_names of type map[string]string`;
    const sources = typeof claims._claim_sources === 'object' && claims._claim_sources !== null ? (claims._claim_sources as Record<string, unknown>) : {};
    for (const source of Object.values(names as Record<string, unknown>)) {
      if (source === '' || source === null) return 'oidc: failed to obtain source from claim name';
      if (typeof source !== 'string') return `json: cannot unmarshal ${jsonKindOf(source)} into Go struct field idToken._claim_names of type string`;
      if (!(source in sources)) return 'oidc: source does not exist';
    }
  }
  return { issuer: typeof claims.iss === 'string' ? claims.iss : '', audience, expiry: times.exp ?? -Infinity, notBefore: times.nbf };
}

/** The `iss` claim of a compact JWT, unverified (kube's untrustedIssuer); '' when there is none. */
export function untrustedIssuer(token: string): string {
  if (token.trimStart().startsWith('{')) return '';
  const parts = token.split('.');
  if (parts.length !== 3 || !/^[A-Za-z0-9_-]*$/.test(parts[1])) return '';
  try {
    const payload: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    if (typeof payload !== 'object' || payload === null) return '';
    const iss = (payload as Claims).iss;
    if (typeof iss !== 'string') return '';
    return iss === 'accounts.google.com' ? 'https://accounts.google.com' : iss;
  } catch {
    return '';
  }
}
