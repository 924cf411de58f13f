import './reflect-metadata-shim.js';
import { createRequire } from 'node:module';
import { webcrypto } from 'node:crypto';
import type * as X509 from '@peculiar/x509';

/**
 * @peculiar/x509, loaded on its first use rather than at start-up: only CertificateSigningRequests
 * need it (Capstan's own certificates are written by src/tls/certificates.ts without it), and loading
 * it with its ASN.1 schemas takes 0.1-0.2 s. Synchronous, so
 * that its callers stay synchronous. The Reflect metadata shim (imported first) is in place, and it
 * signs with Node's WebCrypto.
 */
export type X509Module = typeof X509;

let loaded: X509Module | undefined;

/** The @peculiar/x509 module, the same object on every call. */
export function x509(): X509Module {
  if (loaded === undefined) {
    const require = createRequire(import.meta.url);
    const mod = require('@peculiar/x509') as X509Module;
    mod.cryptoProvider.set(webcrypto as unknown as Crypto);
    loaded = mod;
  }
  return loaded;
}
