/**
 * SPEC 4.5: chunked lists on every backend: consistent pages under concurrent writes, ordering,
 * remainingItemCount, tamper-evident and expiring continue tokens.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { allBackends } from '../helpers/backends.js';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';

function cmBody(name: string, labels: Record<string, string> = {}): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data: { v: name } });
}

async function post(url: string, ns: string, name: string, labels: Record<string, string> = {}): Promise<any> {
  const r = await api(url, `/api/v1/namespaces/${ns}/configmaps`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: cmBody(name, labels),
  });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

async function mkNamespace(url: string, name: string): Promise<void> {
  const r = await api(url, '/api/v1/namespaces', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }),
  });
  assert.equal(r.status, 201, r.text);
}

/** kube's 410 for a page whose snapshot is gone, which offers a token for the rest (etcd3's inconsistentContinue). */
const INCONSISTENT_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, ' +
  'or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an ' +
  'inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/** Follows continue tokens from `path` (from `start` when given); returns every page. */
async function allPages(url: string, path: string, between?: (page: number) => Promise<void>, start = ''): Promise<any[]> {
  const pages: any[] = [];
  let cont = start;
  for (let i = 0; i < 1000; i++) {
    const sep = path.includes('?') ? '&' : '?';
    const r = await api(url, `${path}${cont ? `${sep}continue=${encodeURIComponent(cont)}` : ''}`);
    assert.equal(r.status, 200, r.text);
    pages.push(r.body);
    cont = r.body.metadata.continue ?? '';
    if (!cont) break;
    if (between) await between(i);
  }
  return pages;
}

