/**
 * APIServices reach every server sharing a store through the change streams: one registered through
 * server A (which runs the availability controller) is proxied by server B, which runs no
 * controllers, on the memory store (two servers in one process) and on Redis (two connections).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { MemoryStorage } from '../../src/storage/memory-storage.js';
import { connectRedisBackend } from '../../src/storage/redis/open-redis.js';
import type { Storage } from '../../src/storage/storage.js';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { startExtensionServer } from '../helpers/extension-server.js';
import { startRedis, type RedisServer } from '../helpers/redis-process.js';
import { eventually, restFor } from '../e2e/rest.js';

let redis: RedisServer | undefined;

after(async () => {
  await redis?.stop();
});

const backends: { name: string; open: () => Promise<[Storage, Storage]> }[] = [
  {
    name: 'memory',
    open: async () => {
      const s = new MemoryStorage({ historyMs: 300_000 });
      return [s, s];
    },
  },
  {
    name: 'redis',
    open: async () => {
      redis ??= await startRedis();
      const keyPrefix = `t${randomBytes(4).toString('hex')}:`;
      return [
        await connectRedisBackend({ url: redis.url, keyPrefix, historyMs: 300_000 }),
        await connectRedisBackend({ url: redis.url, keyPrefix, historyMs: 300_000 }),
      ];
    },
  },
];

for (const backend of backends) {
  test(`${backend.name}: an APIService registered through one server is proxied by another`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'capstan-aggregator-'));
    const certDir = join(dir, 'pki');
    const [storeA, storeB] = await backend.open();
    const servers: TestServer[] = [await startTestServer({ securePort: 0, certDir }, storeA)];
    servers.push(await startTestServer({ securePort: 0, certDir }, storeB, { runControllers: false }));
    const [a, b] = servers.map((s) => restFor(s.url));
    const ns = await a.namespace('prop');
    // Its certificate is for the Service's name, which the aggregator verifies.
    const ext = await startExtensionServer('gadgets.example.com', 'v1', readFileSync(join(certDir, 'front-proxy', 'ca.crt'), 'utf8'), `gadgets.${ns}.svc`);
    try {
      await a.create(`/api/v1/namespaces/${ns}/services`, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'gadgets' },
        spec: { type: 'ExternalName', externalName: 'localhost' },
      });
      const before = await b.get('/apis/gadgets.example.com/v1/namespaces/default/widgets');
      assert.equal(before.status, 404);
      const registration = {
        apiVersion: 'apiregistration.k8s.io/v1',
        kind: 'APIService',
        metadata: { name: 'v1.gadgets.example.com' },
        spec: {
          group: 'gadgets.example.com',
          version: 'v1',
          service: { namespace: ns, name: 'gadgets', port: ext.port },
          caBundle: ext.certs.caBundle,
          groupPriorityMinimum: 3000,
          versionPriority: 10,
        },
      };
      await a.create('/apis/apiregistration.k8s.io/v1/apiservices', registration);
      const list = await eventually('server B to proxy', async () => {
        const r = await b.get('/apis/gadgets.example.com/v1/namespaces/default/widgets');
        return r.status === 200 ? r.body : undefined;
      });
      assert.equal(list.kind, 'WidgetList');
      const groups = await eventually('server B to list the group', async () => {
        const r = await b.get('/apis');
        return r.body.groups.some((g: { name: string }) => g.name === 'gadgets.example.com') ? r.body : undefined;
      });
      assert.ok(groups.groups.length > 1);
      assert.equal((await a.del('/apis/apiregistration.k8s.io/v1/apiservices/v1.gadgets.example.com')).status, 200);
      await eventually('server B to stop proxying', async () =>
        (await b.get('/apis/gadgets.example.com/v1/namespaces/default/widgets')).status === 404 ? true : undefined,
      );
      // A proxied watch open when server A shuts down ends cleanly, as Capstan's own watches do.
      assert.equal((await a.post('/apis/apiregistration.k8s.io/v1/apiservices', registration)).status, 201);
      const res = await eventually('server A to proxy a watch', async () => {
        const r = await fetch(`${servers[0].url}/apis/gadgets.example.com/v1/namespaces/default/widgets?watch=true`);
        return r.status === 200 ? r : undefined;
      });
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      await eventually('the backend watch', async () => (ext.watchers() > 0 ? true : undefined));
      const ended = reader.read();
      await servers[0].stop();
      assert.deepEqual(await ended, { done: true, value: undefined });
    } finally {
      await ext.stop();
      // Stopping is idempotent: server A may have been stopped by the test.
      for (const s of servers.reverse()) await s.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
