/**
 * CRD conversion webhooks (`spec.conversion.strategy: Webhook`) against an HTTPS webhook server in
 * the test process (generated CA, URL on 127.0.0.1 with caBundle), on the embedded store and on
 * Redis. The webhook converts v1 `spec.hostPort` ("host:port") to and from v2 `spec.host` and
 * `spec.port`, as the webhook of kube's e2e CustomResourceConversionWebhook tests does. Covered:
 * storage in the storage version (read back from the store itself), get/list/watch/create/update/
 * patch/apply across versions, a list of objects stored in different versions converted in one
 * ConversionReview (the e2e "non homogeneous list"), storedVersions, field selectors on converted
 * fields (the e2e CustomResourceFieldSelectors checks), webhook-changed labels kept and other
 * metadata restored, admission policies matched at another version (their params and failures),
 * server-side apply conflicts with managers at another version, and kube-apiserver 1.36's 500 messages (checked on the reference) when the
 * webhook is down or answers wrongly, on reads and writes; watch events wait for a failing
 * webhook to recover, as kube's watch cache retries them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { allBackends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { startWebhookServer, type TestWebhookServer } from '../helpers/webhook-server.js';
import { openWatch } from '../helpers/watch-client.js';
import type { Storage } from '../../src/storage/storage.js';
import { eventually, restFor, type ApiResult, type Rest } from './rest.js';

type Obj = Record<string, any>;

/** A 500 Status without reason, as kube-apiserver answers a conversion webhook failure. */
function assertFailure(r: ApiResult, message: string | RegExp): void {
  assert.equal(r.status, 500, r.text);
  assert.equal(r.body.kind, 'Status');
  assert.equal(r.body.code, 500);
  assert.equal(r.body.reason, undefined, r.text);
  if (typeof message === 'string') assert.equal(r.body.message, message);
  else assert.match(r.body.message as string, message);
}

const G = 'conv.example.com';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** What the webhook does to its next answers. */
type Mode = 'ok' | 'http500' | 'baduid' | 'count' | 'failed' | 'apiversion' | 'name' | 'meta' | 'badlabel' | 'kind' | 'noresponse';

function convert(o: Obj, to: string): Obj {
  const out = structuredClone(o);
  out.apiVersion = to;
  const spec = out.spec ?? {};
  if (to.endsWith('/v2') && 'hostPort' in spec) {
    const [host, port] = String(spec.hostPort).split(':');
    delete spec.hostPort;
    spec.host = host;
    spec.port = port;
  }
  if (to.endsWith('/v1') && ('host' in spec || 'port' in spec)) {
    spec.hostPort = `${spec.host ?? ''}:${spec.port ?? ''}`;
    delete spec.host;
    delete spec.port;
  }
  return out;
}

/** The converting webhook: every ConversionReview it receives is kept in `reviews`. */
function converter(hooks: TestWebhookServer, state: { mode: Mode; reviews: Obj[]; onlyKind?: string; dropDef?: boolean }): void {
  hooks.handle('/convert', (call, res) => {
    const review = call.body as Obj;
    state.reviews.push(review);
    const req = review.request;
    let objects: Obj[] = req.objects.map((o: Obj) => convert(o, req.desiredAPIVersion));
    // `dropDef`: v2's defaulted `def`, which v1 does not declare, is left out of v1 objects.
    if (state.dropDef === true) for (const o of objects) delete o.spec?.def;
    let uid = req.uid;
    let result: Obj = { status: 'Success' };
    // `onlyKind`: the mode applies to that kind's reviews, the others are converted.
    const mode = state.onlyKind === undefined || req.objects[0]?.kind === state.onlyKind ? state.mode : 'ok';
    if (mode === 'http500') {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('boom');
      return undefined;
    }
    if (mode === 'noresponse') return { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' };
    if (mode === 'baduid') uid = 'nope';
    if (mode === 'count') objects = [];
    if (mode === 'failed') result = { status: 'Failure', message: 'cannot convert today' };
    if (mode === 'apiversion') objects = objects.map((o) => ({ ...o, apiVersion: `${G}/v9` }));
    if (mode === 'kind') objects = objects.map((o) => ({ ...o, kind: 'Other' }));
    if (mode === 'name') objects = objects.map((o) => ({ ...o, metadata: { ...o.metadata, name: 'other' } }));
    if (mode === 'meta')
      objects = objects.map((o) => ({ ...o, metadata: { ...o.metadata, labels: { added: 'yes' }, generation: 99, finalizers: ['x.io/y'] } }));
    if (mode === 'badlabel') objects = objects.map((o) => ({ ...o, metadata: { ...o.metadata, labels: { 'bad label': 'yes' } } }));
    return { apiVersion: review.apiVersion, kind: 'ConversionReview', response: { uid, result, convertedObjects: objects } };
  });
}

const SVC_NS = 'conv-svc';

/** The e2e webhook's conversion of top-level fields (agnhost crd-conversion-webhook): v1 hostPort, v2 host and port. */
function topLevelConverter(hooks: TestWebhookServer, state: { reviews: Obj[] }): void {
  hooks.handle('/crdconvert', (call) => {
    const review = call.body as Obj;
    state.reviews.push(review);
    const req = review.request;
    const objects = req.objects.map((o: Obj) => {
      const out = structuredClone(o);
      out.apiVersion = req.desiredAPIVersion;
      if (req.desiredAPIVersion.endsWith('/v2') && 'hostPort' in out) {
        const [host, port] = String(out.hostPort).split(':');
        delete out.hostPort;
        out.host = host;
        out.port = port;
      } else if (req.desiredAPIVersion.endsWith('/v1') && 'host' in out) {
        out.hostPort = `${out.host}:${out.port ?? ''}`;
        delete out.host;
        delete out.port;
      }
      return out;
    });
    return { apiVersion: review.apiVersion, kind: 'ConversionReview', response: { uid: req.uid, result: { status: 'Success' }, convertedObjects: objects } };
  });
}

function schema(props: Obj): Obj {
  return { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: props } } } };
}

