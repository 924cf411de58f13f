import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

/** A JSON Web Token's signing algorithm, as service account keys use them. */
export type JwtAlgorithm = 'RS256' | 'ES256';

/** The algorithm a key signs with: RSA keys RS256, ECDSA P-256 keys ES256 (others are refused). */
export function algorithmOf(key: KeyObject): JwtAlgorithm {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
  throw new Error(`unsupported key type ${key.asymmetricKeyType ?? 'unknown'} (RSA or ECDSA P-256 expected)`);
}

/** kube's key ID: the unpadded base64url SHA-256 of the public key's DER (PKIX) encoding. */
export function keyIdOf(publicKey: KeyObject): string {
  return createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('base64url');
}

/**
 * The public keys in a PEM file: each PUBLIC KEY, RSA PUBLIC KEY, or the public half of each
 * private key, and certificates' keys (kube's keyutil.ParsePublicKeysPEM). Throws when none is found.
 */
export function publicKeysFromPem(pem: string): KeyObject[] {
  const blocks = pem.match(/-----BEGIN ([A-Z ]+)-----[\s\S]*?-----END \1-----/g) ?? [];
  const keys: KeyObject[] = [];
  for (const block of blocks) {
    const type = /-----BEGIN ([A-Z ]+)-----/.exec(block)?.[1] ?? '';
    if (type.endsWith('PRIVATE KEY')) keys.push(createPublicKey(createPrivateKey(block)));
    else if (type.endsWith('PUBLIC KEY') || type === 'CERTIFICATE') keys.push(createPublicKey(block));
  }
  if (keys.length === 0) throw new Error('data does not contain any valid RSA or ECDSA public keys');
  for (const k of keys) algorithmOf(k);
  return keys;
}

function b64json(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** A compact JWS over `claims`, header `{alg, kid}` as kube writes it. */
export function signJwt(claims: object, privateKey: KeyObject, keyId: string): string {
  const alg = algorithmOf(privateKey);
  const input = `${b64json({ alg, kid: keyId })}.${b64json(claims)}`;
  const signature =
    alg === 'RS256' ? sign('sha256', Buffer.from(input), privateKey) : sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

/** A compact JWS split into its parts; undefined when `token` is not one. */
export interface ParsedJwt {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  signingInput: string;
  signature: Buffer;
}

export function parseJwt(token: string): ParsedJwt | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]*$/.test(p))) return undefined;
  try {
    const header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8')) as unknown;
    const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as unknown;
    if (typeof header !== 'object' || header === null || typeof claims !== 'object' || claims === null) return undefined;
    return {
      header: header as Record<string, unknown>,
      claims: claims as Record<string, unknown>,
      signingInput: `${parts[0]}.${parts[1]}`,
      signature: Buffer.from(parts[2], 'base64url'),
    };
  } catch {
    return undefined;
  }
}

/** Whether `jwt` is signed by `publicKey` with the algorithm its header names (which must be the key's). */
export function verifyJwt(jwt: ParsedJwt, publicKey: KeyObject): boolean {
  const alg = algorithmOf(publicKey);
  if (jwt.header.alg !== alg) return false;
  const data = Buffer.from(jwt.signingInput);
  return alg === 'RS256'
    ? verify('sha256', data, publicKey, jwt.signature)
    : verify('sha256', data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, jwt.signature);
}
