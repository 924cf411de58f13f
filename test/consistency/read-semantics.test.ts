/**
 * SPEC 4.9: every cell of the get and list resourceVersion tables, on every storage backend.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { allBackends } from '../helpers/backends.js';
import { api, startTestServer, uniqueName } from '../helpers/capstan.js';
import { suiteTargets, type SuiteServer } from '../helpers/suite-target.js';

const CM = '/api/v1/namespaces/default/configmaps';

async function createCm(url: string, name: string, data: Record<string, string> = { a: '1' }): Promise<any> {
  const r = await api(url, CM, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { suite: 'rv' } }, data }),
  });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

function rvNum(rv: string): bigint {
  return BigInt(rv);
}

// Each storage backend in-process, or the servers CAPSTAN_TEST_URLS names (see suite-target.ts).
const targets = suiteTargets(() =>
  allBackends().map((backend) => ({ name: backend.name, start: async () => startTestServer({}, await backend.open()), stop: () => backend.stop() })),
);

for (const target of targets) {
  describe(`resourceVersion semantics (${target.name})`, () => {
    let s: SuiteServer;
    before(async () => {
      s = await target.start();
    });
    after(async () => {
      await s.stop();
      await target.stop();
    });

    test('get: unset is the newest state, "0" is served, an older version is "not older than"', async () => {
      const name = uniqueName('get');
      const created = await createCm(s.url, name);
      const upd = await api(s.url, `${CM}/${name}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...created, data: { a: '2' } }),
      });
      assert.equal(upd.status, 200);
      for (const q of ['', '?resourceVersion=0', `?resourceVersion=${created.metadata.resourceVersion}`]) {
        const r = await api(s.url, `${CM}/${name}${q}`);
        assert.equal(r.status, 200, q);
        assert.equal(r.body.data.a, '2', `get${q} must not be older than the acknowledged update`);
      }
    });

    test('get and list with a version newer than the server has seen: 504 Too large resource version with Retry-After', async () => {
      const name = uniqueName('big');
      const created = await createCm(s.url, name);
      const future = (rvNum(created.metadata.resourceVersion) + 1000n).toString();
      const started = Date.now();
      const g = await api(s.url, `${CM}/${name}?resourceVersion=${future}`);
      assert.equal(g.status, 504);
      assert.equal(g.body.reason, 'Timeout');
      assert.match(g.body.message, /^Too large resource version/);
      assert.equal(g.headers.get('retry-after'), '1');
      assert.ok(Date.now() - started >= 1000, 'waits briefly before giving up');
      const l = await api(s.url, `${CM}?resourceVersion=${future}&resourceVersionMatch=NotOlderThan`);
      assert.equal(l.status, 504);
      assert.match(l.body.message, /Too large resource version/);
    });

    test('a version that becomes available while a get waits is served', async () => {
      const name = uniqueName('wait');
      const created = await createCm(s.url, name);
      const next = (rvNum(created.metadata.resourceVersion) + 1n).toString();
      const pending = api(s.url, `${CM}/${name}?resourceVersion=${next}`);
      await new Promise((r) => setTimeout(r, 200));
      await createCm(s.url, uniqueName('bump'));
      const r = await pending;
      assert.equal(r.status, 200);
    });

    test('malformed resourceVersion is 400 on get, list and watch (kube parses it as a decimal uint64)', async () => {
      const cases: Array<[string, string]> = [
        [`${CM}/x?resourceVersion=abc`, 'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax'],
        [`${CM}?resourceVersion=%2B5`, 'invalid resource version: resourceVersion: Invalid value: "+5": strconv.ParseUint: parsing "+5": invalid syntax'],
        [`${CM}?watch=1&resourceVersion=-5`, 'invalid resource version: resourceVersion: Invalid value: "-5": strconv.ParseUint: parsing "-5": invalid syntax'],
        [
          `${CM}?resourceVersion=99999999999999999999`,
          'invalid resource version: resourceVersion: Invalid value: "99999999999999999999": strconv.ParseUint: parsing "99999999999999999999": value out of range',
        ],
      ];
      for (const [path, message] of cases) {
        const r = await api(s.url, path);
        assert.equal(r.status, 400, path);
        assert.equal(r.body.kind, 'Status');
        assert.equal(r.body.reason, 'BadRequest');
        assert.equal(r.body.message, message, path);
      }
      // Leading zeros parse, as strconv.ParseUint reads them.
      const padded = await api(s.url, `${CM}?resourceVersion=01`);
      assert.equal(padded.status, 200, padded.text);
    });

    test('list Most Recent / Any / Not older than without limit', async () => {
      const a = await createCm(s.url, uniqueName('l'));
      const newest = await api(s.url, CM);
      assert.equal(newest.status, 200);
      assert.ok(rvNum(newest.body.metadata.resourceVersion) >= rvNum(a.metadata.resourceVersion));
      assert.ok(newest.body.items.some((i: any) => i.metadata.name === a.metadata.name));
      const any = await api(s.url, `${CM}?resourceVersion=0`);
      assert.equal(any.status, 200);
      const nol = await api(s.url, `${CM}?resourceVersion=${a.metadata.resourceVersion}`);
      assert.equal(nol.status, 200);
      assert.ok(rvNum(nol.body.metadata.resourceVersion) >= rvNum(a.metadata.resourceVersion));
      const nol2 = await api(s.url, `${CM}?resourceVersion=${a.metadata.resourceVersion}&resourceVersionMatch=NotOlderThan`);
      assert.equal(nol2.status, 200);
      assert.ok(rvNum(nol2.body.metadata.resourceVersion) >= rvNum(a.metadata.resourceVersion));
      const any2 = await api(s.url, `${CM}?resourceVersion=0&resourceVersionMatch=NotOlderThan&limit=1`);
      assert.equal(any2.status, 200);
    });

    test('list Exact (with limit, or resourceVersionMatch=Exact) serves the collection as it was', async () => {
      const first = await createCm(s.url, uniqueName('x1'));
      const at = first.metadata.resourceVersion as string;
      const later = await createCm(s.url, uniqueName('x2'));
      const modified = await api(s.url, `${CM}/${first.metadata.name}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...first, data: { a: 'changed' } }),
      });
      assert.equal(modified.status, 200);
      for (const q of [
        `resourceVersion=${at}&limit=500`,
        `resourceVersion=${at}&resourceVersionMatch=Exact`,
        `resourceVersion=${at}&resourceVersionMatch=Exact&limit=500`,
      ]) {
        const r = await api(s.url, `${CM}?${q}`);
        assert.equal(r.status, 200, q);
        assert.equal(r.body.metadata.resourceVersion, at, q);
        const names = r.body.items.map((i: any) => i.metadata.name);
        assert.ok(names.includes(first.metadata.name), q);
        assert.ok(!names.includes(later.metadata.name), `${q}: created after the version`);
        const item = r.body.items.find((i: any) => i.metadata.name === first.metadata.name);
        assert.equal(item.data.a, '1', `${q}: the item as it was`);
        assert.equal(item.metadata.resourceVersion, at);
      }
    });

    test('invalid combinations are 422 on ListOptions with Kubernetes messages', async () => {
      const cases: Array<[string, RegExp]> = [
        ['resourceVersionMatch=Exact', /resourceVersionMatch is forbidden unless resourceVersion is provided/],
        ['resourceVersionMatch=NotOlderThan', /resourceVersionMatch is forbidden unless resourceVersion is provided/],
        ['resourceVersionMatch=Exact&limit=5', /resourceVersionMatch is forbidden unless resourceVersion is provided/],
        ['resourceVersion=0&resourceVersionMatch=Exact', /resourceVersionMatch "exact" is forbidden for resourceVersion "0"/],
        ['resourceVersion=0&resourceVersionMatch=Exact&limit=5', /forbidden for resourceVersion "0"/],
        ['resourceVersion=5&resourceVersionMatch=Sometimes', /Unsupported value/],
      ];
      for (const [q, message] of cases) {
        const r = await api(s.url, `${CM}?${q}`);
        assert.equal(r.status, 422, q);
        assert.equal(r.body.reason, 'Invalid', q);
        assert.equal(r.body.details.kind, 'ListOptions', q);
        assert.match(r.body.message, message, q);
      }
      const page = await api(s.url, `${CM}?limit=1`);
      assert.ok(page.body.metadata.continue, 'needs at least two config maps');
      const token = encodeURIComponent(page.body.metadata.continue);
      const withRv = await api(s.url, `${CM}?limit=1&continue=${token}&resourceVersion=${page.body.metadata.resourceVersion}`);
      assert.equal(withRv.status, 400);
      assert.match(withRv.body.message, /specifying resource version is not allowed when using continue/);
      for (const rv of ['', '&resourceVersion=0']) {
        const ok = await api(s.url, `${CM}?limit=1&continue=${token}${rv}`);
        assert.equal(ok.status, 200, `continue with rv "${rv}" is a Continuation`);
        assert.equal(ok.body.metadata.resourceVersion, page.body.metadata.resourceVersion);
      }
    });
  });
}
