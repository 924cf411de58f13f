import { X509Certificate } from 'node:crypto';
import { Agent, type AgentOptions } from 'node:https';
import { checkServerIdentity, type TLSSocket } from 'node:tls';

/**
 * Go's crypto/x509 trusts a server whose certificate is itself one of the roots, even when it is
 * not a CA; OpenSSL (Node) does not. envtest relies on it: the caBundle it writes into webhook
 * configurations is the webhook's serving certificate. This https Agent, used for a caBundle that
 * holds such a non-CA certificate, accepts exactly what Go accepts: a chain OpenSSL verifies, or a
 * peer certificate byte-equal to one in the bundle that is within its validity period; the host
 * name is checked either way. Nothing is written to the connection before it is accepted.
 */
export class LeafTrustingAgent extends Agent {
  private readonly pinned: Set<string>;

  constructor(options: AgentOptions & { ca: Buffer }) {
    super({ ...options, rejectUnauthorized: false });
    this.pinned = new Set(pemCertificates(options.ca.toString('utf8')).map((c) => c.raw.toString('base64')));
  }

  /** Opens the connection corked: requests are written only once `verify` accepts the server. */
  override createConnection(...args: unknown[]): TLSSocket {
    const base = Agent.prototype as unknown as { createConnection: (...a: unknown[]) => TLSSocket };
    const socket = base.createConnection.apply(this, args);
    const options = (typeof args[0] === 'object' && args[0] !== null ? args[0] : (args[2] ?? {})) as { servername?: string; host?: string };
    socket.cork();
    socket.once('secureConnect', () => {
      const problem = this.verify(socket, options.servername || options.host || '');
      if (problem === undefined) socket.uncork();
      else socket.destroy(problem);
    });
    return socket;
  }

  private verify(socket: TLSSocket, host: string): Error | undefined {
    if (socket.authorized) return undefined;
    const code = String(socket.authorizationError ?? '');
    const peer = socket.getPeerCertificate();
    if (!CHAIN_ERRORS.has(code) || peer.raw === undefined || !this.pinned.has(peer.raw.toString('base64'))) return coded(code);
    const cert = new X509Certificate(peer.raw);
    const now = Date.now();
    if (now < Date.parse(cert.validFrom)) return coded('CERT_NOT_YET_VALID');
    if (now > Date.parse(cert.validTo)) return coded('CERT_HAS_EXPIRED');
    return checkServerIdentity(host, peer);
  }
}

/** OpenSSL's verdicts for a chain it could not anchor (the cases Go accepts for a pinned leaf). */
const CHAIN_ERRORS = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
]);

function coded(code: string): Error {
  return Object.assign(new Error(code), { code });
}

function pemCertificates(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  const out: X509Certificate[] = [];
  for (const block of blocks) {
    try {
      out.push(new X509Certificate(block));
    } catch {
      // Not a certificate OpenSSL can read: it cannot match a peer either.
    }
  }
  return out;
}

/** Whether a caBundle (PEM) holds a certificate that is not a CA, which only Go's verifier would trust. */
export function bundleHasLeaf(pem: string): boolean {
  return pemCertificates(pem).some((c) => !c.ca);
}
