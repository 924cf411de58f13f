/**
 * A certificate authority that signs CertificateSigningRequests as kube-controller-manager's
 * csrsigning controller does (kube's authority.PermissiveSigningPolicy): the request's subject,
 * public key and subjectAltNames, the CSR's usages as key usages and extended key usages, not a CA,
 * valid from five minutes ago for the requested duration (at least ten minutes, at most the
 * signer's maximum; minus the backdate when eight hours or longer), never past the CA's own expiry.
 */
import { createPrivateKey, randomBytes, webcrypto } from 'node:crypto';
import type * as X509 from '@peculiar/x509';
import { x509 } from './x509-module.js';
import { subjectAltNames } from './signer-names.js';

const BACKDATE_MS = 5 * 60 * 1000;
const SHORT_MS = 8 * 60 * 60 * 1000;
const MIN_DURATION_MS = 10 * 60 * 1000;

/** Key usage names to their bits; a function so that @peculiar/x509 loads on first use. */
function keyUsages(): Record<string, number> {
  const flags = x509().KeyUsageFlags;
  return {
    signing: flags.digitalSignature,
    'digital signature': flags.digitalSignature,
    'content commitment': flags.nonRepudiation,
    'key encipherment': flags.keyEncipherment,
    'key agreement': flags.keyAgreement,
    'data encipherment': flags.dataEncipherment,
    'cert sign': flags.keyCertSign,
    'crl sign': flags.cRLSign,
    'encipher only': flags.encipherOnly,
    'decipher only': flags.decipherOnly,
  };
}

/** Extended key usages in Go's x509.ExtKeyUsage order, which kube sorts them by. */
const EXT_KEY_USAGES: Array<[string[], string]> = [
  [['any'], '2.5.29.37.0'],
  [['server auth'], '1.3.6.1.5.5.7.3.1'],
  [['client auth'], '1.3.6.1.5.5.7.3.2'],
  [['code signing'], '1.3.6.1.5.5.7.3.3'],
  [['email protection', 's/mime'], '1.3.6.1.5.5.7.3.4'],
  [['ipsec end system'], '1.3.6.1.5.5.7.3.5'],
  [['ipsec tunnel'], '1.3.6.1.5.5.7.3.6'],
  [['ipsec user'], '1.3.6.1.5.5.7.3.7'],
  [['timestamping'], '1.3.6.1.5.5.7.3.8'],
  [['ocsp signing'], '1.3.6.1.5.5.7.3.9'],
  [['microsoft sgc'], '1.3.6.1.4.1.311.10.3.3'],
  [['netscape sgc'], '2.16.840.1.113730.4.1'],
];

/** The certificate's lifetime for `expirationSeconds` (kube's signer.duration). */
export function signingDuration(expirationSeconds: number | undefined, maxMs: number): number {
  if (expirationSeconds === undefined) return maxMs;
  const requested = expirationSeconds * 1000;
  if (requested > maxMs) return maxMs;
  return Math.max(requested, MIN_DURATION_MS);
}

/** The signing algorithm Go picks for a CA key (ECDSA by curve, else RSA PKCS#1 v1.5 with SHA-256). */
function algorithmFor(key: ReturnType<typeof createPrivateKey>): { importAs: RsaHashedImportParams | EcKeyImportParams; sign: Algorithm | EcdsaParams } {
  const type = key.asymmetricKeyType;
  if (type === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    const namedCurve = curve === 'secp384r1' ? 'P-384' : curve === 'secp521r1' ? 'P-521' : 'P-256';
    const hash = namedCurve === 'P-384' ? 'SHA-384' : namedCurve === 'P-521' ? 'SHA-512' : 'SHA-256';
    return { importAs: { name: 'ECDSA', namedCurve }, sign: { name: 'ECDSA', hash } };
  }
  if (type === 'rsa') return { importAs: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, sign: { name: 'RSASSA-PKCS1-v1_5' } };
  throw new Error(`unsupported signing key type ${String(type)}`);
}

