import { webcrypto } from 'node:crypto';
import type * as X509 from '@peculiar/x509';
import { x509 as loadX509 } from '../certificates/x509-module.js';

/** ECDSA P-256 with SHA-256: every certificate and key Capstan generates. */
const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY_MS = 24 * 60 * 60 * 1000;

/** A certificate and its private key, both PEM. */
export interface CertificateAndKey {
  cert: string;
  key: string;
}

async function keyPair(): Promise<CryptoKeyPair> {
  return await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN PRIVATE KEY-----\n${lines.join('\n')}\n-----END PRIVATE KEY-----\n`;
}

async function importPrivateKey(pem: string): Promise<CryptoKey> {
  const body = pem.replace(/-----(BEGIN|END) PRIVATE KEY-----/g, '').replace(/\s+/g, '');
  return webcrypto.subtle.importKey('pkcs8', Buffer.from(body, 'base64'), ALGORITHM, false, ['sign']);
}

/** Escapes a value for an RFC 4514 distinguished name. */
function dnValue(v: string): string {
  return v.replace(/([,+"\\<>;=])/g, '\\$1');
}

/** A self-signed certificate authority valid for ten years (kube's generated CAs last as long). */
export async function generateCA(commonName: string): Promise<CertificateAndKey> {
  const x509 = loadX509();
  const keys = await keyPair();
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: `CN=${dnValue(commonName)}`,
    keys,
    signingAlgorithm: ALGORITHM,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 3650 * DAY_MS),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: cert.toString('pem') + '\n', key: await privateKeyPem(keys.privateKey) };
}

/** What a leaf certificate is for: serving (DNS names and IPs) or a client (user and groups). */
export type LeafProfile = { usage: 'server'; commonName: string; dnsNames: string[]; ips: string[] } | { usage: 'client'; user: string; groups: string[] };

/** A leaf certificate signed by `ca`, valid for one year. */
export async function generateLeaf(ca: CertificateAndKey, profile: LeafProfile, validDays = 365): Promise<CertificateAndKey> {
  const x509 = loadX509();
  const keys = await keyPair();
  const caCert = new x509.X509Certificate(ca.cert);
  const now = Date.now();
  const extensions: X509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension([profile.usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth]),
    await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey),
  ];
  let name: string;
  if (profile.usage === 'server') {
    name = `CN=${dnValue(profile.commonName)}`;
    extensions.push(
      new x509.SubjectAlternativeNameExtension([
        ...profile.dnsNames.map((value) => ({ type: 'dns' as const, value })),
        ...profile.ips.map((value) => ({ type: 'ip' as const, value })),
      ]),
    );
  } else {
    name = [...profile.groups.map((g) => `O=${dnValue(g)}`), `CN=${dnValue(profile.user)}`].join(', ');
  }
  const cert = await x509.X509CertificateGenerator.create({
    subject: name,
    issuer: caCert.subject,
    publicKey: keys.publicKey,
    signingKey: await importPrivateKey(ca.key),
    signingAlgorithm: ALGORITHM,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + validDays * DAY_MS),
    extensions,
  });
  return { cert: cert.toString('pem') + '\n', key: await privateKeyPem(keys.privateKey) };
}
