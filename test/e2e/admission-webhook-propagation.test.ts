/**
 * Webhook configurations take effect on every server sharing a store: a configuration created,
 * changed or deleted through one server governs writes through another as soon as the change stream
 * reaches it, on the memory store (two servers in one process) and on Redis (two servers, two
 * connections, one key prefix).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { MemoryStorage } from '../../src/storage/memory-storage.js';
import { connectRedisBackend } from '../../src/storage/redis/open-redis.js';
import type { Storage } from '../../src/storage/storage.js';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { startRedis, type RedisServer } from '../helpers/redis-process.js';
import { startWebhookServer, type TestWebhookServer } from '../helpers/webhook-server.js';
import { eventually, restFor } from './rest.js';

let hooks: TestWebhookServer;
let redis: RedisServer | undefined;

before(async () => {
  hooks = await startWebhookServer(['localhost']);
  hooks.handle('/deny', (call) => {
    const review = call.body as { request: { uid: string } };
    return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: false, status: { message: 'denied' } } };
  });
});

after(async () => {
  await hooks.stop();
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
      const url = redis.url;
      return [await connectRedisBackend({ url, keyPrefix, historyMs: 300_000 }), await connectRedisBackend({ url, keyPrefix, historyMs: 300_000 })];
    },
  },
];

for (const backend of backends) {
  test(`${backend.name}: a configuration written through one server governs writes through another`, async () => {
    const [storeA, storeB] = await backend.open();
    const servers: TestServer[] = [await startTestServer({}, storeA), await startTestServer({}, storeB, { runControllers: false })];
    try {
      const [a, b] = servers.map((s) => restFor(s.url));
      const ns = await a.namespace('whp');
      const name = `${ns}-deny`;
      const path = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
      const cm = (n: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n } });
      const config = await a.create(path, {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name },
        webhooks: [
          {
            name: 'deny.example.com',
            clientConfig: { url: `https://localhost:${hooks.port}/deny`, caBundle: hooks.certs.caBundle },
            rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
          },
        ],
      });
      let i = 0;
      const started = Date.now();
      await eventually('server B to deny', async () =>
        (await b.post(`/api/v1/namespaces/${ns}/configmaps`, cm(`c${i++}`))).status === 400 ? true : undefined,
      );
      const took = Date.now() - started;
      assert.ok(took < 2000, `took ${took} ms`);
      // A change of the selector: the webhook no longer sees this namespace.
      config.webhooks[0].namespaceSelector = { matchLabels: { 'kubernetes.io/metadata.name': 'elsewhere' } };
      const updated = await a.put(`${path}/${name}`, config);
      assert.equal(updated.status, 200, updated.text);
      await eventually('server B to allow', async () =>
        (await b.post(`/api/v1/namespaces/${ns}/configmaps`, cm(`c${i++}`))).status === 201 ? true : undefined,
      );
      updated.body.webhooks[0].namespaceSelector = {};
      updated.body.webhooks[0].objectSelector = { matchLabels: { deny: 'me' } };
      assert.equal((await a.put(`${path}/${name}`, updated.body)).status, 200);
      const labelled = (n: string) => ({ ...cm(n), metadata: { name: n, labels: { deny: 'me' } } });
      await eventually('server B to deny again', async () =>
        (await b.post(`/api/v1/namespaces/${ns}/configmaps`, labelled(`c${i++}`))).status === 400 ? true : undefined,
      );
      assert.equal((await a.del(`${path}/${name}`)).status, 200);
      await eventually('server B to allow after the delete', async () =>
        (await b.post(`/api/v1/namespaces/${ns}/configmaps`, labelled(`c${i++}`))).status === 201 ? true : undefined,
      );
    } finally {
      // Each server closes its store.
      for (const s of servers.reverse()) await s.stop();
    }
  });
}
