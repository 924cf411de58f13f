/**
 * SPEC 4.6 and 6: watch ordering and exactly-once delivery, start points, selectors, 410, bookmarks,
 * streaming lists and slow readers, on every storage backend.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { allBackends } from '../helpers/backends.js';
import { api, startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';
import { openWatch, type WatchEvent } from '../helpers/watch-client.js';

const JSON_HEADERS = { 'content-type': 'application/json' };

async function mkNamespace(url: string): Promise<string> {
  const name = uniqueName('w');
  const r = await api(url, '/api/v1/namespaces', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ metadata: { name } }) });
  assert.equal(r.status, 201, r.text);
  return name;
}

async function create(url: string, ns: string, name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}): Promise<any> {
  const r = await api(url, `/api/v1/namespaces/${ns}/configmaps`, {
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify({ metadata: { name, labels }, data }),
  });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

async function patch(url: string, ns: string, name: string, body: unknown): Promise<any> {
  const r = await api(url, `/api/v1/namespaces/${ns}/configmaps/${name}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify(body),
  });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

async function del(url: string, ns: string, name: string): Promise<void> {
  const r = await api(url, `/api/v1/namespaces/${ns}/configmaps/${name}`, { method: 'DELETE' });
  assert.equal(r.status, 200, r.text);
}

function summary(events: WatchEvent[]): Array<[string, string]> {
  return events.map((e) => [e.type, e.object.metadata.name as string]);
}

for (const backend of allBackends()) {
  describe(`watch (${backend.name})`, () => {
    let s: TestServer;
    before(async () => {
      s = await startTestServer({}, await backend.open(), { bookmarkIntervalMs: 300, maxWatchBacklogBytes: 2 * 1024 * 1024 });
    });
    after(async () => {
      await s.stop();
      await backend.stop();
    });

    test('events arrive in resourceVersion order, each exactly once, under concurrent writes', async () => {
      const ns = await mkNamespace(s.url);
      const list = await api(s.url, `/api/v1/namespaces/${ns}/configmaps`);
      const w = await openWatch(s.url, `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${list.body.metadata.resourceVersion}`);
      assert.equal(w.status, 200);
      assert.match(String(w.headers['content-type']), /application\/json/);
      assert.equal(w.headers['transfer-encoding'], 'chunked');
      const acknowledged: string[] = [];
      const names = Array.from({ length: 40 }, (_, i) => `c-${i}`);
      await Promise.all(
        names.map(async (n) => {
          acknowledged.push((await create(s.url, ns, n)).metadata.resourceVersion);
          acknowledged.push((await patch(s.url, ns, n, { data: { x: '1' } })).metadata.resourceVersion);
        }),
      );
      await Promise.all(names.slice(0, 10).map(async (n) => del(s.url, ns, n)));
      const total = names.length * 2 + 10;
      const events = await w.waitFor((e) => e.length >= total, 10_000);
      w.close();
      assert.equal(events.length, total);
      const rvs = events.map((e) => BigInt(e.object.metadata.resourceVersion));
      for (let i = 1; i < rvs.length; i++) assert.ok(rvs[i] > rvs[i - 1], 'strictly increasing');
      const seen = new Set(events.map((e) => e.object.metadata.resourceVersion as string));
      for (const rv of acknowledged) assert.ok(seen.has(rv), `acknowledged write ${rv} delivered`);
      assert.equal(events.filter((e) => e.type === 'DELETED').length, 10);
    });

    test('a watch from version V delivers every change after V and nothing at or before it', async () => {
      const ns = await mkNamespace(s.url);
      const a = await create(s.url, ns, 'a');
      await create(s.url, ns, 'b');
      await patch(s.url, ns, 'a', { data: { k: 'v' } });
      const w = await openWatch(s.url, `/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=${a.metadata.resourceVersion}`);
      const events = await w.waitFor((e) => e.length >= 2);
      await new Promise((r) => setTimeout(r, 100));
      w.close();
      assert.deepEqual(summary(events), [
        ['ADDED', 'b'],
        ['MODIFIED', 'a'],
      ]);
    });

    test('rv unset and "0" begin with synthetic ADDED events for the current state', async () => {
      const ns = await mkNamespace(s.url);
      await create(s.url, ns, 'p');
      await create(s.url, ns, 'q');
      for (const q of ['', '&resourceVersion=0']) {
        const w = await openWatch(s.url, `/api/v1/namespaces/${ns}/configmaps?watch=1${q}`);
        await w.waitFor((e) => e.length >= 2);
        await create(s.url, ns, `r${q ? '0' : ''}`);
        const events = await w.waitFor((e) => e.length >= 3);
        w.close();
        assert.deepEqual(summary(events).slice(0, 2), [
          ['ADDED', 'p'],
          ['ADDED', 'q'],
        ]);
        assert.equal(events[2]?.type, 'ADDED');
      }
    });

    test('selectors apply to watches: leaving the selection is DELETED, entering is ADDED', async () => {
      const ns = await mkNamespace(s.url);
      const list = await api(s.url, `/api/v1/namespaces/${ns}/configmaps`);
      const w = await openWatch(
        s.url,
        `/api/v1/namespaces/${ns}/configmaps?watch=1&labelSelector=color%3Dblue&resourceVersion=${list.body.metadata.resourceVersion}`,
      );
      await create(s.url, ns, 'x', { color: 'red' });
      await patch(s.url, ns, 'x', { metadata: { labels: { color: 'blue' } } });
      await patch(s.url, ns, 'x', { data: { more: '1' } });
      const left = await patch(s.url, ns, 'x', { metadata: { labels: { color: 'red' } } });
      await del(s.url, ns, 'x');
      await create(s.url, ns, 'y', { color: 'blue' });
      const events = await w.waitFor((e) => e.length >= 4);
      await new Promise((r) => setTimeout(r, 100));
      w.close();
      assert.deepEqual(summary(events), [
        ['ADDED', 'x'],
        ['MODIFIED', 'x'],
        ['DELETED', 'x'],
        ['ADDED', 'y'],
      ]);
      // kube's watch cache: the DELETED of an object leaving the selection carries its previous
      // content (the last one that matched) with the resourceVersion of the change that left.
      assert.deepEqual(events[2]?.object.metadata.labels, { color: 'blue' });
      assert.deepEqual(events[2]?.object.data, { more: '1' });
      assert.equal(events[2]?.object.metadata.resourceVersion, left.metadata.resourceVersion);
      const field = await openWatch(s.url, `/api/v1/namespaces/${ns}/configmaps?watch=1&fieldSelector=metadata.name%3Dy`);
      const fe = await field.waitFor((e) => e.length >= 1);
      field.close();
      assert.deepEqual(summary(fe), [['ADDED', 'y']]);
    });

    test("pod watches by spec.nodeName, as kubelets and the scheduler hold them, see exactly their node's pods", async () => {
      const pods = '/api/v1/namespaces/default/pods';
      const node = (n: string): string => uniqueName(`node-${n}`);
      const [a, b, c] = [node('a'), node('b'), node('c')];
      const pod = async (name: string, nodeName?: string): Promise<string> => {
        const spec = { ...(nodeName !== undefined && { nodeName }), containers: [{ name: 'c', image: 'nginx' }] };
        const r = await api(s.url, pods, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ metadata: { name }, spec }) });
        assert.equal(r.status, 201, r.text);
        return r.body.metadata.resourceVersion as string;
      };
      const [p1, p2, p3, p4] = ['p1', 'p2', 'p3', 'p4'].map((p) => uniqueName(p));
      const rv = (await api(s.url, `${pods}?limit=1`)).body.metadata.resourceVersion;
      const watch = (selector: string): Promise<Awaited<ReturnType<typeof openWatch>>> =>
        openWatch(s.url, `${pods}?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}&fieldSelector=${encodeURIComponent(selector)}`);
      const onA = await watch(`spec.nodeName=${a}`);
      const onB = await watch(`spec.nodeName=${b}`);
      const onC = await watch(`spec.nodeName=${c}`);
      const unassigned = await watch('spec.nodeName=');
      const p2OnB = await watch(`spec.nodeName=${b},metadata.name=${p2}`);
      const p2OnA = await watch(`spec.nodeName=${a},metadata.name=${p2}`);

      await pod(p1);
      const bound = await api(s.url, `${pods}/${p1}/binding`, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({ apiVersion: 'v1', kind: 'Binding', metadata: { name: p1 }, target: { apiVersion: 'v1', kind: 'Node', name: a } }),
      });
      assert.equal(bound.status, 201, bound.text);
      await pod(p2, b);
      const status = await api(s.url, `${pods}/${p1}/status`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ status: { message: 'running' } }),
      });
      assert.equal(status.status, 200, status.text);
      for (const name of [p2, p1]) assert.equal((await api(s.url, `${pods}/${name}?gracePeriodSeconds=0`, { method: 'DELETE' })).status, 200);
      // The last writes: each watch's last event comes from one of them, so anything it should not
      // have been sent would have come before.
      await pod(p3, c);
      const lastVersion = await pod(p4);

      const last = (w: Awaited<ReturnType<typeof openWatch>>, type: string, name: string) =>
        w
          .waitFor((events) => events.some((e) => e.type === type && e.object.metadata.name === name))
          .then((events) => events.filter((e) => e.type !== 'BOOKMARK'));
      assert.deepEqual(summary(await last(onA, 'DELETED', p1)), [
        ['ADDED', p1],
        ['MODIFIED', p1],
        ['DELETED', p1],
      ]);
      assert.deepEqual(summary(await last(onB, 'DELETED', p2)), [
        ['ADDED', p2],
        ['DELETED', p2],
      ]);
      assert.deepEqual(summary(await last(onC, 'ADDED', p3)), [['ADDED', p3]]);
      assert.deepEqual(summary(await last(unassigned, 'ADDED', p4)), [
        ['ADDED', p1],
        ['DELETED', p1],
        ['ADDED', p4],
      ]);
      assert.deepEqual(summary(await last(p2OnB, 'DELETED', p2)), [
        ['ADDED', p2],
        ['DELETED', p2],
      ]);
      // Binding p1 to a: the unassigned watch's DELETED carries the pod as it last matched (no node).
      assert.equal(unassigned.events.filter((e) => e.type !== 'BOOKMARK')[1]?.object.spec.nodeName, undefined);
      assert.equal(onA.events.find((e) => e.type !== 'BOOKMARK')?.object.spec.nodeName, a);
      // p2OnA matches nothing. Its bookmarks still move on with every change of the type: once one
      // reaches p4's creation, it has been handed every change, and none was sent.
      const through = await p2OnA.waitFor((events) =>
        events.some((e) => e.type === 'BOOKMARK' && BigInt(e.object.metadata.resourceVersion as string) >= BigInt(lastVersion)),
      );
      assert.deepEqual(
        through.filter((e) => e.type !== 'BOOKMARK'),
        [],
      );
      for (const w of [onA, onB, onC, unassigned, p2OnB, p2OnA]) w.close();
    });

    test("a watch on one object's /watch/ path sees only that object; ?watch=1 on an object path is a plain get", async () => {
      const ns = await mkNamespace(s.url);
      const one = await create(s.url, ns, 'one');
      const get = await api(s.url, `/api/v1/namespaces/${ns}/configmaps/one?watch=1`);
      assert.equal(get.status, 200);
      assert.equal(get.body.kind, 'ConfigMap');
      const w = await openWatch(s.url, `/api/v1/watch/namespaces/${ns}/configmaps/one?resourceVersion=${one.metadata.resourceVersion}`);
      await create(s.url, ns, 'two');
      await patch(s.url, ns, 'one', { data: { a: 'b' } });
      const events = await w.waitFor((e) => e.length >= 1);
      await new Promise((r) => setTimeout(r, 100));
      w.close();
      assert.deepEqual(summary(events), [['MODIFIED', 'one']]);
    });

    test('bookmarks carry only kind, apiVersion and metadata.resourceVersion; timeoutSeconds ends the stream cleanly', async () => {
      const ns = await mkNamespace(s.url);
      const c = await create(s.url, ns, 'bm');
      const w = await openWatch(
        s.url,
        `/api/v1/namespaces/${ns}/configmaps?watch=1&allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion=${c.metadata.resourceVersion}`,
      );
      await w.ended;
      const bookmarks = w.events.filter((e) => e.type === 'BOOKMARK');
      assert.ok(bookmarks.length >= 1, 'a bookmark before the timeout closes the watch');
      for (const b of bookmarks) {
        assert.deepEqual(Object.keys(b.object).sort(), ['apiVersion', 'kind', 'metadata']);
        assert.equal(b.object.kind, 'ConfigMap');
        assert.equal(b.object.apiVersion, 'v1');
        assert.deepEqual(Object.keys(b.object.metadata), ['resourceVersion']);
        assert.ok(BigInt(b.object.metadata.resourceVersion) >= BigInt(c.metadata.resourceVersion));
      }
      const noBookmarks = await openWatch(s.url, `/api/v1/namespaces/${ns}/configmaps?watch=1&timeoutSeconds=1&resourceVersion=${c.metadata.resourceVersion}`);
      await noBookmarks.ended;
      assert.equal(noBookmarks.events.filter((e) => e.type === 'BOOKMARK').length, 0);
    });

    test('streaming list: initial ADDED events, then a BOOKMARK marked initial-events-end, then changes', async () => {
      const ns = await mkNamespace(s.url);
      await create(s.url, ns, 's1');
      await create(s.url, ns, 's2');
      const w = await openWatch(
        s.url,
        `/api/v1/namespaces/${ns}/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
      );
      const initial = await w.waitFor((e) => e.some((x) => x.type === 'BOOKMARK'));
      assert.deepEqual(summary(initial.slice(0, 2)), [
        ['ADDED', 's1'],
        ['ADDED', 's2'],
      ]);
      const bookmark = initial[2];
      assert.equal(bookmark.type, 'BOOKMARK');
      assert.deepEqual(bookmark.object.metadata.annotations, { 'k8s.io/initial-events-end': 'true' });
      const list = await api(s.url, `/api/v1/namespaces/${ns}/configmaps`);
      assert.ok(BigInt(bookmark.object.metadata.resourceVersion) >= BigInt(list.body.items[1].metadata.resourceVersion));
      await create(s.url, ns, 's3');
      const all = await w.waitFor((e) => e.some((x) => x.type === 'ADDED' && x.object.metadata.name === 's3'));
      w.close();
      assert.equal(all.filter((e) => e.type === 'ADDED').length, 3);
    });

    test('Table watches: one-row Tables, column definitions only on the first event', async () => {
      const ns = await mkNamespace(s.url);
      await create(s.url, ns, 'ta');
      const w = await openWatch(s.url, `/api/v1/namespaces/${ns}/configmaps?watch=1`, {
        accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
      });
      assert.match(String(w.headers['content-type']), /as=Table/);
      await w.waitFor((e) => e.length >= 1);
      await create(s.url, ns, 'tb');
      const events = await w.waitFor((e) => e.length >= 2);
      w.close();
      const [first, second] = events as [WatchEvent, WatchEvent];
      assert.equal(first.object.kind, 'Table');
      assert.ok(Array.isArray(first.object.columnDefinitions) && first.object.columnDefinitions.length > 0);
      assert.equal(first.object.rows.length, 1);
      assert.equal(first.object.rows[0].cells[0], 'ta');
      assert.equal(second.object.columnDefinitions, null);
      assert.equal(second.object.rows[0].cells[0], 'tb');
    });

    test('streaming list parameter combinations answer 422 on ListOptions, as kube-apiserver validates them', async () => {
      const base = '/api/v1/namespaces/default/configmaps?watch=1';
      const cases: Array<[string, RegExp]> = [
        [
          `${base}&sendInitialEvents=true&allowWatchBookmarks=true`,
          /^ListOptions\.meta\.k8s\.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan$/,
        ],
        [
          `${base}&sendInitialEvents=true&resourceVersionMatch=Exact&allowWatchBookmarks=true&resourceVersion=1`,
          /^ListOptions\.meta\.k8s\.io "" is invalid: \[resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"\]$/,
        ],
        [
          `${base}&resourceVersionMatch=NotOlderThan&resourceVersion=1`,
          /^ListOptions\.meta\.k8s\.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided$/,
        ],
      ];
      for (const [path, message] of cases) {
        const r = await api(s.url, path);
        assert.equal(r.status, 422, path);
        assert.equal(r.body.reason, 'Invalid', path);
        assert.equal(r.body.details.kind, 'ListOptions', path);
        assert.equal(r.body.details.group, 'meta.k8s.io', path);
        assert.match(r.body.message, message, path);
      }
    });

    test('a slow reader is closed when its backlog passes the bound; writers and other watchers are unaffected', async () => {
      const ns = await mkNamespace(s.url);
      const list = await api(s.url, `/api/v1/namespaces/${ns}/configmaps`);
      const from = list.body.metadata.resourceVersion;
      const slow = await openWatch(s.url, `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${from}`);
      slow.pause();
      const fast = await openWatch(s.url, `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${from}`);
      const big = 'x'.repeat(64 * 1024);
      const started = Date.now();
      // Enough bytes to fill the kernel's socket buffers on both ends (several MiB on loopback).
      for (let i = 0; i < 300; i++) await create(s.url, ns, `big-${i}`, {}, { big });
      assert.ok(Date.now() - started < 30_000, 'writes are not blocked by the slow reader');
      const got = await fast.waitFor((e) => e.length >= 300, 15_000);
      assert.equal(got.length, 300);
      fast.close();
      slow.resume();
      await slow.ended;
      assert.ok(slow.events.length < 300, `the slow watcher was cut off (got ${slow.events.length})`);
    });
  });

  describe(`watch past the history window (${backend.name})`, () => {
    let s: TestServer;
    before(async () => {
      s = await startTestServer({}, await backend.open({ historyMaxEvents: 5 }));
    });
    after(async () => {
      await s.stop();
      await backend.stop();
    });

    test('a start version older than the history: ERROR event with a 410 Expired Status, then the stream ends', async () => {
      const first = await create(s.url, 'default', uniqueName('old'));
      for (let i = 0; i < 10; i++) await create(s.url, 'default', uniqueName('n'));
      const w = await openWatch(s.url, `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${first.metadata.resourceVersion}`);
      await w.ended;
      assert.equal(w.status, 200);
      assert.equal(w.events.length, 1);
      const e = w.events[0];
      assert.equal(e.type, 'ERROR');
      assert.equal(e.object.kind, 'Status');
      assert.equal(e.object.code, 410);
      assert.equal(e.object.reason, 'Expired');
      assert.match(e.object.message, /^too old resource version: \d+ \(\d+\)$/);
    });
  });
}
