import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import {
  bitString,
  booleanTrue,
  certificateSubject,
  element,
  explicit,
  implicitPrimitive,
  nullValue,
  octetString,
  oid,
  publicKeyBits,
  sequence,
  set,
  time,
  unsignedInteger,
  utf8String,
  type Der,
} from './der.js';

/**
 * Capstan's own certificates (its CA, serving, admin and front-proxy pairs, and the client
 * certificates `capstan client-kubeconfig` issues): ECDSA P-256 keys and X.509 v3 certificates signed
 * with ECDSA SHA-256, written with node:crypto and a few DER pieces (der.ts). Writing them needs no
 * package: a fresh `--cert-dir`, as envtest gives one on every start, is filled in milliseconds.
 */

const DAY_MS = 24 * 60 * 60 * 1000;

/** A certificate and its private key, both PEM. */
export interface CertificateAndKey {
  cert: string;
  key: string;
}

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  sha256WithRsa: '1.2.840.113549.1.1.11',
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
};

/** keyUsage bits, numbered from the most significant bit of the first byte (RFC 5280 4.2.1.3). */
const KEY_USAGE = { digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5 };

function keyPair(): { publicKey: KeyObject; privateKey: KeyObject } {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' });
}

function privateKeyPem(key: KeyObject): string {
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}

function pem(der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}

/** RFC 5280's key identifier (method 1): the SHA-1 of the subject public key's bits. */
function keyIdentifier(publicKey: KeyObject): Buffer {
  return createHash('sha1')
    .update(publicKeyBits(publicKey.export({ type: 'spki', format: 'der' })))
    .digest();
}

/** A Name of one attribute per RDN, in the order given. */
function name(attributes: [string, string][]): Der {
  return sequence(...attributes.map(([type, value]) => set(sequence(oid(type), utf8String(value)))));
}

function extension(id: string, critical: boolean, value: Der): Der {
  return sequence(oid(id), ...(critical ? [booleanTrue()] : []), octetString(value));
}

/** The keyUsage BIT STRING of `bits` (DER: trailing zero bits are left out and counted as unused). */
function keyUsage(bits: number[]): Der {
  let value = 0;
  for (const b of bits) value |= 0x80 >> b;
  let unused = 0;
  while (unused < 7 && (value & (1 << unused)) === 0) unused++;
  return element(0x03, Buffer.from([unused, value]));
}

/** The address bytes of an IPv4 (4) or IPv6 (16) address, as subjectAltName's iPAddress holds them. */
function ipBytes(ip: string): Buffer {
  const family = isIP(ip);
  if (family === 4) return Buffer.from(ip.split('.').map(Number));
  if (family !== 6) throw new Error(`not an IP address: ${ip}`);
  // An embedded IPv4 tail (::ffff:10.0.0.1) is the last two groups; "::" stands for the missing zeros.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  const text =
    dotted === null ? ip : `${ip.slice(0, dotted.index)}${((+dotted[1] << 8) | +dotted[2]).toString(16)}:${((+dotted[3] << 8) | +dotted[4]).toString(16)}`;
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  const out = Buffer.alloc(16);
  [...headGroups, ...zeros, ...tailGroups].forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

interface CertificateFields {
  subject: Der;
  issuer: Der;
  publicKey: KeyObject;
  signingKey: KeyObject;
  notBefore: Date;
  notAfter: Date;
  extensions: Der[];
}

/** A certificate signed with `signingKey`, DER. */
function certificate(f: CertificateFields): Buffer {
  const serial = randomBytes(16);
  serial[0] = (serial[0] & 0x7f) | 0x01; // positive, and minimal as it stands
  // Capstan's keys are ECDSA; a CA given to Capstan (its --cert-dir, client-kubeconfig) may be RSA.
  const algorithm = f.signingKey.asymmetricKeyType === 'rsa' ? sequence(oid(OID.sha256WithRsa), nullValue()) : sequence(oid(OID.ecdsaWithSha256));
  const tbs = sequence(
    explicit(0, unsignedInteger(Buffer.from([2]))), // v3
    unsignedInteger(serial),
    algorithm,
    f.issuer,
    sequence(time(f.notBefore), time(f.notAfter)),
    f.subject,
    f.publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, sequence(...f.extensions)),
  );
  return sequence(tbs, algorithm, bitString(sign('sha256', tbs, f.signingKey)));
}

/** A self-signed certificate authority valid for ten years (kube's generated CAs last as long). */
export async function generateCA(commonName: string): Promise<CertificateAndKey> {
  const keys = keyPair();
  const now = Date.now();
  const subject = name([[OID.commonName, commonName]]);
  const der = certificate({
    subject,
    issuer: subject,
    publicKey: keys.publicKey,
    signingKey: keys.privateKey,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 3650 * DAY_MS),
    extensions: [
      extension(OID.basicConstraints, true, sequence(booleanTrue())),
      extension(OID.keyUsage, true, keyUsage([KEY_USAGE.digitalSignature, KEY_USAGE.keyEncipherment, KEY_USAGE.keyCertSign])),
      extension(OID.subjectKeyIdentifier, false, octetString(keyIdentifier(keys.publicKey))),
    ],
  });
  return { cert: pem(der), key: privateKeyPem(keys.privateKey) };
}

/** What a leaf certificate is for: serving (DNS names and IPs) or a client (user and groups). */
export type LeafProfile = { usage: 'server'; commonName: string; dnsNames: string[]; ips: string[] } | { usage: 'client'; user: string; groups: string[] };

/** A leaf certificate signed by `ca`, valid for `validDays` (one year by default). */
export async function generateLeaf(ca: CertificateAndKey, profile: LeafProfile, validDays = 365): Promise<CertificateAndKey> {
  const keys = keyPair();
  const caCert = new X509Certificate(ca.cert);
  const now = Date.now();
  const extensions = [
    extension(OID.basicConstraints, true, sequence()),
    extension(OID.keyUsage, true, keyUsage([KEY_USAGE.digitalSignature, KEY_USAGE.keyEncipherment])),
    extension(OID.extKeyUsage, false, sequence(oid(profile.usage === 'server' ? OID.serverAuth : OID.clientAuth))),
    extension(OID.authorityKeyIdentifier, false, sequence(implicitPrimitive(0, keyIdentifier(caCert.publicKey)))),
  ];
  let subject: Der;
  if (profile.usage === 'server') {
    subject = name([[OID.commonName, profile.commonName]]);
    const names = [
      ...profile.dnsNames.map((dns) => implicitPrimitive(2, Buffer.from(dns, 'ascii'))),
      ...profile.ips.map((ip) => implicitPrimitive(7, ipBytes(ip))),
    ];
    extensions.push(extension(OID.subjectAltName, false, sequence(...names)));
  } else {
    subject = name([...profile.groups.map((g): [string, string] => [OID.organization, g]), [OID.commonName, profile.user]]);
  }
  const der = certificate({
    subject,
    issuer: certificateSubject(caCert.raw),
    publicKey: keys.publicKey,
    signingKey: createPrivateKey(ca.key),
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + validDays * DAY_MS),
    extensions,
  });
  return { cert: pem(der), key: privateKeyPem(keys.privateKey) };
}
