/**
 * Capstan's generated certificates (src/tls/certificates.ts, written with node:crypto and der.ts):
 * what Node and OpenSSL read in them, chains OpenSSL verifies, and a mutual-TLS handshake with a
 * generated serving pair and client certificate. A leaf signed by an RSA CA is signed with RSA.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCA, generateLeaf } from '../../src/tls/certificates.js';

function opensslText(pem: string): string {
  return execFileSync('openssl', ['x509', '-noout', '-text'], { input: pem, encoding: 'utf8' });
}

function opensslVerify(ca: string, leaf: string, purpose: 'sslserver' | 'sslclient'): { status: number | null; out: string } {
  const dir = mkdtempSync(join(tmpdir(), 'capstan-certs-'));
  try {
    writeFileSync(join(dir, 'ca.crt'), ca);
    writeFileSync(join(dir, 'leaf.crt'), leaf);
    const r = spawnSync('openssl', ['verify', '-purpose', purpose, '-CAfile', join(dir, 'ca.crt'), join(dir, 'leaf.crt')], { encoding: 'utf8' });
    return { status: r.status, out: r.stdout + r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a CA is self-signed, a CA for ten years, and signs certificates only as a CA may', async () => {
  const ca = await generateCA('capstan-ca@1');
  const cert = new X509Certificate(ca.cert);
  assert.equal(cert.subject, 'CN=capstan-ca@1');
  assert.equal(cert.issuer, 'CN=capstan-ca@1');
  assert.equal(cert.ca, true);
  assert.ok(cert.checkIssued(cert) && cert.verify(cert.publicKey));
  const years = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / (365.25 * 86_400_000);
  assert.ok(years > 9.9 && years < 10.1, `valid for ${years} years`);
  const text = opensslText(ca.cert);
  assert.match(text, /Version: 3 \(0x2\)/);
  assert.match(text, /Signature Algorithm: ecdsa-with-SHA256/);
  assert.match(text, /X509v3 Basic Constraints: critical\s+CA:TRUE/);
  assert.match(text, /X509v3 Key Usage: critical\s+Digital Signature, Key Encipherment, Certificate Sign/);
  assert.match(text, /X509v3 Subject Key Identifier/);
  assert.match(ca.key, /^-----BEGIN PRIVATE KEY-----\n/);
});

test('a serving certificate names its hosts and verifies against its CA for serving only', async () => {
  const ca = await generateCA('serving-ca');
  const leaf = await generateLeaf(ca, {
    usage: 'server',
    commonName: 'kube-apiserver',
    dnsNames: ['localhost', 'kubernetes.default.svc'],
    ips: ['127.0.0.1', '::1', 'fd00::10'],
  });
  const cert = new X509Certificate(leaf.cert);
  assert.equal(cert.subject, 'CN=kube-apiserver');
  assert.equal(cert.ca, false);
  assert.equal(
    cert.subjectAltName,
    'DNS:localhost, DNS:kubernetes.default.svc, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, IP Address:FD00:0:0:0:0:0:0:10',
  );
  assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1']);
  assert.ok(cert.checkIssued(new X509Certificate(ca.cert)));
  assert.ok(cert.verify(new X509Certificate(ca.cert).publicKey));
  assert.equal(cert.checkHost('kubernetes.default.svc'), 'kubernetes.default.svc');
  assert.equal(cert.checkIP('::1'), '::1');
  const caKeyId = /Subject Key Identifier:\s+([0-9A-F:]+)/.exec(opensslText(ca.cert))?.[1];
  assert.ok(caKeyId !== undefined);
  assert.match(opensslText(leaf.cert), new RegExp(`Authority Key Identifier:\\s+(keyid:)?${caKeyId}`));
  assert.equal(opensslVerify(ca.cert, leaf.cert, 'sslserver').status, 0);
  assert.notEqual(opensslVerify(ca.cert, leaf.cert, 'sslclient').status, 0);
});

test('a client certificate carries the user as CN and the groups as O, and authenticates over TLS', async () => {
  const ca = await generateCA('client-ca');
  const serving = await generateLeaf(ca, { usage: 'server', commonName: 'test', dnsNames: ['localhost'], ips: ['127.0.0.1'] });
  const client = await generateLeaf(ca, { usage: 'client', user: 'alice', groups: ['system:masters', 'dev,ops'] }, 30);
  const cert = new X509Certificate(client.cert);
  assert.equal(cert.subject, 'O=system:masters\nO=dev\\,ops\nCN=alice', 'Node escapes the comma it prints');
  assert.equal(cert.issuer, 'CN=client-ca');
  assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.2']);
  const days = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 86_400_000;
  assert.ok(days > 29.9 && days < 30.1, `valid for ${days} days`);
  assert.equal(opensslVerify(ca.cert, client.cert, 'sslclient').status, 0);

  const server = createServer({ cert: serving.cert, key: serving.key, ca: ca.cert, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const peer = (req.socket as TLSSocket).getPeerCertificate();
    res.end(JSON.stringify({ cn: peer.subject.CN, o: peer.subject.O }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const port = (server.address() as AddressInfo).port;
    const body = await new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/', ca: ca.cert, cert: client.cert, key: client.key, servername: 'localhost' }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      req.end();
    });
    assert.deepEqual(JSON.parse(body), { cn: 'alice', o: ['system:masters', 'dev,ops'] });
  } finally {
    server.close();
  }
});

test('a leaf of an RSA CA is signed with RSA and verifies', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'capstan-rsa-ca-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-subj',
        '/O=Example/CN=rsa-ca',
        '-days',
        '2',
        '-keyout',
        join(dir, 'ca.key'),
        '-out',
        join(dir, 'ca.crt'),
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,digitalSignature',
      ],
      { stdio: 'ignore' },
    );
    const ca = { cert: readFileSync(join(dir, 'ca.crt'), 'utf8'), key: readFileSync(join(dir, 'ca.key'), 'utf8') };
    const leaf = await generateLeaf(ca, { usage: 'client', user: 'bob', groups: [] });
    const cert = new X509Certificate(leaf.cert);
    assert.equal(cert.issuer, 'O=Example\nCN=rsa-ca', 'the issuer is the CA subject, byte for byte');
    assert.match(opensslText(leaf.cert), /Signature Algorithm: sha256WithRSAEncryption/);
    assert.ok(cert.verify(new X509Certificate(ca.cert).publicKey));
    assert.equal(opensslVerify(ca.cert, leaf.cert, 'sslclient').status, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