/** The CRD: v1 (hostPort) and v2 (host, port), `storage` the storage version; selectable fields on both. */
function crd(plural: string, kind: string, storage: 'v1' | 'v2', hooks: TestWebhookServer): Obj {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${G}` },
    spec: {
      group: G,
      scope: 'Namespaced',
      names: { plural, singular: plural.slice(0, -1), kind, listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: storage === 'v1',
          schema: schema({ hostPort: { type: 'string' } }),
          selectableFields: [{ jsonPath: '.spec.hostPort' }],
          additionalPrinterColumns: [{ name: 'HostPort', type: 'string', jsonPath: '.spec.hostPort' }],
        },
        {
          name: 'v2',
          served: true,
          storage: storage === 'v2',
          schema: schema({ host: { type: 'string' }, port: { type: 'string' }, def: { type: 'string', default: 'd' } }),
          selectableFields: [{ jsonPath: '.spec.host' }, { jsonPath: '.spec.port' }],
        },
      ],
      conversion: {
        strategy: 'Webhook',
        webhook: {
          conversionReviewVersions: ['v1', 'v1beta1'],
          clientConfig: { url: `https://127.0.0.1:${hooks.port}/convert`, caBundle: hooks.certs.caBundle },
        },
      },
    },
  };
}

for (const backend of allBackends()) {
  describe(`CRD conversion webhooks (${backend.name})`, () => {
    let srv: TestServer;
    let storage: Storage;
    let hooks: TestWebhookServer;
    let rest: Rest;
    let ns: string;
    const state: { mode: Mode; reviews: Obj[]; onlyKind?: string; dropDef?: boolean } = { mode: 'ok', reviews: [] };
    let counter = 0;

    before(async () => {
      storage = await backend.open();
      srv = await startTestServer({}, storage);
      rest = restFor(srv.url);
      hooks = await startWebhookServer(['localhost', `conv-hooks.${SVC_NS}.svc`]);
      converter(hooks, state);
      topLevelConverter(hooks, state);
      ns = await rest.namespace('conv');
    });

    after(async () => {
      await srv?.stop();
      await hooks?.stop().catch(() => undefined);
      await backend.stop();
    });

    /** A fresh CRD (its own plural and kind), served in both versions. */
    async function freshCrd(storageVersion: 'v1' | 'v2'): Promise<{ p1: string; p2: string; kind: string; plural: string }> {
      counter++;
      const plural = `hosts${counter}s`;
      const kind = `Host${counter}`;
      await rest.create(CRDS, crd(plural, kind, storageVersion, hooks));
      await eventually('CRD served', async () => ((await rest.get(`/apis/${G}/v2/namespaces/${ns}/${plural}`)).status === 200 ? true : undefined));
      return { p1: `/apis/${G}/v1/namespaces/${ns}/${plural}`, p2: `/apis/${G}/v2/namespaces/${ns}/${plural}`, kind, plural };
    }

    test('an object written in v1 is stored in v2 and served in both; objects already in the version call no webhook', async () => {
      const { p1, p2, kind, plural } = await freshCrd('v2');
      state.reviews.length = 0;
      const created = await rest.create(p1, { apiVersion: `${G}/v1`, kind, metadata: { name: 'a', labels: { x: 'y' } }, spec: { hostPort: 'h:1', junk: 1 } });
      assert.equal(created.apiVersion, `${G}/v1`);
      assert.deepEqual(created.spec, { hostPort: 'h:1' });
      // To the storage version and back for the answer, as kube-apiserver does.
      assert.deepEqual(
        state.reviews.map((r) => [r.apiVersion, r.kind, r.request.desiredAPIVersion, r.request.objects.map((o: Obj) => o.apiVersion)]),
        [
          ['apiextensions.k8s.io/v1', 'ConversionReview', `${G}/v2`, [`${G}/v1`]],
          ['apiextensions.k8s.io/v1', 'ConversionReview', `${G}/v1`, [`${G}/v2`]],
        ],
      );
      assert.match(state.reviews[0].request.uid, /^[0-9a-f-]{36}$/);

      const stored = await storage.get(`${plural}.${G}`, `${ns}/a`);
      const storedObj = JSON.parse(stored?.json ?? '{}');
      assert.equal(storedObj.apiVersion, `${G}/v2`);
      assert.deepEqual(storedObj.spec, { host: 'h', port: '1' });

      state.reviews.length = 0;
      const v2 = await rest.get(`${p2}/a`);
      assert.equal(v2.status, 200, v2.text);
      assert.deepEqual(v2.body.spec, { host: 'h', port: '1', def: 'd' });
      assert.equal(state.reviews.length, 0, 'an object in the requested version is not sent');
      const v1 = await rest.get(`${p1}/a`);
      assert.equal(v1.body.apiVersion, `${G}/v1`);
      assert.deepEqual(v1.body.spec, { hostPort: 'h:1' });
      assert.deepEqual(v1.body.metadata.labels, { x: 'y' });
      assert.equal(state.reviews.length, 1);

      // Tables print the request version's columns from the converted objects.
      const table = await rest.get(p1, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
      assert.equal(table.status, 200, table.text);
      assert.deepEqual(
        table.body.rows.map((row: Obj) => row.cells.slice(0, 2)),
        [['a', 'h:1']],
      );

      const crdNow = await rest.get(`${CRDS}/${plural}.${G}`);
      assert.deepEqual(crdNow.body.status.storedVersions, ['v2']);
    });

    test('update, merge patch and server-side apply in v1 store in v2 and answer in v1', async () => {
      const { p1, p2, kind, plural } = await freshCrd('v2');
      await rest.create(p1, { apiVersion: `${G}/v1`, kind, metadata: { name: 'a' }, spec: { hostPort: 'h:1' } });
      const current = (await rest.get(`${p1}/a`)).body;
      const put = await rest.put(`${p1}/a`, { ...current, spec: { hostPort: 'u:2' } });
      assert.equal(put.status, 200, put.text);
      assert.deepEqual(put.body.spec, { hostPort: 'u:2' });
      assert.equal(put.body.metadata.generation, 2);
      const patched = await rest.patch(`${p1}/a`, { spec: { hostPort: 'p:3' } });
      assert.equal(patched.status, 200, patched.text);
      assert.deepEqual(patched.body.spec, { hostPort: 'p:3' });
      const applied = await rest.patch(
        `${p1}/a?fieldManager=conv-test&force=true`,
        { apiVersion: `${G}/v1`, kind, metadata: { name: 'a' }, spec: { hostPort: 's:4' } },
        'application/apply-patch+yaml',
      );
      assert.equal(applied.status, 200, applied.text);
      assert.deepEqual(applied.body.spec, { hostPort: 's:4' });
      assert.ok(applied.body.metadata.managedFields.some((m: Obj) => m.manager === 'conv-test' && m.apiVersion === `${G}/v1`));
      const stored = JSON.parse((await storage.get(`${plural}.${G}`, `${ns}/a`))?.json ?? '{}');
      assert.equal(stored.apiVersion, `${G}/v2`);
      // Stored as converted: v2's defaults apply when it is read, not to what a v1 write stores.
      assert.deepEqual(stored.spec, { host: 's', port: '4' });
      // A v2 patch of the same object: the only review converts the old and new objects to v1 for the
      // managers recorded there, which lose what the write changes as seen at v1 (hostPort), as kube
      // decides (checked on the reference). The webhook leaves v2's `def` out of v1 objects: v1 does
      // not declare it, and kube then stores the object without managedFields (checked below).
      state.reviews.length = 0;
      state.dropDef = true;
      const v2 = await rest.patch(`${p2}/a?fieldManager=v2-patcher`, { spec: { port: '5' } }).finally(() => {
        state.dropDef = undefined;
      });
      assert.equal(v2.status, 200, v2.text);
      assert.deepEqual(v2.body.spec, { host: 's', port: '5', def: 'd' });
      assert.deepEqual(
        state.reviews.map((r) => [r.request.desiredAPIVersion, r.request.objects.length]),
        [[`${G}/v1`, 2]],
      );
      const entries: Obj[] = v2.body.metadata.managedFields;
      assert.ok(
        entries.every((m) => m.apiVersion !== `${G}/v1` || !JSON.stringify(m.fieldsV1).includes('f:hostPort')),
        JSON.stringify(entries),
      );
      assert.deepEqual(entries.find((m) => m.manager === 'v2-patcher')?.fieldsV1, { 'f:spec': { 'f:port': {} } });
      // With `def` in the v1 objects (undeclared there), the update is stored without managedFields, as on the reference.
      const again = await rest.patch(`${p1}/a?fieldManager=v1-patcher`, { spec: { hostPort: 's:6' } });
      assert.equal(again.status, 200, again.text);
      const untracked = await rest.patch(`${p2}/a?fieldManager=v2-patcher`, { spec: { port: '7' } });
      assert.equal(untracked.status, 200, untracked.text);
      assert.deepEqual(untracked.body.spec, { host: 's', port: '7', def: 'd' });
      assert.equal(untracked.body.metadata.managedFields, undefined, JSON.stringify(untracked.body.metadata));
    });

    test('a list of objects stored in different versions is converted in one ConversionReview (e2e non homogeneous list)', async () => {
      const { p1, p2, kind, plural } = await freshCrd('v1');
      await rest.create(p1, { apiVersion: `${G}/v1`, kind, metadata: { name: 'cr1' }, spec: { hostPort: 'a:1' } });
      // The storage version moves to v2: the next object is stored there, the first stays in v1.
      const def = (await rest.get(`${CRDS}/${plural}.${G}`)).body;
      def.spec.versions[0].storage = false;
      def.spec.versions[1].storage = true;
      assert.equal((await rest.put(`${CRDS}/${plural}.${G}`, def)).status, 200);
      await eventually('storedVersions [v1 v2]', async () => {
        const s = (await rest.get(`${CRDS}/${plural}.${G}`)).body.status.storedVersions;
        return JSON.stringify(s) === JSON.stringify(['v1', 'v2']) ? true : undefined;
      });
      await eventually('v2 storage in use', async () => {
        const r = await rest.post(p2, { apiVersion: `${G}/v2`, kind, metadata: { name: 'probe' }, spec: { host: 'p', port: '0' } });
        const stored = JSON.parse((await storage.get(`${plural}.${G}`, `${ns}/probe`))?.json ?? '{}');
        if (r.status === 201) await rest.del(`${p2}/probe`);
        return stored.apiVersion === `${G}/v2` ? true : undefined;
      });
      await rest.create(p2, { apiVersion: `${G}/v2`, kind, metadata: { name: 'cr2' }, spec: { host: 'b', port: '2' } });
      assert.equal(JSON.parse((await storage.get(`${plural}.${G}`, `${ns}/cr1`))?.json ?? '{}').apiVersion, `${G}/v1`);
      assert.equal(JSON.parse((await storage.get(`${plural}.${G}`, `${ns}/cr2`))?.json ?? '{}').apiVersion, `${G}/v2`);
      for (const [path, version, specs] of [
        [p1, 'v1', [{ hostPort: 'a:1' }, { hostPort: 'b:2' }]],
        [
          p2,
          'v2',
          [
            { host: 'a', port: '1', def: 'd' },
            { host: 'b', port: '2', def: 'd' },
          ],
        ],
      ] as const) {
        state.reviews.length = 0;
        const list = await rest.get(path);
        assert.equal(list.status, 200, list.text);
        assert.equal(list.body.apiVersion, `${G}/${version}`);
        assert.deepEqual(
          list.body.items.map((i: Obj) => [i.apiVersion, i.metadata.name, i.spec]),
          specs.map((s, k) => [`${G}/${version}`, `cr${k + 1}`, s]),
        );
        assert.equal(state.reviews.length, 1, 'one review for the page');
        assert.equal(state.reviews[0].request.objects.length, 1, 'only the object in the other version is sent');
      }
    });

    test('field selectors on spec fields select on the fields of the requested version; watch transitions follow them', async () => {
      const { p1, p2, kind, plural } = await freshCrd('v2');
      await rest.create(p1, { apiVersion: `${G}/v1`, kind, metadata: { name: 'host1' }, spec: { hostPort: 'host1:80' } });
      await rest.create(p2, { apiVersion: `${G}/v2`, kind, metadata: { name: 'host2' }, spec: { host: 'host2', port: '80' } });
      await rest.create(p2, { apiVersion: `${G}/v2`, kind, metadata: { name: 'host3' }, spec: { host: 'host3', port: '8080' } });
      const names = async (path: string): Promise<string[]> => {
        const r = await rest.get(path);
        assert.equal(r.status, 200, r.text);
        return r.body.items.map((i: Obj) => i.metadata.name);
      };
      assert.deepEqual(await names(`${p1}?fieldSelector=spec.hostPort=host1:80`), ['host1']);
      assert.deepEqual(await names(`${p1}?fieldSelector=spec.hostPort!=host1:80`), ['host2', 'host3']);
      assert.deepEqual(await names(`${p2}?fieldSelector=spec.port=80`), ['host1', 'host2']);
      assert.deepEqual(await names(`${p2}?fieldSelector=spec.host=host1,spec.port=80`), ['host1']);
      // A watch selects on the requested version's fields too: a change that stops matching is DELETED.
      const created = await rest.get(p1);
      const w = await openWatch(srv.url, `${p1}?watch=true&fieldSelector=spec.hostPort=host1:80&resourceVersion=${created.body.metadata.resourceVersion}`);
      try {
        await rest.patch(`${p2}/host2`, { spec: { host: 'host1' } });
        const left = await rest.patch(`${p2}/host2`, { spec: { port: '81' } });
        const events = await w.waitFor((e) => e.length >= 2);
        // As kube's watch cache sends it, the DELETED carries the object as the watcher last saw
        // it matching (its previous content) with the update's resourceVersion.
        assert.deepEqual(
          events.map((e) => [e.type, e.object.metadata.name, e.object.spec.hostPort, e.object.metadata.resourceVersion]),
          [
            ['ADDED', 'host2', 'host1:80', events[0].object.metadata.resourceVersion],
            ['DELETED', 'host2', 'host1:80', left.body.metadata.resourceVersion],
          ],
        );
      } finally {
        w.close();
      }
      void plural;
    });

    test('e2e CustomResourceFieldSelectors: Service-referenced webhook, top-level selectable fields, watches, lists and deletecollection by field', async () => {
      // The webhook behind a Service (its EndpointSlice points at the test process), as the e2e test deploys it.
      await rest.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SVC_NS } });
      await rest.post(`/api/v1/namespaces/${SVC_NS}/services`, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'conv-hooks' },
        spec: { ports: [{ name: 'https', port: 9443, targetPort: 9444 }] },
      });
      // Validation refuses loopback endpoint addresses: the slice a controller would write is stored directly.
      await storage.create('endpointslices.discovery.k8s.io', `${SVC_NS}/conv-hooks-1`, {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'conv-hooks-1', namespace: SVC_NS, labels: { 'kubernetes.io/service-name': 'conv-hooks' } },
        addressType: 'IPv4',
        ports: [{ name: 'https', port: hooks.port }],
        endpoints: [{ addresses: ['127.0.0.1'] }],
      });
      const top = (props: Obj): Obj => ({ openAPIV3Schema: { type: 'object', properties: props } });
      await rest.create(CRDS, {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: `selectables.${G}` },
        spec: {
          group: G,
          scope: 'Namespaced',
          names: { plural: 'selectables', singular: 'selectable', kind: 'Selectable', listKind: 'SelectableList' },
          versions: [
            { name: 'v1', served: true, storage: true, schema: top({ hostPort: { type: 'string' } }), selectableFields: [{ jsonPath: '.hostPort' }] },
            {
              name: 'v2',
              served: true,
              storage: false,
              schema: top({ host: { type: 'string' }, port: { type: 'string' } }),
              selectableFields: [{ jsonPath: '.host' }, { jsonPath: '.port' }],
            },
          ],
          conversion: {
            strategy: 'Webhook',
            webhook: {
              conversionReviewVersions: ['v1', 'v1beta1'],
              clientConfig: { caBundle: hooks.certs.caBundle, service: { namespace: SVC_NS, name: 'conv-hooks', path: '/crdconvert', port: 9443 } },
            },
          },
        },
      });
      const p1 = `/apis/${G}/v1/namespaces/${ns}/selectables`;
      const p2 = `/apis/${G}/v2/namespaces/${ns}/selectables`;
      await eventually('CRD served', async () => ((await rest.get(p2)).status === 200 ? true : undefined));
      const watches = {
        v2host: await openWatch(srv.url, `${p2}?watch=true&fieldSelector=host=host1`),
        v2hostPort: await openWatch(srv.url, `${p2}?watch=true&fieldSelector=host=host1,port=80`),
        v1hostPort: await openWatch(srv.url, `${p1}?watch=true&fieldSelector=hostPort=host1:80`),
      };
      try {
        const specs: Obj[] = [{ host: 'host1', port: '80' }, { host: 'host1', port: '8080' }, { host: 'host2' }];
        const names = ['sel-a', 'sel-b', 'sel-c'];
        for (const [i, spec] of specs.entries()) await rest.create(p2, { apiVersion: `${G}/v2`, kind: 'Selectable', metadata: { name: names[i] }, ...spec });
        const listed = async (path: string): Promise<string[]> => {
          const r = await rest.get(path);
          assert.equal(r.status, 200, r.text);
          return r.body.items.map((o: Obj) => o.metadata.name).sort();
        };
        assert.deepEqual(await listed(`${p2}?fieldSelector=host=host1`), ['sel-a', 'sel-b']);
        assert.deepEqual(await listed(`${p2}?fieldSelector=host=host1,port=80`), ['sel-a']);
        assert.deepEqual(await listed(`${p1}?fieldSelector=hostPort=host1:80`), ['sel-a']);
        assert.deepEqual(await listed(`${p1}?fieldSelector=hostPort=host1:8080`), ['sel-b']);
        const seen = (w: (typeof watches)['v2host'], n: number): Promise<string[][]> =>
          w.waitFor((e) => e.length >= n).then((events) => events.map((e) => [e.type, e.object.metadata.name]));
        assert.deepEqual(await seen(watches.v2host, 2), [
          ['ADDED', 'sel-a'],
          ['ADDED', 'sel-b'],
        ]);
        assert.deepEqual(await seen(watches.v2hostPort, 1), [['ADDED', 'sel-a']]);
        assert.deepEqual(await seen(watches.v1hostPort, 1), [['ADDED', 'sel-a']]);

        // deletecollection by field selector (grace period 0), then an update that stops matching.
        const removed = await rest.del(`${p2}?fieldSelector=host=host1,port=80`, { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 });
        assert.equal(removed.status, 200, removed.text);
        const b = (await rest.get(`${p2}/sel-b`)).body;
        assert.equal((await rest.put(`${p2}/sel-b`, { ...b, host: 'host2' })).status, 200);
        assert.deepEqual(await listed(`${p2}?fieldSelector=host=host1`), []);
        assert.deepEqual(await listed(`${p2}?fieldSelector=host=host1,port=80`), []);
        assert.deepEqual(await listed(p2), ['sel-b', 'sel-c']);
        assert.deepEqual(await seen(watches.v2host, 4), [
          ['ADDED', 'sel-a'],
          ['ADDED', 'sel-b'],
          ['DELETED', 'sel-a'],
          ['DELETED', 'sel-b'],
        ]);
        assert.deepEqual(await seen(watches.v2hostPort, 2), [
          ['ADDED', 'sel-a'],
          ['DELETED', 'sel-a'],
        ]);
        assert.deepEqual(await seen(watches.v1hostPort, 2), [
          ['ADDED', 'sel-a'],
          ['DELETED', 'sel-a'],
        ]);
        // Stored in v1, the storage version.
        const stored = JSON.parse((await storage.get(`selectables.${G}`, `${ns}/sel-c`))?.json ?? '{}');
        assert.equal(stored.apiVersion, `${G}/v1`);
        assert.equal(stored.hostPort, 'host2:');
      } finally {
        for (const w of Object.values(watches)) w.close();
      }
    });

    test('conversionReviewVersions [v1beta1]: the webhook gets and answers a v1beta1 ConversionReview', async () => {
      const def = crd('betas', 'Beta', 'v2', hooks);
      def.spec.conversion.webhook.conversionReviewVersions = ['v1beta1'];
      await rest.create(CRDS, def);
      const p1 = `/apis/${G}/v1/namespaces/${ns}/betas`;
      await eventually('CRD served', async () => ((await rest.get(p1)).status === 200 ? true : undefined));
      state.reviews.length = 0;
      await rest.create(p1, { apiVersion: `${G}/v1`, kind: 'Beta', metadata: { name: 'b' }, spec: { hostPort: 'x:1' } });
      assert.equal(state.reviews[0].apiVersion, 'apiextensions.k8s.io/v1beta1');
      assert.equal(state.reviews[0].request.desiredAPIVersion, `${G}/v2`);
      const got = await rest.get(`${p1}/b`);
      assert.equal(got.status, 200, got.text);
      assert.deepEqual([got.body.apiVersion, got.body.spec], [`${G}/v1`, { hostPort: 'x:1' }]);
    });

    test('watches get every event converted to their version, in order, converted once per event and version', async () => {
      const { p1, p2, kind } = await freshCrd('v2');
      const start = (await rest.get(p1)).body.metadata.resourceVersion;
      const watches = await Promise.all([
        openWatch(srv.url, `${p1}?watch=true&resourceVersion=${start}`),
        openWatch(srv.url, `${p1}?watch=true&resourceVersion=${start}`),
        openWatch(srv.url, `${p2}?watch=true&resourceVersion=${start}`),
      ]);
      try {
        state.reviews.length = 0;
        await rest.create(p2, { apiVersion: `${G}/v2`, kind, metadata: { name: 'w' }, spec: { host: 'h', port: '1' } });
        for (let i = 2; i <= 5; i++) await rest.patch(`${p2}/w`, { spec: { port: String(i) } });
        await rest.del(`${p2}/w`);
        const expected1 = [
          ['ADDED', 'h:1'],
          ['MODIFIED', 'h:2'],
          ['MODIFIED', 'h:3'],
          ['MODIFIED', 'h:4'],
          ['MODIFIED', 'h:5'],
          ['DELETED', 'h:5'],
        ];
        for (const w of watches.slice(0, 2)) {
          const events = await w.waitFor((e) => e.length >= 6);
          assert.deepEqual(
            events.map((e) => [e.type, e.object.spec.hostPort]),
            expected1,
          );
          assert.ok(events.every((e) => e.object.apiVersion === `${G}/v1`));
        }
        const v2events = await watches[2].waitFor((e) => e.length >= 6);
        assert.deepEqual(
          v2events.map((e) => [e.type, e.object.spec.port]),
          expected1.map(([t, hp]) => [t, hp.split(':')[1]]),
        );
        // Six events to v1 for two watchers: six reviews (the patches' own reads need none: they are in v2).
        assert.equal(state.reviews.filter((r) => r.request.desiredAPIVersion === `${G}/v1`).length, 6);
      } finally {
        for (const w of watches) w.close();
      }
      // Initial events (a watch from no version, and sendInitialEvents) are converted too.
      await rest.create(p2, { apiVersion: `${G}/v2`, kind, metadata: { name: 'i1' }, spec: { host: 'i', port: '1' } });
      await rest.create(p2, { apiVersion: `${G}/v2`, kind, metadata: { name: 'i2' }, spec: { host: 'i', port: '2' } });
      for (const query of ['watch=true', 'watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true']) {
        const w = await openWatch(srv.url, `${p1}?${query}`);
        try {
          const events = await w.waitFor((e) => e.filter((x) => x.type === 'ADDED').length >= 2);
          assert.deepEqual(
            events.filter((e) => e.type === 'ADDED').map((e) => [e.object.apiVersion, e.object.metadata.name, e.object.spec]),
            [
              [`${G}/v1`, 'i1', { hostPort: 'i:1' }],
              [`${G}/v1`, 'i2', { hostPort: 'i:2' }],
            ],
          );
        } finally {
          w.close();
        }
      }
    });

    test('labels and annotations the webhook changes are kept; other metadata is the original', async () => {
      const { p1, p2, kind } = await freshCrd('v2');
      await rest.create(p2, { apiVersion: `${G}/v2`, kind, metadata: { name: 'm', labels: { x: 'y' } }, spec: { host: 'h', port: '1' } });
      state.mode = 'meta';
      try {
        const r = await rest.get(`${p1}/m`);
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(r.body.metadata.labels, { added: 'yes' });
        assert.equal(r.body.metadata.generation, 1);
        assert.equal(r.body.metadata.finalizers, undefined);
      } finally {
        state.mode = 'ok';
      }
      void p2;
    });

    if (backend.name !== 'memory') return;

    test('admission webhooks matched at another version (matchPolicy Equivalent) see the object converted by the CRD webhook', async () => {
      const { p1, kind, plural } = await freshCrd('v2');
      const seen: Obj[] = [];
      hooks.handle('/admit', (call) => {
        const review = call.body as Obj;
        seen.push(review.request);
        return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true } };
      });
      const config = `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/conv-${plural}`;
      await rest.create('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: `conv-${plural}` },
        webhooks: [
          {
            name: 'admit.conv.example.com',
            clientConfig: { url: `https://127.0.0.1:${hooks.port}/admit`, caBundle: hooks.certs.caBundle },
            rules: [{ operations: ['CREATE'], apiGroups: [G], apiVersions: ['v2'], resources: [plural] }],
            matchPolicy: 'Equivalent',
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
          },
        ],
      });
      try {
        let n = 0;
        await eventually('the admission webhook is in force', async () => {
          n++;
          const r = await rest.post(p1, { apiVersion: `${G}/v1`, kind, metadata: { name: `adm-${n}` }, spec: { hostPort: `h:${n}` } });
          assert.equal(r.status, 201, r.text);
          return seen.length > 0 ? true : undefined;
        });
        const request = seen[0];
        assert.deepEqual(request.kind, { group: G, version: 'v2', kind });
        assert.deepEqual(request.requestKind, { group: G, version: 'v1', kind });
        assert.equal(request.object.apiVersion, `${G}/v2`);
        assert.deepEqual(request.object.spec, { host: 'h', port: String(n) });
      } finally {
        await rest.del(config);
      }
    });

    test('admission policies matched at another version see the object converted by the CRD webhook; a CR paramKind is read in its version; a mutation lands converted back', async () => {
      const { p1, kind, plural } = await freshCrd('v2');
      const params = await freshCrd('v2');
      const ADM = '/apis/admissionregistration.k8s.io/v1';
      // The param is stored in v2 (host, port); the policy's paramKind reads it in v1 (hostPort).
      await rest.create(params.p2, { apiVersion: `${G}/v2`, kind: params.kind, metadata: { name: 'deny' }, spec: { host: 'bad', port: '13' } });
      const rules = [{ operations: ['CREATE'], apiGroups: [G], apiVersions: ['v2'], resources: [plural] }];
      const scope = { resourceRules: rules, matchPolicy: 'Equivalent', namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } };
      const paths = [
        `validatingadmissionpolicybindings/conv-${plural}`,
        `validatingadmissionpolicies/conv-${plural}`,
        `mutatingadmissionpolicybindings/conv-${plural}`,
        `mutatingadmissionpolicies/conv-${plural}`,
      ];
      await rest.create(`${ADM}/validatingadmissionpolicies`, {
        metadata: { name: `conv-${plural}` },
        spec: {
          paramKind: { apiVersion: `${G}/v1`, kind: params.kind },
          matchConstraints: scope,
          validations: [
            { expression: "object.apiVersion == 'conv.example.com/v2' && request.kind.version == 'v2'", message: 'not seen at v2' },
            { expression: "object.spec.host + ':' + object.spec.port != params.spec.hostPort", messageExpression: "'denied by ' + params.spec.hostPort" },
          ],
        },
      });
      await rest.create(`${ADM}/validatingadmissionpolicybindings`, {
        metadata: { name: `conv-${plural}` },
        spec: { policyName: `conv-${plural}`, paramRef: { name: 'deny', namespace: ns, parameterNotFoundAction: 'Deny' }, validationActions: ['Deny'] },
      });
      await rest.create(`${ADM}/mutatingadmissionpolicies`, {
        metadata: { name: `conv-${plural}` },
        spec: {
          matchConstraints: scope,
          matchConditions: [{ name: 'v2-fields', expression: "object.spec.port == '0'" }],
          reinvocationPolicy: 'Never',
          mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{spec: Object.spec{port: "8" + object.spec.host}}' } }],
        },
      });
      await rest.create(`${ADM}/mutatingadmissionpolicybindings`, { metadata: { name: `conv-${plural}` }, spec: { policyName: `conv-${plural}` } });
      try {
        const post = (name: string, hostPort: string) => rest.post(p1, { apiVersion: `${G}/v1`, kind, metadata: { name }, spec: { hostPort } });
        let n = 0;
        await eventually('the validating policy denies at v2 with the v1 param', async () => {
          const r = await post(`deny-${++n}`, 'bad:13');
          return r.status === 422 ? r : undefined;
        }).then((r) => {
          assert.equal(
            r.body.message,
            `${plural}.${G} "deny-${n}" is forbidden: ValidatingAdmissionPolicy 'conv-${plural}' with binding 'conv-${plural}' denied request: denied by bad:13`,
          );
        });
        const allowed = await post('allowed', 'good:13');
        assert.equal(allowed.status, 201, allowed.text);
        assert.deepEqual(allowed.body.spec, { hostPort: 'good:13' });
        // The mutating policy's condition and mutation see v2's host and port; its result is converted back to v1.
        const mutated = await eventually('the mutating policy mutates at v2', async () => {
          const r = await post(`mut-${++n}`, '0:0');
          assert.equal(r.status, 201, r.text);
          return r.body.spec.hostPort === '0:80' ? r : undefined;
        });
        assert.equal(mutated.body.apiVersion, `${G}/v1`);
        // The webhook failing: the mutating policy (failurePolicy Fail, which runs first) denies with kube's
        // configuration error; without it, the validating policy denies with its own.
        state.mode = 'failed';
        // Only the objects' conversions fail: kube reads params from its informer's cache, converted beforehand.
        state.onlyKind = kind;
        const failed = `conversion webhook for ${G}/v1, Kind=${kind} failed: cannot convert today`;
        try {
          const failing = await post('failing', 'x:1');
          assert.equal(failing.status, 403, failing.text);
          assert.equal(failing.body.message, `policy "conv-${plural}" denied request: failed to configure policy: ${failed}`);
          for (const path of paths.slice(2)) await rest.del(`${ADM}/${path}`);
          const denied = await eventually('only the validating policy is in force', async () => {
            const r = await post('failing', 'x:1');
            return r.status === 422 ? r : undefined;
          });
          assert.equal(
            denied.body.message,
            `${plural}.${G} "failing" is forbidden: ValidatingAdmissionPolicy 'conv-${plural}' with binding 'conv-${plural}' denied request: failed to configure binding: failed to convert object version: ${failed}`,
          );
        } finally {
          state.mode = 'ok';
          state.onlyKind = undefined;
        }
      } finally {
        for (const path of paths) await rest.del(`${ADM}/${path}`);
      }
    });

    test('server-side apply conflicts with managers recorded at another version as seen at their version (fields converted by the webhook)', async () => {
      // Answers, conflict causes and managers as kube-apiserver 1.36 gives them with the same webhook (checked
      // on the reference; kube sends one review per object where Capstan sends the two objects in one).
      const { p1, p2, kind } = await freshCrd('v2');
      const apply = (path: string, manager: string, body: Obj, force = false) =>
        rest.patch(`${path}?fieldManager=${manager}${force ? '&force=true' : ''}`, body, 'application/apply-patch+yaml');
      const v1 = await apply(`${p1}/a`, 'v1-owner', { apiVersion: `${G}/v1`, kind, metadata: { name: 'a' }, spec: { hostPort: 'h:1' } });
      assert.equal(v1.status, 201, v1.text);
      const v2Apply = { apiVersion: `${G}/v2`, kind, metadata: { name: 'a' }, spec: { port: '2' } };
      // The webhook leaves v2's defaulted `def` in the v1 objects: kube's typed conversion rejects them.
      const undeclared = await apply(`${p2}/a`, 'v2-applier', v2Apply);
      assert.equal(undeclared.status, 500, undeclared.text);
      assert.equal(undeclared.body.message, '.spec.def: field not declared in schema');
      assert.equal(undeclared.body.reason, undefined);
      state.dropDef = true;
      try {
        // The webhook failing: the apply fails with its 500.
        state.mode = 'failed';
        try {
          const failing = await apply(`${p2}/a`, 'v2-applier', v2Apply);
          assertFailure(failing, `conversion webhook for ${G}/v2, Kind=${kind} failed: cannot convert today`);
        } finally {
          state.mode = 'ok';
        }
        // At v2 the apply changes only spec.port; at v1, where v1-owner's entry is, it changes spec.hostPort.
        state.reviews.length = 0;
        const conflict = await apply(`${p2}/a`, 'v2-applier', v2Apply);
        assert.equal(conflict.status, 409, conflict.text);
        assert.equal(conflict.body.reason, 'Conflict');
        assert.equal(conflict.body.message, 'Apply failed with 1 conflict: conflict with "v1-owner": .spec.hostPort');
        assert.deepEqual(conflict.body.details.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "v1-owner"', field: '.spec.hostPort' }]);
        assert.deepEqual(
          state.reviews.map((r) => [r.request.desiredAPIVersion, r.request.objects.length]),
          [[`${G}/v1`, 2]],
        );
        // Forced: v1-owner loses spec.hostPort (its only field), as seen at v1.
        const forced = await apply(`${p2}/a`, 'v2-applier', v2Apply, true);
        assert.equal(forced.status, 200, forced.text);
        assert.deepEqual(forced.body.spec, { host: 'h', port: '2', def: 'd' });
        assert.deepEqual(
          forced.body.metadata.managedFields.map((m: Obj) => [m.manager, m.apiVersion, m.fieldsV1]),
          [['v2-applier', `${G}/v2`, { 'f:spec': { 'f:port': {} } }]],
        );
        // An update whose managers at another version cannot be converted succeeds without managedFields.
        const again = await apply(`${p1}/a`, 'v1-owner', { apiVersion: `${G}/v1`, kind, metadata: { name: 'a' }, spec: { hostPort: 'h:3' } }, true);
        assert.equal(again.status, 200, again.text);
        state.mode = 'failed';
        state.onlyKind = kind;
        try {
          const patched = await rest.patch(`${p2}/a?fieldManager=v2-patcher`, { spec: { port: '4' } });
          assert.equal(patched.status, 200, patched.text);
          assert.deepEqual(patched.body.spec, { host: 'h', port: '4', def: 'd' });
          assert.equal(patched.body.metadata.managedFields, undefined, JSON.stringify(patched.body.metadata));
        } finally {
          state.mode = 'ok';
          state.onlyKind = undefined;
        }
      } finally {
        state.dropDef = undefined;
      }
    });

    test('webhook failures and wrong answers: kube-apiserver 1.36 500 messages on get, list, create and patch; watch events wait for the webhook to recover', async () => {
      const { p1, p2, kind } = await freshCrd('v2');
      await rest.create(p2, { apiVersion: `${G}/v2`, kind, metadata: { name: 'a' }, spec: { host: 'h', port: '1' } });
      await rest.create(p2, { apiVersion: `${G}/v2`, kind, metadata: { name: 'b' }, spec: { host: 'h', port: '2' } });
      const gvk2 = `${G}/v2, Kind=${kind}`;
      const gvk1 = `${G}/v1, Kind=${kind}`;
      const cases: Array<[Mode, string, string, string]> = [
        // [mode, get message, list message (batch wording), create message]
        [
          'http500',
          `conversion webhook for ${gvk2} failed: an error on the server ("boom") has prevented the request from succeeding`,
          `conversion webhook for ${gvk2} failed: an error on the server ("boom") has prevented the request from succeeding`,
          `conversion webhook for ${gvk1} failed: an error on the server ("boom") has prevented the request from succeeding`,
        ],
        [
          'count',
          `conversion webhook for ${gvk2} returned 0 objects, expected 1`,
          `conversion webhook for ${gvk2} returned 0 objects, expected 2`,
          `conversion webhook for ${gvk1} returned 0 objects, expected 1`,
        ],
        [
          'failed',
          `conversion webhook for ${gvk2} failed: cannot convert today`,
          `conversion webhook for ${gvk2} failed: cannot convert today`,
          `conversion webhook for ${gvk1} failed: cannot convert today`,
        ],
        [
          'noresponse',
          `conversion webhook for ${gvk2} failed: no response provided`,
          `conversion webhook for ${gvk2} failed: no response provided`,
          `conversion webhook for ${gvk1} failed: no response provided`,
        ],
        [
          'apiversion',
          `conversion webhook for ${gvk2} returned invalid object at index 0: invalid groupVersion (expected ${G}/v1, received ${G}/v9)`,
          `conversion webhook for ${gvk2} returned invalid converted object at index 0: invalid groupVersion (expected ${G}/v1, received ${G}/v9)`,
          `conversion webhook for ${gvk1} returned invalid object at index 0: invalid groupVersion (expected ${G}/v2, received ${G}/v9)`,
        ],
        [
          'kind',
          `conversion webhook for ${gvk2} returned invalid object at index 0: invalid kind (expected ${kind}, received Other)`,
          `conversion webhook for ${gvk2} returned invalid converted object at index 0: invalid kind (expected ${kind}, received Other)`,
          `conversion webhook for ${gvk1} returned invalid object at index 0: invalid kind (expected ${kind}, received Other)`,
        ],
        [
          'name',
          `conversion webhook for ${gvk2} returned invalid object: must have the same name: a != other`,
          `conversion webhook for ${gvk2} returned invalid converted object at index 0: must have the same name: a != other`,
          `conversion webhook for ${gvk1} returned invalid object: must have the same name: c != other`,
        ],
        [
          'badlabel',
          `conversion webhook for ${gvk2} returned invalid metadata: metadata.labels: Invalid value: "bad label": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
          `conversion webhook for ${gvk2} returned invalid metadata in object at index 0: metadata.labels: Invalid value: "bad label": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
          `conversion webhook for ${gvk1} returned invalid metadata: metadata.labels: Invalid value: "bad label": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
        ],
      ];
      try {
        for (const [mode, getMessage, listMessage, createMessage] of cases) {
          state.mode = mode;
          const got = await rest.get(`${p1}/a`);
          assertFailure(got, getMessage);
          assertFailure(await rest.get(p1), listMessage);
          const created = await rest.post(p1, { apiVersion: `${G}/v1`, kind, metadata: { name: 'c' }, spec: { hostPort: 'q:3' } });
          assertFailure(created, createMessage);
          assertFailure(await rest.patch(`${p1}/a`, { spec: { hostPort: 'z:9' } }), getMessage);
        }
        state.mode = 'baduid';
        assertFailure(await rest.get(`${p1}/a`), new RegExp(`^conversion webhook for ${gvk2} failed: expected response.uid="[0-9a-f-]{36}", got "nope"$`));

        // A watch event that does not convert waits, as kube's watch cache retries it: it arrives,
        // in order, once the webhook recovers, and the watch stays open.
        state.mode = 'ok';
        const start = (await rest.get(p2)).body.metadata.resourceVersion;
        const w = await openWatch(srv.url, `${p1}?watch=true&resourceVersion=${start}`);
        try {
          await rest.patch(`${p2}/a`, { spec: { port: '2' } });
          await w.waitFor((e) => e.length >= 1);
          state.mode = 'failed';
          state.reviews.length = 0;
          await rest.patch(`${p2}/a`, { spec: { port: '3' } });
          await rest.patch(`${p2}/b`, { spec: { port: '4' } });
          await eventually('the webhook retried', async () => (state.reviews.length >= 4 ? true : undefined));
          assert.equal(w.events.length, 1);
          state.mode = 'ok';
          const events = await w.waitFor((e) => e.length >= 3);
          assert.deepEqual(
            events.map((e) => [e.type, e.object.metadata.name, e.object.spec.hostPort]),
            [
              ['MODIFIED', 'a', 'h:2'],
              ['MODIFIED', 'a', 'h:3'],
              ['MODIFIED', 'b', 'h:4'],
            ],
          );
        } finally {
          w.close();
        }
      } finally {
        state.mode = 'ok';
      }
      // Nothing was stored by the failed creates.
      assert.equal((await rest.get(`${p2}/c`)).status, 404);

      // The webhook down: Go's dial error, as the reference words it.
      await hooks.stop();
      const down = await rest.get(`${p1}/a`);
      assertFailure(
        down,
        new RegExp(
          `^conversion webhook for ${gvk2} failed: Post "https://127\\.0\\.0\\.1:${hooks.port}/convert\\?timeout=30s": dial tcp 127\\.0\\.0\\.1:${hooks.port}: connect: connection refused$`,
        ),
      );
    });
  });
}
