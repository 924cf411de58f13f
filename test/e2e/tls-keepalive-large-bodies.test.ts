/**
 * Large request bodies right after large responses on one kept-alive HTTPS connection, as helm does
 * when it updates its release Secret (34 KB each way) and kubectl when it applies big objects: every
 * request is answered. Node's HTTP server pauses a connection whose previous response is still being
 * flushed, and while it read TLS connections through a consumed handle the paused parser refused the
 * cleartext already decrypted: about one update in three failed here with `400 Bad Request` or a
 * reset connection (src/server/tls-read-pausing.ts). The server runs as its own process, as clients
 * meet it, so that both sides' event loops race as they do in production.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnCapstan } from '../helpers/capstan.js';

interface Reply {
  status: number;
  body: string;
}

function send(agent: Agent, url: string, method: string, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> =
      body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const req = request(url, { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('100 KB updates after 100 KB reads on one HTTPS connection all succeed', { timeout: 180_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'capstan-tls-bodies-'));
  const server = await spawnCapstan(['--secure-port=0', `--cert-dir=${join(dir, 'pki')}`, '--log-format=json']);
  const pki = (name: string): Buffer => readFileSync(join(dir, 'pki', name));
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: pki('ca.crt'), cert: pki('admin.crt'), key: pki('admin.key') });
  try {
    assert.match(server.url, /^https:/);
    const path = `${server.url}/api/v1/namespaces/default/configmaps`;
    const value = 'x'.repeat(100_000);
    const created = await send(agent, path, 'POST', JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { v: value } }));
    assert.equal(created.status, 201, created.body);
    const failures: string[] = [];
    for (let i = 0; i < 50; i++) {
      const got = await send(agent, `${path}/big`, 'GET');
      assert.equal(got.status, 200, got.body.slice(0, 200));
      const object = JSON.parse(got.body) as { data: Record<string, string> };
      object.data.v = value.slice(0, 99_000 + i);
      const put = await send(agent, `${path}/big`, 'PUT', JSON.stringify(object)).catch((err: unknown) => ({
        status: 0,
        body: err instanceof Error ? err.message : String(err),
      }));
      if (put.status !== 200) failures.push(`update ${i}: ${put.status} ${put.body.slice(0, 100)}`);
    }
    assert.deepEqual(failures, []);
  } finally {
    agent.destroy();
    assert.equal(await server.stop(), 0);
    rmSync(dir, { recursive: true, force: true });
  }
});
