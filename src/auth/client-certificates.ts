import type { IncomingMessage } from 'node:http';
import { X509Certificate } from 'node:crypto';
import { TLSSocket, type DetailedPeerCertificate } from 'node:tls';
import type { AuthenticationResult, RequestAuthenticator } from './authenticator.js';
import { requestConnection } from './request-connection.js';
import type { User } from '../api/user.js';

/** TLS Web Client Authentication and "any" extended key usages. */
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_USAGE = '2.5.29.37.0';

/** Each connection's peer chain, parsed once (a TLS session's certificates never change). */
const chains = new WeakMap<TLSSocket, X509Certificate[]>();

/** The peer's certificates, leaf first, as sent in the handshake (none on a plain connection). */
export function peerChain(req: IncomingMessage): X509Certificate[] {
  const socket = requestConnection(req);
  if (!(socket instanceof TLSSocket)) return [];
  const cached = chains.get(socket);
  if (cached !== undefined) return cached;
  const chain: X509Certificate[] = [];
  let cert: DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  const seen = new Set<string>();
  while (cert !== undefined && cert.raw !== undefined && !seen.has(cert.fingerprint256)) {
    seen.add(cert.fingerprint256);
    chain.push(new X509Certificate(cert.raw));
    cert = cert.issuerCertificate;
  }
  chains.set(socket, chain);
  return chain;
}

/** The roots a verifier trusts, re-read when its CA file changes (the same array until then). */
export type Roots = () => X509Certificate[];

/** One verification's outcome, and the time window in which every certificate it looked at is valid. */
interface Verification {
  roots: X509Certificate[];
  error: string | undefined;
  from: number;
  until: number;
}

/**
 * Outcomes by chain (a connection's chain is one cached array) and roots: a connection's later
 * requests skip the signature checks while the roots are unchanged (the same array) and the time is
 * inside the window, where verifying again would look at the same certificates and answer the same.
 * A chain meets at most two root sets (client CA, front-proxy CA).
 */
const verifications = new WeakMap<X509Certificate[], Verification[]>();

/**
 * Verifies `chain` (leaf first) up to one of `roots`: every certificate valid now and signed by the
 * next, the leaf usable for client authentication. Returns the error kube's x509 authenticator
 * would (`verifying certificate ... failed: ...`), or undefined when it verifies.
 */
export function verifyClientChain(chain: X509Certificate[], roots: X509Certificate[], now = new Date()): string | undefined {
  const t = now.getTime();
  const known = verifications.get(chain) ?? [];
  const memo = known.find((v) => v.roots === roots);
  if (memo !== undefined && t >= memo.from && t <= memo.until) return memo.error;
  const outcome = verifyUncached(chain, roots, now);
  if (outcome.from <= outcome.until) verifications.set(chain, [...known.filter((v) => v.roots !== roots), { roots, ...outcome }].slice(-2));
  return outcome.error;
}

function verifyUncached(chain: X509Certificate[], roots: X509Certificate[], now: Date): Omit<Verification, 'roots'> {
  const leaf = chain[0];
  const describe = `SN=${BigInt(`0x${leaf.serialNumber}`).toString()}, SKID=, AKID= failed`;
  const fail = (why: string): string => `verifying certificate ${describe}: ${why}`;
  const usages = leaf.keyUsage;
  if (usages !== undefined && usages.length > 0 && !usages.includes(CLIENT_AUTH) && !usages.includes(ANY_USAGE)) {
    return { error: fail('x509: certificate specifies an incompatible key usage'), from: -Infinity, until: Infinity };
  }
  let current = leaf;
  let from = -Infinity;
  let until = Infinity;
  for (let depth = 0; depth < 8; depth++) {
    if (now < new Date(current.validFrom) || now > new Date(current.validTo)) {
      const error = fail(
        `x509: certificate has expired or is not yet valid: current time ${now.toISOString().replace(/\.\d+Z$/, 'Z')} is after ${new Date(current.validTo).toISOString().replace(/\.\d+Z$/, 'Z')}`,
      );
      // Not remembered: the time that makes it fail moves on.
      return { error, from: Infinity, until: -Infinity };
    }
    from = Math.max(from, Date.parse(current.validFrom));
    until = Math.min(until, Date.parse(current.validTo));
    const root = roots.find((r) => current.checkIssued(r) && current.verify(r.publicKey));
    if (root !== undefined) return { error: undefined, from, until };
    const next = chain.slice(1).find((c) => c !== current && c.ca && current.checkIssued(c) && current.verify(c.publicKey));
    if (next === undefined) break;
    current = next;
  }
  return { error: fail('x509: certificate signed by unknown authority'), from, until };
}

/** The subject's attribute values of `key` (CN, O) in order. */
export function subjectValues(cert: X509Certificate, key: string): string[] {
  return cert.subject
    .split('\n')
    .flatMap((rdn) => rdn.split('+'))
    .filter((a) => a.startsWith(`${key}=`))
    .map((a) => a.slice(key.length + 1));
}

/** The name and groups each certificate object names, read from its subject once. */
const usersOfCertificates = new WeakMap<X509Certificate, { name: string; groups: readonly string[] }>();

/**
 * The user a client certificate names (its first Common Name, its Organizations as groups). The
 * subject is read once per certificate object: a connection's requests share its chain (peerChain),
 * and formatting the subject is the costly part. A fresh user object each time, as callers may keep
 * or change it.
 */
function certificateUser(leaf: X509Certificate): User {
  let named = usersOfCertificates.get(leaf);
  if (named === undefined) {
    named = { name: subjectValues(leaf, 'CN')[0] ?? '', groups: subjectValues(leaf, 'O') };
    usersOfCertificates.set(leaf, named);
  }
  return { name: named.name, uid: '', groups: [...named.groups], extra: {} };
}

/**
 * kube's x509 authenticator (`--client-ca-file`): a client certificate verified against the CA
 * bundle is the user named by its Common Name, in the groups of its Organizations.
 */
export class ClientCertificateAuthenticator implements RequestAuthenticator {
  constructor(private readonly roots: Roots) {}

  async authenticate(req: IncomingMessage): Promise<AuthenticationResult> {
    const chain = peerChain(req);
    if (chain.length === 0) return undefined;
    const error = verifyClientChain(chain, this.roots());
    if (error !== undefined) return { error };
    return { user: certificateUser(chain[0]) };
  }
}
