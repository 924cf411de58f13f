/**
 * The few DER (ASN.1 Distinguished Encoding Rules) pieces X.509 certificates are made of, enough
 * for certificates.ts to write a certificate with node:crypto alone, and to read back one part of a
 * certificate (its subject, which a certificate it signs must carry byte for byte as its issuer).
 */

/** An encoded element: its tag, length and contents. */
export type Der = Buffer;

function lengthBytes(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** An element of tag `tag` holding `contents`. */
export function element(tag: number, contents: Buffer): Der {
  return Buffer.concat([Buffer.from([tag]), lengthBytes(contents.length), contents]);
}

export const sequence = (...items: Der[]): Der => element(0x30, Buffer.concat(items));
export const set = (...items: Der[]): Der => element(0x31, Buffer.concat(items));
export const octetString = (bytes: Buffer): Der => element(0x04, bytes);
export const utf8String = (text: string): Der => element(0x0c, Buffer.from(text, 'utf8'));
export const booleanTrue = (): Der => element(0x01, Buffer.from([0xff]));
export const nullValue = (): Der => element(0x05, Buffer.alloc(0));
/** A BIT STRING of whole bytes (no unused bits), as keys and signatures are. */
export const bitString = (bytes: Buffer): Der => element(0x03, Buffer.concat([Buffer.from([0]), bytes]));
/** `[n] EXPLICIT` around an encoded element. */
export const explicit = (n: number, inner: Der): Der => element(0xa0 | n, inner);
/** `[n] IMPLICIT` of a primitive type: the contents keep, the tag becomes context-specific. */
export const implicitPrimitive = (n: number, contents: Buffer): Der => element(0x80 | n, contents);

/** A non-negative INTEGER from its big-endian bytes (a leading zero added when the top bit is set). */
export function unsignedInteger(bytes: Buffer): Der {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0 && bytes[start + 1] < 0x80) start++;
  const trimmed = bytes.subarray(start);
  return element(0x02, trimmed[0] >= 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

/** An OBJECT IDENTIFIER from its dotted form. */
export function oid(dotted: string): Der {
  const arcs = dotted.split('.').map(Number);
  const out = [arcs[0] * 40 + arcs[1]];
  for (const arc of arcs.slice(2)) {
    const base128: number[] = [arc & 0x7f];
    for (let n = Math.floor(arc / 128); n > 0; n = Math.floor(n / 128)) base128.unshift(0x80 | (n & 0x7f));
    out.push(...base128);
  }
  return element(0x06, Buffer.from(out));
}

/**
 * A certificate's time: UTCTime for the years 1950-2049, GeneralizedTime after (RFC 5280 4.1.2.5),
 * to the second.
 */
export function time(date: Date): Der {
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '');
  const year = date.getUTCFullYear();
  return year >= 1950 && year < 2050 ? element(0x17, Buffer.from(`${digits.slice(2)}Z`, 'ascii')) : element(0x18, Buffer.from(`${digits}Z`, 'ascii'));
}

/** The element starting at `offset` of `der`: where its contents start and where it ends. */
function readElement(der: Buffer, offset: number): { tag: number; contentsStart: number; end: number } {
  if (offset + 2 > der.length) throw new Error('DER element runs past the end');
  const tag = der[offset];
  const first = der[offset + 1];
  let length = first;
  let contentsStart = offset + 2;
  if (first & 0x80) {
    const count = first & 0x7f;
    if (count === 0 || count > 4) throw new Error('unsupported DER length');
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + der[offset + 2 + i];
    contentsStart += count;
  }
  const end = contentsStart + length;
  if (end > der.length) throw new Error('DER element runs past the end');
  return { tag, contentsStart, end };
}

/** The subject public key's bits of a DER SubjectPublicKeyInfo (what RFC 5280's key identifiers hash). */
export function publicKeyBits(spki: Buffer): Buffer {
  const info = readElement(spki, 0);
  const algorithm = readElement(spki, info.contentsStart);
  const key = readElement(spki, algorithm.end);
  if (key.tag !== 0x03) throw new Error('SubjectPublicKeyInfo holds no BIT STRING');
  return spki.subarray(key.contentsStart + 1, key.end);
}

/** The encoded subject Name of a DER certificate, exactly as it is in the certificate. */
export function certificateSubject(certificate: Buffer): Der {
  const cert = readElement(certificate, 0);
  const tbs = readElement(certificate, cert.contentsStart);
  let at = tbs.contentsStart;
  const first = readElement(certificate, at);
  // version [0] is optional (absent in v1 certificates); then serial, signature, issuer, validity.
  let skip = first.tag === 0xa0 ? 5 : 4;
  while (skip-- > 0) at = readElement(certificate, at).end;
  const subject = readElement(certificate, at);
  if (subject.tag !== 0x30) throw new Error('certificate subject is not a SEQUENCE');
  return certificate.subarray(at, subject.end);
}
