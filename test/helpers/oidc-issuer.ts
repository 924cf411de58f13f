/**
 * An OpenID Connect issuer served by a test: HTTPS with its own CA, the discovery document and a
 * JWKS endpoint (both counted), signing keys it can rotate, and tokens it mints. Real keys and real
 * TLS: Capstan reaches it as it reaches any identity provider.
 */
import type { ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, sign, constants, type KeyObject } from 'node:crypto';
import { generateCA, generateLeaf, type CertificateAndKey } from '../../src/tls/certificates.js';

export type SigningAlg = 'RS256' | 'ES256' | 'PS256' | 'ES384';

export interface IssuerKey {
  kid: string;
  alg: SigningAlg;
  privateKey: KeyObject;
  publicJwk: Record<string, unknown>;
}

/** A fresh key pair for `alg` with key ID `kid`. */
export function newKey(kid: string, alg: SigningAlg = 'RS256'): IssuerKey {
  const pair =
    alg === 'ES256' || alg === 'ES384'
      ? generateKeyPairSync('ec', { namedCurve: alg === 'ES256' ? 'P-256' : 'P-384' })
      : generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = pair.publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
  return { kid, alg, privateKey: pair.privateKey, publicJwk: { ...jwk, kid, alg, use: 'sig' } };
}

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** A compact JWS of `claims` signed with `key` (header: alg and kid unless `kid: null`). */
export function mintToken(claims: Record<string, unknown>, key: IssuerKey, header: Record<string, unknown> = {}): string {
  const input = `${b64({ alg: key.alg, kid: key.kid, typ: 'JWT', ...header })}.${b64(claims)}`;
  const hash = key.alg === 'ES384' ? 'sha384' : 'sha256';
  const signature =
    key.alg === 'RS256'
      ? sign(hash, Buffer.from(input), key.privateKey)
      : key.alg === 'PS256'
        ? sign(hash, Buffer.from(input), { key: key.privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 })
        : sign(hash, Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

export class TestIssuer {
  /** Requests per path. */
  readonly hits = new Map<string, number>();
  /** Keys published in the JWKS. */
  published: IssuerKey[];
  /** Cache-Control of the JWKS answer ('' for none). */
  jwksCacheControl = '';
  /** The issuer the discovery document claims (default: the URL). */
  claimedIssuer: string | undefined;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly ca: CertificateAndKey,
    readonly signingKey: IssuerKey,
    private readonly basePath: string,
  ) {
    this.published = [signingKey];
  }

  /** Starts an issuer at https://127.0.0.1:PORT`basePath` with one RS256 key. */
  static async start(basePath = ''): Promise<TestIssuer> {
    const ca = await generateCA('test-oidc-ca');
    const leaf = await generateLeaf(ca, { usage: 'server', commonName: '127.0.0.1', dnsNames: ['localhost'], ips: ['127.0.0.1'] });
    let issuer: TestIssuer | undefined;
    const server = createServer({ cert: leaf.cert, key: leaf.key }, (req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (issuer === undefined) {
        res.writeHead(503).end();
        return;
      }
      issuer.hits.set(path, (issuer.hits.get(path) ?? 0) + 1);
      issuer.serve(path, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    issuer = new TestIssuer(server, `https://127.0.0.1:${port}${basePath}`, ca, newKey('key-1'), basePath);
    return issuer;
  }

  private serve(path: string, res: ServerResponse): void {
    if (path === `${this.basePath}/.well-known/openid-configuration` || path === '/discovery/elsewhere') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ issuer: this.claimedIssuer ?? this.url, jwks_uri: `${this.url}/keys`, id_token_signing_alg_values_supported: ['RS256', 'ES256'] }),
      );
      return;
    }
    if (path === `${this.basePath}/keys`) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (this.jwksCacheControl !== '') headers['cache-control'] = this.jwksCacheControl;
      res.writeHead(200, headers);
      res.end(JSON.stringify({ keys: this.published.map((k) => k.publicJwk) }));
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  }

  /** How many times `path` (below the issuer's base path) was fetched. */
  count(path: '/keys' | '/.well-known/openid-configuration'): number {
    return this.hits.get(`${this.basePath}${path}`) ?? 0;
  }

  /** A token of this issuer for `aud`, valid for an hour, with `claims` added; signed with `key` (default the first). */
  token(claims: Record<string, unknown>, key: IssuerKey = this.signingKey): string {
    const now = Math.floor(Date.now() / 1000);
    return mintToken({ iss: this.url, iat: now, exp: now + 3600, ...claims }, key);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
