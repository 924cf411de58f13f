/**
 * Consistency across the workers of `capstan --storage=redis --workers 2`: a watch held on one
 * worker sees every write made through many connections (both workers) exactly once and in
 * resourceVersion order; a protobuf watch's frames, the other worker's changes and deletions
 * included, are byte for byte a fresh encoding's; a chunked LIST whose pages are served by different
 * workers is one snapshot; a @kubernetes/client-node informer sees every change and ends equal to a LIST.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1ConfigMap, V1ConfigMapList } from '@kubernetes/client-node';
import { createNamespace, eventually, fresh, startRedisWorkers, workersThatServed, type RedisWorkers } from '../helpers/redis-workers.js';
import { contiguityProblem, ResumingWatch } from '../helpers/resuming-watch.js';
import { request } from 'node:http';
import { decodeProtobufWatchEvent, encodeProtobufWatchFrame } from '../../src/codec/protobuf/protobuf-codec.js';
import { splitFrames } from '../../src/codec/protobuf/envelope.js';

let env: RedisWorkers;

before(async () => {
  env = await startRedisWorkers({ args: ['--log-level', 'info'] });
});

after(async () => {
  await env?.stop();
});

interface Ack {
  op: 'create' | 'update' | 'delete';
  name: string;
  rv: string;
  v: string;
}

async function write(ns: string, op: Ack['op'], name: string, v: string): Promise<Ack> {
  const base = `/api/v1/namespaces/${ns}/configmaps`;
  const r =
    op === 'create'
      ? await fresh(env.url, base, { method: 'POST', body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v } } })
      : op === 'update'
        ? await fresh(env.url, `${base}/${name}`, { method: 'PATCH', contentType: 'application/merge-patch+json', body: { data: { v } } })
        : await fresh(env.url, `${base}/${name}`, { method: 'DELETE' });
  assert.ok(r.status === 200 || r.status === 201, `${op} ${name}: ${r.status} ${r.text}`);
  // DELETE of a ConfigMap answers with a Success Status (no resourceVersion), as kube does.
  return { op, name, rv: op === 'delete' ? '' : String(r.body?.metadata?.resourceVersion), v };
}

async function configmapsRv(): Promise<string> {
  const r = await fresh(env.url, '/api/v1/configmaps?limit=1');
  assert.equal(r.status, 200, r.text);
  return String(r.body.metadata.resourceVersion);
}

describe('cross-worker consistency', () => {
  test('a watch on one connection sees writes through 8 concurrent clients exactly once, in order', async () => {
    const ns = 'xw-watch';
    await createNamespace(env.url, ns);
    const from = await configmapsRv();
    const watch = new ResumingWatch(env.url, { path: '/api/v1/configmaps', fromRv: from });
    await watch.start();
    try {
      const acks: Ack[] = [];
      await Promise.all(
        Array.from({ length: 8 }, async (_, c) => {
          for (let i = 0; i < 6; i++) {
            const name = `c${c}-${i}`;
            acks.push(await write(ns, 'create', name, '1'));
            acks.push(await write(ns, 'update', name, '2'));
            if (i % 2 === 0) acks.push(await write(ns, 'delete', name, '2'));
          }
        }),
      );
      const through = await configmapsRv();
      await watch.waitForRv(through, 15_000);
      assert.equal(watch.opened, 1, 'the watch stayed on its first connection');
      assert.deepEqual(watch.errors, []);
      assert.equal(contiguityProblem(watch.events, from, through), undefined);
      assert.equal(watch.events.length, acks.length);
      const byRv = new Map(watch.events.map((e) => [e.rv, e]));
      const deletes = new Map(watch.events.filter((e) => e.type === 'DELETED').map((e) => [String(e.object.metadata.name), e]));
      const type = { create: 'ADDED', update: 'MODIFIED', delete: 'DELETED' } as const;
      for (const a of acks) {
        const e = a.op === 'delete' ? deletes.get(a.name) : byRv.get(a.rv);
        assert.ok(e, `no event for ${a.op} ${a.name} at ${a.rv}`);
        assert.equal(e.type, type[a.op]);
        assert.equal(e.object.metadata.name, a.name);
        assert.equal(e.object.data.v, a.v);
      }
    } finally {
      await watch.stop();
    }
    assert.deepEqual(workersThatServed(env.cap.stderr(), `/namespaces/${ns}/configmaps`), [0, 1]);
  });

  test('a protobuf watch gets, for writes through both workers, byte for byte the frames of a fresh encoding, deletions included', async () => {
    const ns = 'xw-proto';
    await createNamespace(env.url, ns);
    const from = await configmapsRv();
    const received: Buffer[] = [];
    const watch = request(`${env.url}/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${from}`, {
      headers: { Accept: 'application/vnd.kubernetes.protobuf;stream=watch' },
    });
    const opened = new Promise<void>((resolve, reject) => {
      watch.on('response', (res) => {
        assert.equal(res.statusCode, 200);
        res.on('data', (chunk: Buffer) => received.push(chunk));
        resolve();
      });
      watch.on('error', reject);
    });
    watch.end();
    await opened;
    try {
      // Stored texts by version, from the write responses (the stored object, as JSON).
      const texts = new Map<string, string>();
      // The last stored text of each deleted object, by name.
      const removed = new Map<string, string>();
      const writes: Promise<void>[] = [];
      for (let c = 0; c < 6; c++) {
        writes.push(
          (async () => {
            const name = `p${c}`;
            const base = `/api/v1/namespaces/${ns}/configmaps`;
            const body = {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name, labels: { c: String(c) }, annotations: { note: 'x'.repeat(40 * c) } },
              data: { v: '1' },
            };
            const created = await fresh(env.url, base, { method: 'POST', body });
            assert.equal(created.status, 201, created.text);
            texts.set(String(created.body?.metadata?.resourceVersion), created.text);
            const patched = await fresh(env.url, `${base}/${name}`, {
              method: 'PATCH',
              contentType: 'application/merge-patch+json',
              body: { data: { v: '2' } },
            });
            assert.equal(patched.status, 200, patched.text);
            texts.set(String(patched.body?.metadata?.resourceVersion), patched.text);
            if (c % 2 === 0) {
              const deleted = await fresh(env.url, `${base}/${name}`, { method: 'DELETE' });
              assert.equal(deleted.status, 200, deleted.text);
              removed.set(name, patched.text);
            }
          })(),
        );
      }
      await Promise.all(writes);
      let frames: Buffer[] = [];
      const count = texts.size + removed.size;
      await eventually(() => (frames = splitFrames(Buffer.concat(received)).frames).length >= count, `${count} protobuf frames`);
      assert.equal(frames.length, count);
      for (const frame of frames) {
        const event = decodeProtobufWatchEvent(frame);
        const metadata = event.object.metadata as { name?: unknown; resourceVersion?: unknown };
        const rv = String(metadata.resourceVersion);
        let object: Record<string, unknown>;
        if (event.type === 'DELETED') {
          // A deletion's object is the last stored one with the deletion's version.
          const last = removed.get(String(metadata.name));
          assert.ok(last !== undefined, `a deletion of ${String(metadata.name)}, which was not deleted`);
          const parsed = JSON.parse(last) as { metadata: Record<string, unknown> };
          assert.ok(BigInt(rv) > BigInt(String(parsed.metadata.resourceVersion)), `the deletion of ${String(metadata.name)} carries its own version`);
          object = { ...parsed, metadata: { ...parsed.metadata, resourceVersion: rv } };
        } else {
          const text = texts.get(rv);
          assert.ok(text !== undefined, `a frame at ${rv}, which no write answered`);
          object = JSON.parse(text) as Record<string, unknown>;
        }
        const expected = encodeProtobufWatchFrame(event.type, object);
        assert.deepEqual(frame, expected.subarray(4), `the ${event.type} frame at ${rv} is byte for byte a fresh encoding of the object`);
      }
      // Every worker wrote some: the watch's worker had the other's changes from its stream reader.
      assert.deepEqual(workersThatServed(env.cap.stderr(), `/namespaces/${ns}/configmaps`), [0, 1]);
    } finally {
      watch.destroy();
    }
  });

  test('a chunked LIST (limit=2) continued on fresh connections is one snapshot', async () => {
    const ns = 'xw-chunks';
    await createNamespace(env.url, ns);
    const before: Record<string, string> = {};
    for (let i = 0; i < 9; i++) before[`item-${i}`] = (await write(ns, 'create', `item-${i}`, '1')).rv;
    const pages: any[] = [];
    let cont: string | undefined;
    let n = 0;
    let previousWorker: number | undefined;
    do {
      // Each page on a fresh connection, asked again (a page of a snapshot reads the same) until a
      // worker other than the previous page's served it: where the primary hands a connection
      // depends on the workers' load, and the point is pages served by different workers.
      let page: Awaited<ReturnType<typeof fresh>> | undefined;
      for (let attempt = 0; attempt < 20; attempt++) {
        const tag = `chunk=p${n}a${attempt}x`;
        page = await fresh(env.url, `/api/v1/namespaces/${ns}/configmaps?limit=2${cont ? `&continue=${encodeURIComponent(cont)}` : ''}&${tag}`);
        assert.equal(page.status, 200, page.text);
        let served: number[] = [];
        await eventually(() => (served = workersThatServed(env.cap.stderr(), tag)).length > 0, `the request log line of ${tag}`);
        if (served[0] !== previousWorker) {
          previousWorker = served[0];
          break;
        }
      }
      assert.ok(page);
      pages.push(page.body);
      cont = page.body.metadata.continue || undefined;
      // Between pages: writes that the snapshot must not show, through other connections.
      await write(ns, 'update', `item-${[3, 5, 7, 4, 6][n] ?? 0}`, `changed-${n}`);
      await write(ns, 'create', `item-${n}-new`, '1');
      if (n === 1) await write(ns, 'delete', 'item-8', '');
      n++;
    } while (cont !== undefined);
    assert.equal(pages.length, 5);
    const rvs = new Set(pages.map((p) => p.metadata.resourceVersion));
    assert.equal(rvs.size, 1, `every page has the first page's resourceVersion: ${[...rvs].join(', ')}`);
    const items = pages.flatMap((p) => p.items as any[]);
    assert.deepEqual(Object.fromEntries(items.map((i) => [i.metadata.name, i.metadata.resourceVersion])), before);
    assert.ok(
      items.every((i) => i.data.v === '1'),
      'no page shows a later write',
    );
    assert.deepEqual(
      pages.map((p) => p.metadata.remainingItemCount),
      [7, 5, 3, 1, undefined],
    );
    const servers = workersThatServed(env.cap.stderr(), 'chunk=');
    assert.deepEqual(servers, [0, 1], 'pages were served by both workers');
  });
});

describe('client-node informer across workers', () => {
  test('sees every create, update and delete made through other connections; its cache ends equal to LIST', async () => {
    const ns = 'xw-informer';
    await createNamespace(env.url, ns);
    const k8s = await import('@kubernetes/client-node');
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(env.kubeconfig);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${ns}/configmaps`, (): Promise<V1ConfigMapList> =>
      core.listNamespacedConfigMap({ namespace: ns }),
    );
    const seen: { event: string; name: string; rv: string; v: string | undefined }[] = [];
    const errors: unknown[] = [];
    let stopped = false;
    const record =
      (event: string) =>
      (o: V1ConfigMap): void => {
        seen.push({ event, name: o.metadata?.name ?? '', rv: o.metadata?.resourceVersion ?? '', v: o.data?.v });
      };
    informer.on(k8s.ADD, record('add'));
    informer.on(k8s.UPDATE, record('update'));
    informer.on(k8s.DELETE, record('delete'));
    informer.on(k8s.ERROR, (err: unknown) => {
      errors.push(err);
      if (!stopped)
        setTimeout(() => {
          if (!stopped) void informer.start();
        }, 100);
    });
    await informer.start();
    try {
      const acks: Ack[] = [];
      await Promise.all(
        Array.from({ length: 4 }, async (_, c) => {
          for (let i = 0; i < 5; i++) {
            const name = `inf-${c}-${i}`;
            acks.push(await write(ns, 'create', name, '1'));
            acks.push(await write(ns, 'update', name, '2'));
            if (i % 2 === 1) acks.push(await write(ns, 'delete', name, '2'));
          }
        }),
      );
      const list = await fresh(env.url, `/api/v1/namespaces/${ns}/configmaps`);
      assert.equal(list.status, 200);
      const expected = (list.body.items as any[]).map((i) => `${String(i.metadata.name)}@${String(i.metadata.resourceVersion)}`).sort();
      const cache = (): string[] =>
        informer
          .list(ns)
          .map((o) => `${o.metadata?.name ?? ''}@${o.metadata?.resourceVersion ?? ''}`)
          .sort();
      await eventually(() => cache().join() === expected.join(), 'informer cache to equal LIST', 15_000).catch((err: unknown) => {
        throw new Error(`${String(err)}\ncache: ${cache().join(' ')}\nlist:  ${expected.join(' ')}`);
      });
      assert.deepEqual(errors, []);
      const kind = { create: 'add', update: 'update', delete: 'delete' } as const;
      // A deletion's resourceVersion is not in the DELETE answer (a Status): compare deletes by name.
      const events = seen.map((s) => `${s.event} ${s.name} ${s.v ?? ''} ${s.event === 'delete' ? '' : s.rv}`);
      const wanted = acks.map((a) => `${kind[a.op]} ${a.name} ${a.v} ${a.rv}`);
      // Every acknowledged change exactly once (the informer's initial list was empty).
      assert.deepEqual([...events].sort(), [...wanted].sort());
      // Per object, in the order the writes happened.
      for (const name of new Set(acks.map((a) => a.name))) {
        assert.deepEqual(
          seen.filter((s) => s.name === name).map((s) => s.event),
          acks.filter((a) => a.name === name).map((a) => kind[a.op]),
        );
        const rvs = seen.filter((s) => s.name === name).map((s) => BigInt(s.rv));
        assert.ok(
          rvs.every((rv, i) => i === 0 || rv > (rvs[i - 1] ?? 0n)),
          `${name}: versions increase`,
        );
      }
    } finally {
      stopped = true;
      await informer.stop();
    }
  });
});
