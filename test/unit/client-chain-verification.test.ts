import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { verifyClientChain } from '../../src/auth/client-certificates.js';
import { generateCA, generateLeaf } from '../../src/tls/certificates.js';

describe('client certificate chain verification', () => {
  test('a verified chain stays verified for later requests, but never past its validity or under other roots', async () => {
    const ca = await generateCA('test-ca');
    const other = await generateCA('other-ca');
    const leaf = await generateLeaf(ca, { usage: 'client', user: 'alice', groups: ['devs'] }, 2);
    const chain = [new X509Certificate(leaf.cert)];
    const roots = [new X509Certificate(ca.cert)];
    const otherRoots = [new X509Certificate(other.cert)];
    const now = new Date();

    assert.equal(verifyClientChain(chain, roots, now), undefined);
    // The same connection's next request: still verified.
    assert.equal(verifyClientChain(chain, roots, new Date(now.getTime() + 1000)), undefined);
    // A reloaded CA bundle that no longer holds the issuer refuses the same chain.
    assert.match(verifyClientChain(chain, otherRoots, now) ?? '', /signed by unknown authority/);
    // Both outcomes are remembered side by side (a client CA and a front-proxy CA check the same chain).
    assert.equal(verifyClientChain(chain, roots, now), undefined);
    assert.match(verifyClientChain(chain, otherRoots, now) ?? '', /signed by unknown authority/);
    // A bundle reloaded with the issuer added (a new array) verifies it.
    assert.equal(verifyClientChain(chain, [...otherRoots, ...roots], now), undefined);
    // Past the leaf's notAfter (2 days), the remembered verification does not apply.
    const later = new Date(now.getTime() + 3 * 24 * 3600 * 1000);
    assert.match(verifyClientChain(chain, roots, later) ?? '', /certificate has expired or is not yet valid/);
    // Before its notBefore neither.
    assert.match(verifyClientChain(chain, roots, new Date(now.getTime() - 3600 * 1000)) ?? '', /certificate has expired or is not yet valid/);
  });
});