/** A CA certificate and its private key (PEM, any format Node reads), able to sign CSRs. */
export class SigningAuthority {
  private constructor(
    private readonly ca: X509.X509Certificate,
    private readonly key: CryptoKey,
    private readonly algorithm: Algorithm | EcdsaParams,
  ) {}

  /** Loads the CA; throws when the certificate or key cannot be read. */
  static async load(certPem: string, keyPem: string): Promise<SigningAuthority> {
    const ca = new (x509().X509Certificate)(certPem);
    const nodeKey = createPrivateKey(keyPem);
    const { importAs, sign } = algorithmFor(nodeKey);
    const der = nodeKey.export({ format: 'der', type: 'pkcs8' });
    const key = await webcrypto.subtle.importKey('pkcs8', der, importAs, false, ['sign']);
    return new SigningAuthority(ca, key, sign);
  }

  /** The PEM certificate for `csr` (PEM or DER request), valid for `durationMs` as kube bounds it. */
  async sign(csr: X509.Pkcs10CertificateRequest, usages: readonly string[], durationMs: number, now = Date.now()): Promise<string> {
    let keyUsage = 0;
    const extended: string[] = [];
    const unrecognized: string[] = [];
    for (const u of usages) {
      const flag = keyUsages()[u];
      if (flag !== undefined) keyUsage |= flag;
      else if (!EXT_KEY_USAGES.some(([names]) => names.includes(u))) unrecognized.push(u);
    }
    if (unrecognized.length > 0) throw new Error(`unrecognized usage values: [${unrecognized.map((u) => JSON.stringify(u)).join(' ')}]`);
    for (const [names, oid] of EXT_KEY_USAGES) if (usages.some((u) => names.includes(u))) extended.push(oid);

    const caNotAfter = this.ca.notAfter.getTime();
    const notBefore = now - BACKDATE_MS;
    let notAfter = durationMs < SHORT_MS ? now + durationMs : now + durationMs - BACKDATE_MS;
    if (notAfter >= caNotAfter) notAfter = caNotAfter;
    if (notBefore >= caNotAfter) throw new Error(`the signer has expired: NotAfter=${this.ca.notAfter.toISOString()}`);

    const extensions: X509.Extension[] = [];
    if (keyUsage !== 0) extensions.push(new (x509().KeyUsagesExtension)(keyUsage, true));
    if (extended.length > 0) extensions.push(new (x509().ExtendedKeyUsageExtension)(extended));
    extensions.push(new (x509().BasicConstraintsExtension)(false, undefined, true));
    const ski = this.ca.getExtension(x509().SubjectKeyIdentifierExtension);
    if (ski !== null) extensions.push(new (x509().AuthorityKeyIdentifierExtension)(ski.keyId));
    const san = subjectAltNames(csr);
    if (san !== undefined) extensions.push(new (x509().SubjectAlternativeNameExtension)(san.names.toJSON(), csr.subject === ''));

    // A positive 128-bit serial number (the top bit clear), as kube draws one below 2^128.
    const serial = randomBytes(16);
    serial[0] &= 0x7f;
    const cert = await x509().X509CertificateGenerator.create({
      serialNumber: serial.toString('hex'),
      subject: csr.subjectName,
      issuer: this.ca.subjectName,
      publicKey: csr.publicKey,
      signingKey: this.key,
      signingAlgorithm: this.algorithm,
      notBefore: new Date(notBefore),
      notAfter: new Date(notAfter),
      extensions,
    });
    return `${cert.toString('pem')}\n`;
  }
}

/** Parses a CSR's `spec.request` (base64 of PEM); throws kube's message when it is not one. */
export function parseRequest(request: string): X509.Pkcs10CertificateRequest {
  const pem = Buffer.from(request, 'base64').toString('latin1');
  if (!pem.includes('-----BEGIN CERTIFICATE REQUEST-----')) throw new Error('PEM block type must be CERTIFICATE REQUEST');
  return new (x509().Pkcs10CertificateRequest)(pem);
}
