import { constants, createPublicKey, verify, type JsonWebKey, type KeyObject } from 'node:crypto';
import { stringField } from '../../api/values.js';

/**
 * Compact JSON Web Signatures as kube's OIDC authenticator (go-oidc over go-jose) reads them: the
 * asymmetric algorithms it accepts, keys from a JSON Web Key Set, and signature verification with
 * Node's crypto.
 */

/** Every algorithm kube accepts, sorted (oidc.AllValidSigningAlgorithms). */
export const SIGNING_ALGORITHMS: readonly string[] = ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512'];

const HASHES: Record<string, string> = { '256': 'sha256', '384': 'sha384', '512': 'sha512' };
const CURVES: Record<string, { curve: string; size: number }> = {
  ES256: { curve: 'prime256v1', size: 32 },
  ES384: { curve: 'secp384r1', size: 48 },
  ES512: { curve: 'secp521r1', size: 66 },
};

/** A compact JWS split into its parts. */
export interface CompactJws {
  header: Record<string, unknown>;
  /** The decoded payload bytes (the claims' JSON). */
  payload: Buffer;
  signingInput: string;
  signature: Buffer;
}

const B64URL = /^[A-Za-z0-9_-]*$/;

/** Parses a compact JWS; a string is go-jose's reason it is not one. */
export function parseCompactJws(token: string): CompactJws | string {
  const parts = token.split('.');
  if (parts.length !== 3) return 'square/go-jose: compact JWS format must have three parts';
  if (!parts.every((p) => B64URL.test(p))) return 'illegal base64 data at input byte 0';
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) return 'json: cannot unmarshal into Go value of type jose.rawHeader';
  return {
    header: header as Record<string, unknown>,
    payload: Buffer.from(parts[1], 'base64url'),
    signingInput: `${parts[0]}.${parts[1]}`,
    signature: Buffer.from(parts[2], 'base64url'),
  };
}

/** Whether `jws` is signed by `key` with `alg` (the key's type must suit the algorithm). */
export function verifyJws(jws: CompactJws, alg: string, key: KeyObject): boolean {
  const hash = HASHES[alg.slice(2)];
  if (hash === undefined) return false;
  const data = Buffer.from(jws.signingInput);
  try {
    if (alg.startsWith('RS')) return key.asymmetricKeyType === 'rsa' && verify(hash, data, key, jws.signature);
    if (alg.startsWith('PS')) {
      if (key.asymmetricKeyType !== 'rsa' && key.asymmetricKeyType !== 'rsa-pss') return false;
      return verify(hash, data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO }, jws.signature);
    }
    const curve = CURVES[alg];
    if (curve === undefined || key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== curve.curve) return false;
    if (jws.signature.length !== 2 * curve.size) return false;
    return verify(hash, data, { key, dsaEncoding: 'ieee-p1363' }, jws.signature);
  } catch {
    return false;
  }
}

/** A verification key of a key set, with its key ID ('' when it has none). */
export interface VerificationKey {
  kid: string;
  key: KeyObject;
}

/**
 * The public keys of a JWK Set document (`{"keys": [...]}`). Keys Node cannot use (symmetric,
 * unknown types) are skipped; a document that is not a key set throws with the reason.
 */
export function keysOfJwks(doc: unknown): VerificationKey[] {
  if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as { keys?: unknown }).keys))
    throw new Error('json: cannot unmarshal into Go value of type jose.JSONWebKeySet');
  const keys: VerificationKey[] = [];
  for (const entry of (doc as { keys: unknown[] }).keys) {
    if (typeof entry !== 'object' || entry === null) continue;
    const jwk = entry as Record<string, unknown>;
    if (jwk.kty !== 'RSA' && jwk.kty !== 'EC') continue;
    try {
      const pub: JsonWebKey =
        jwk.kty === 'RSA'
          ? { kty: 'RSA', n: stringField(jwk, 'n'), e: stringField(jwk, 'e') }
          : { kty: 'EC', crv: stringField(jwk, 'crv'), x: stringField(jwk, 'x'), y: stringField(jwk, 'y') };
      keys.push({ kid: typeof jwk.kid === 'string' ? jwk.kid : '', key: createPublicKey({ key: pub, format: 'jwk' }) });
    } catch {
      continue;
    }
  }
  return keys;
}