for (const backend of allBackends()) {
  describe(`chunked lists (${backend.name})`, () => {
    let s: TestServer;
    let clock = Date.now();
    before(async () => {
      s = await startTestServer({}, await backend.open(), { now: () => clock });
      await mkNamespace(s.url, 'chunk-a');
      await mkNamespace(s.url, 'chunk-b');
      for (let i = 0; i < 12; i++) {
        await post(s.url, i % 2 === 0 ? 'chunk-b' : 'chunk-a', `cm-${String(i).padStart(2, '0')}`, { parity: i % 2 === 0 ? 'even' : 'odd' });
      }
    });
    after(async () => {
      await s.stop();
      await backend.stop();
    });

    test('pages hold at most limit items, share one resourceVersion, and ignore later writes', async () => {
      const path = '/api/v1/namespaces/chunk-a/configmaps?limit=2';
      let extra = 0;
      const pages = await allPages(s.url, path, async (i) => {
        // Writes between pages: a new object, a modification and a deletion must not show up.
        await post(s.url, 'chunk-a', `zz-late-${i}`);
        extra++;
        if (i === 0) {
          const del = await api(s.url, '/api/v1/namespaces/chunk-a/configmaps/cm-11', { method: 'DELETE' });
          assert.equal(del.status, 200);
        }
      });
      const rvs = new Set(pages.map((p) => p.metadata.resourceVersion));
      assert.equal(rvs.size, 1, "every page has the first page's resourceVersion");
      for (const p of pages) assert.ok(p.items.length <= 2);
      const names = pages.flatMap((p) => p.items.map((i: any) => i.metadata.name));
      assert.deepEqual(names, ['cm-01', 'cm-03', 'cm-05', 'cm-07', 'cm-09', 'cm-11']);
      assert.ok(extra >= 2);
      const after = await api(s.url, '/api/v1/namespaces/chunk-a/configmaps');
      const now = after.body.items.map((i: any) => i.metadata.name);
      assert.ok(!now.includes('cm-11') && now.includes('zz-late-0'), 'the writes did happen');
    });

    test('remainingItemCount while chunking, omitted on the last page and with selectors', async () => {
      const pages = await allPages(s.url, '/api/v1/namespaces/chunk-b/configmaps?limit=4');
      assert.equal(pages.length, 2);
      assert.equal(pages[0].metadata.remainingItemCount, 2);
      assert.equal(pages[1].metadata.remainingItemCount, undefined);
      assert.equal(pages[1].metadata.continue, undefined);
      const sel = await api(s.url, '/api/v1/namespaces/chunk-b/configmaps?limit=2&labelSelector=parity%3Deven');
      assert.ok(sel.body.metadata.continue);
      assert.equal(sel.body.metadata.remainingItemCount, undefined);
      const full = await api(s.url, '/api/v1/namespaces/chunk-b/configmaps');
      assert.equal(full.body.metadata.remainingItemCount, undefined);
      assert.equal(full.body.metadata.continue, undefined);
    });

    test('items are ordered by namespace, then name, across namespaces', async () => {
      const pages = await allPages(s.url, '/api/v1/configmaps?limit=5');
      const keys = pages.flatMap((p) => p.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`));
      const sorted = [...keys].sort((a, b) => (Buffer.from(a) < Buffer.from(b) ? -1 : 1));
      assert.deepEqual(keys, sorted);
      assert.ok(keys.indexOf('chunk-a/cm-01') < keys.indexOf('chunk-b/cm-00'));
    });

    test("a modified continue token is 400, never another collection's data", async () => {
      const first = await api(s.url, '/api/v1/namespaces/chunk-a/configmaps?limit=1');
      const token: string = first.body.metadata.continue;
      const tampered = [
        token.slice(0, 5) + (token[5] === 'A' ? 'B' : 'A') + token.slice(6),
        token.split('.')[0],
        'not-a-token',
        Buffer.from(JSON.stringify({ v: 1, rv: '1', start: 'chunk-b/', t: clock })).toString('base64url') + '.x',
      ];
      for (const t of tampered) {
        const r = await api(s.url, `/api/v1/namespaces/chunk-a/configmaps?limit=1&continue=${encodeURIComponent(t)}`);
        assert.equal(r.status, 400, t);
        assert.equal(r.body.reason, 'BadRequest');
        assert.match(r.body.message, /continue key is not valid/);
      }
    });

    test('a continue token expires after 5 minutes: 410 Expired', async () => {
      const first = await api(s.url, '/api/v1/namespaces/chunk-a/configmaps?limit=1');
      const token = encodeURIComponent(first.body.metadata.continue);
      clock += 4 * 60 * 1000;
      const ok = await api(s.url, `/api/v1/namespaces/chunk-a/configmaps?limit=1&continue=${token}`);
      assert.equal(ok.status, 200);
      clock += 2 * 60 * 1000;
      const expired = await api(s.url, `/api/v1/namespaces/chunk-a/configmaps?limit=1&continue=${token}`);
      assert.equal(expired.status, 410);
      assert.equal(expired.body.reason, 'Expired');
      assert.equal(expired.body.message, INCONSISTENT_CONTINUE);
      // As kube's 410 for a compacted page: a token for the rest, read at the latest state.
      const created = await post(s.url, 'chunk-a', 'cm-zz-after-expiry');
      const rest = await allPages(s.url, '/api/v1/namespaces/chunk-a/configmaps?limit=2', undefined, expired.body.metadata.continue);
      const names = rest.flatMap((p) => p.items.map((i: any) => i.metadata.name));
      assert.equal(names[0] > first.body.items[0].metadata.name, true, names.join(','));
      assert.equal(names.includes(first.body.items[0].metadata.name), false);
      const all = await api(s.url, '/api/v1/namespaces/chunk-a/configmaps');
      assert.deepEqual(
        names,
        all.body.items.map((i: any) => i.metadata.name).filter((n: string) => n > first.body.items[0].metadata.name),
      );
      assert.equal(names.includes('cm-zz-after-expiry'), true);
      assert.equal(BigInt(rest[0].metadata.resourceVersion) >= BigInt(created.metadata.resourceVersion), true);
      assert.notEqual(rest[0].metadata.resourceVersion, first.body.metadata.resourceVersion);
      // The rest's own tokens are consistent again: every page after the first shares its version.
      for (const page of rest) assert.equal(page.metadata.resourceVersion, rest[0].metadata.resourceVersion);
    });
  });

  describe(`an expired continue token of a type nobody writes (${backend.name})`, () => {
    let s: TestServer;
    let clock = Date.now();
    before(async () => {
      s = await startTestServer({}, await backend.open(), { now: () => clock });
      await mkNamespace(s.url, 'chunk-idle');
      for (let i = 0; i < 6; i++) {
        const r = await api(s.url, '/api/v1/namespaces/chunk-idle/podtemplates', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            apiVersion: 'v1',
            kind: 'PodTemplate',
            metadata: { name: `template-${i}` },
            template: { spec: { containers: [{ name: 'test', image: 'test2' }] } },
          }),
        });
        assert.equal(r.status, 201, r.text);
      }
    });
    after(async () => {
      await s.stop();
      await backend.stop();
    });

    test('the rest of the list is read at a version newer than the expired one, and that version serves reads and watches', async () => {
      // The conformance test "continue listing ... though the list is inconsistent": with one
      // revision for the cluster (kube's compactor writes one of its own), the inconsistent rest
      // never has the first page's version, even when nothing of the type was written.
      const path = '/api/v1/namespaces/chunk-idle/podtemplates';
      const first = await api(s.url, `${path}?limit=2`);
      assert.equal(first.status, 200, first.text);
      const firstRv: string = first.body.metadata.resourceVersion;
      clock += 6 * 60 * 1000;
      const expired = await api(s.url, `${path}?limit=2&continue=${encodeURIComponent(first.body.metadata.continue)}`);
      assert.equal(expired.status, 410, expired.text);
      assert.equal(expired.body.message, INCONSISTENT_CONTINUE);
      const rest = await allPages(s.url, `${path}?limit=2`, undefined, expired.body.metadata.continue);
      assert.deepEqual(
        rest.flatMap((p) => p.items.map((i: any) => i.metadata.name)),
        ['template-2', 'template-3', 'template-4', 'template-5'],
      );
      const restRv: string = rest[0].metadata.resourceVersion;
      assert.equal(BigInt(restRv) > BigInt(firstRv), true, `${restRv} after ${firstRv}`);
      assert.equal(rest[1].metadata.resourceVersion, restRv);
      assert.equal(rest[1].items.length, 2);
      assert.equal(rest[1].metadata.continue, undefined);
      // The new version is the type's current one: an Exact list and a plain list read it.
      const exact = await api(s.url, `${path}?resourceVersion=${restRv}&resourceVersionMatch=Exact`);
      assert.equal(exact.status, 200, exact.text);
      assert.equal(exact.body.metadata.resourceVersion, restRv);
      assert.equal(exact.body.items.length, 6);
      const plain = await api(s.url, path);
      assert.equal(plain.body.metadata.resourceVersion, restRv);
      // A second expiry of a token at that version moves it on again.
      const again = await api(s.url, `${path}?limit=2`);
      clock += 6 * 60 * 1000;
      const expiredAgain = await api(s.url, `${path}?limit=2&continue=${encodeURIComponent(again.body.metadata.continue)}`);
      assert.equal(expiredAgain.status, 410);
      const moved = (await api(s.url, path)).body.metadata.resourceVersion;
      assert.equal(BigInt(moved), BigInt(restRv) + 1n);
      // A watch from the moved version gets the next change, and nothing before it.
      const created = await api(s.url, `${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'v1',
          kind: 'PodTemplate',
          metadata: { name: 'template-9' },
          template: { spec: { containers: [{ name: 'test', image: 'test2' }] } },
        }),
      });
      assert.equal(created.status, 201, created.text);
      assert.equal(BigInt(created.body.metadata.resourceVersion), BigInt(moved) + 1n);
      const watched = await api(s.url, `${path}?watch=1&resourceVersion=${moved}&timeoutSeconds=1`);
      assert.equal(watched.status, 200);
      const events = watched.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.deepEqual(
        events.map((e) => [e.type, e.object.metadata.name]),
        [['ADDED', 'template-9']],
      );
    });
  });

  describe(`chunked lists past the history window (${backend.name})`, () => {
    let s: TestServer;
    before(async () => {
      s = await startTestServer({}, await backend.open({ historyMaxEvents: 5 }));
      for (let i = 0; i < 4; i++) await post(s.url, 'default', `h-${i}`);
    });
    after(async () => {
      await s.stop();
      await backend.stop();
    });

    test('a continue token or Exact list whose version left the history is 410 Gone', async () => {
      const first = await api(s.url, '/api/v1/namespaces/default/configmaps?limit=1');
      const rv = first.body.metadata.resourceVersion;
      for (let i = 0; i < 10; i++) await post(s.url, 'default', `later-${i}`);
      const cont = await api(s.url, `/api/v1/namespaces/default/configmaps?limit=1&continue=${encodeURIComponent(first.body.metadata.continue)}`);
      assert.equal(cont.status, 410);
      assert.equal(cont.body.reason, 'Expired');
      assert.equal(cont.body.message, INCONSISTENT_CONTINUE);
      const rest = await allPages(s.url, '/api/v1/namespaces/default/configmaps?limit=5', undefined, cont.body.metadata.continue);
      const names = rest.flatMap((p) => p.items.map((i: any) => i.metadata.name));
      const all = await api(s.url, '/api/v1/namespaces/default/configmaps');
      const expected = all.body.items.map((i: any) => i.metadata.name).filter((n: string) => n > first.body.items[0].metadata.name);
      assert.equal(expected.length >= 13, true, expected.join(','));
      assert.deepEqual(names, expected);
      const exact = await api(s.url, `/api/v1/namespaces/default/configmaps?resourceVersion=${rv}&resourceVersionMatch=Exact`);
      assert.equal(exact.status, 410);
      assert.equal(exact.body.reason, 'Expired');
    });
  });
}
