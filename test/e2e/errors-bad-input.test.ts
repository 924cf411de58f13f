/**
 * Bad input and error answers over HTTP: malformed bodies, wrong kinds, huge bodies, media types,
 * unknown paths, unsupported verbs, conflicts. Every failure is a Status, never a 500.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { api, startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';
import { kubectlFor, type Kubectl } from './kubectl.js';
import { assertStatus, restFor, type Rest } from './rest.js';

let srv: TestServer;
let rest: Rest;
let k: Kubectl;
let ns: string;
let cms: string;

before(async () => {
  srv = await startTestServer();
  rest = restFor(srv.url);
  k = kubectlFor(srv.kubeconfig);
  ns = await rest.namespace('err');
  cms = `/api/v1/namespaces/${ns}/configmaps`;
});

after(async () => {
  await srv.stop();
});

const cm = (name: string, data: Record<string, string> = {}): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

describe('malformed bodies', { concurrency: true }, () => {
  test('malformed JSON is 400 with the parse error', async () => {
    const r = await rest.post(cms, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":');
    assertStatus(
      r,
      400,
      'BadRequest',
      /^the object provided is unrecognized \(must be of type ConfigMap\): couldn't get version\/kind; json parse error: .+ \(\{"apiVersion":"v1","kind":"Con \.\.\.\)$/,
    );
  });

  test('malformed YAML is 400 with the parse error', async () => {
    const r = await rest.post(cms, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [unclosed\n', 'application/yaml');
    assertStatus(r, 400, 'BadRequest', /^the object provided is unrecognized \(must be of type ConfigMap\): .*yaml: /);
  });

  test('a well-formed YAML body creates the object', async () => {
    const r = await rest.post(cms, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  count: "1"\n', 'application/yaml');
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body.data, { count: '1' });
  });

  test('YAML is read as YAML 1.1, as kube-apiserver reads it: y/on/yes keys are the boolean true, repeats are warned', async () => {
    const r = await rest.post(
      cms,
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml11\ndata:\n  n: "1"\n  y: "2"\n  on: "3"\n  yes: "4"\n',
      'application/yaml',
    );
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body.data, { false: '1', true: '4' });
    assert.equal(r.headers.get('warning'), '299 - "line 8: key true already set in map", 299 - "line 9: key true already set in map"');
    const value = await rest.post(cms, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml11b\ndata:\n  x: yes\n', 'application/yaml');
    assertStatus(
      value,
      400,
      'BadRequest',
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal bool into Go struct field ConfigMap.data of type string',
    );
  });

  test("YAML numbers, timestamps and keys are what kube's YAML-to-JSON step makes of them (answers checked against kube-apiserver 1.36.4)", async () => {
    // 1e5 is a number to go-yaml (YAML 1.1 alone would leave it text), so a ConfigMap value refuses it.
    const exponent = await rest.post(cms, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yaml-exp}\ndata: {a: 1e5}\n', 'application/yaml');
    assertStatus(
      exponent,
      400,
      'BadRequest',
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string',
    );
    // An integer field takes a float with an integral value: the conversion writes 2e0 as 2.
    const deployment = await rest.post(
      `/apis/apps/v1/namespaces/${ns}/deployments`,
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: yaml-exp}\nspec: {replicas: 2e0, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: x}]}}}\n',
      'application/yaml',
    );
    assert.equal(deployment.status, 201, deployment.text);
    assert.equal(deployment.body.spec.replicas, 2);
    // Base-60 forms and timestamps stay the text written; 0o17 is 15, a key of 1.5e-7 is written as Go prints a float.
    const text = await rest.post(
      cms,
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yaml-text}\ndata: {a: 1:30, b: 2001-12-14, 0o17: c, 1.5e-7: d}\n',
      'application/yaml',
    );
    assert.equal(text.status, 201, text.text);
    assert.deepEqual(text.body.data, { a: '1:30', b: '2001-12-14', '15': 'c', '1.5e-07': 'd' });
    // What the conversion to JSON refuses is worded without go-yaml's "yaml: ", as kube words it.
    const nullKey = await rest.post(cms, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yaml-null}\ndata: {~: x}\n', 'application/yaml');
    assertStatus(
      nullKey,
      400,
      'BadRequest',
      /^the object provided is unrecognized \(must be of type ConfigMap\): unsupported map key of type: %!s\(<nil>\), key: <nil>, value: "x" \(/,
    );
    const nan = await rest.patch(
      `${cms}/yaml-nan?fieldManager=t`,
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yaml-nan}\ndata: {a: .nan}\n',
      'application/apply-patch+yaml',
    );
    assertStatus(nan, 400, 'BadRequest', 'error decoding YAML: error converting YAML to JSON: json: unsupported value: NaN');
  });

  test('a JSON body that is not an object is 400', async () => {
    for (const body of ['[]', '"text"', '42', 'null']) {
      const r = await rest.post(cms, body);
      assertStatus(r, 400, 'BadRequest', /^the object provided is unrecognized \(must be of type ConfigMap\): couldn't get version\/kind; json parse error: /);
    }
  });

  test("an empty body is 400 with kube's message, not 500", async () => {
    const r = await rest.post(cms, '');
    assertStatus(
      r,
      400,
      'BadRequest',
      "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)",
    );
  });

  test('__proto__ keys are refused', async () => {
    const r = await rest.post(cms, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"proto"},"__proto__":{"polluted":true}}');
    assertStatus(r, 400, 'BadRequest', /__proto__/);
    assert.equal((await rest.get(`${cms}/proto`)).status, 404, 'nothing was stored');
  });

  test('a wrong field type is a 400 decode error naming the Go field, not a 500', async () => {
    const r = await rest.post(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: 'not-an-object' });
    assertStatus(
      r,
      400,
      'BadRequest',
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ConfigMap.metadata of type v1.ObjectMeta',
    );
  });
});

describe('wrong kind or apiVersion', { concurrency: true }, () => {
  test("a kind other than the path's is 400 with kube's message", async () => {
    const r = await rest.post(cms, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } });
    assertStatus(r, 400, 'BadRequest', /^Secret in version "v1" cannot be handled as a ConfigMap: /);
  });

  test("an apiVersion other than the path's is 400 with kube's message", async () => {
    const r = await rest.post(cms, { apiVersion: 'apps/v1', kind: 'ConfigMap', metadata: { name: 'x' } });
    assertStatus(r, 400, 'BadRequest', 'the API version in the data (apps/v1) does not match the expected API version (v1)');
  });

  test('a Deployment sent to /api/v1 configmaps is 400', async () => {
    const r = await rest.post(cms, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' } });
    assertStatus(r, 400, 'BadRequest');
  });

  test("missing apiVersion and kind default to the path's", async () => {
    const r = await rest.post(cms, { metadata: { name: 'nokind' } });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.kind, 'ConfigMap');
    assert.equal(r.body.apiVersion, 'v1');
  });
});

describe('unknown fields (fieldValidation)', { concurrency: true }, () => {
  const deployment = (name: string): Record<string, unknown> => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, bogusMeta: 1 },
    spec: {
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x', bogus: true }] } },
    },
  });

  test('Strict: 400 naming every unknown field by its path', async () => {
    const r = await rest.post(`/apis/apps/v1/namespaces/${ns}/deployments?fieldValidation=Strict`, deployment('strict'));
    assertStatus(
      r,
      400,
      'BadRequest',
      'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "metadata.bogusMeta", unknown field "spec.template.spec.containers[0].bogus"',
    );
  });

  test('Warn (the default): stored without the unknown fields, one Warning header each', async () => {
    const r = await rest.post(`/apis/apps/v1/namespaces/${ns}/deployments`, deployment('warn'));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.metadata.bogusMeta, undefined);
    assert.equal(r.body.spec.template.spec.containers[0].bogus, undefined);
    assert.equal(
      r.headers.get('warning'),
      '299 - "unknown field \\"metadata.bogusMeta\\"", 299 - "unknown field \\"spec.template.spec.containers[0].bogus\\""',
    );
  });

  test('Ignore: stored without the unknown fields, no warning', async () => {
    const r = await rest.post(`/apis/apps/v1/namespaces/${ns}/deployments?fieldValidation=Ignore`, deployment('ignore'));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.headers.get('warning'), null);
    assert.equal(r.body.spec.template.spec.containers[0].bogus, undefined);
  });

  test('Strict on PATCH rejects a patch that adds an unknown field', async () => {
    await rest.create(cms, cm('strictpatch'));
    const r = await rest.patch(`${cms}/strictpatch?fieldValidation=Strict`, { data: { a: 'b' }, extra: 1 });
    // kube's 422 for a patch: the patched object in the message, the field is "patch".
    assertStatus(r, 422, 'Invalid', /^ "" is invalid: patch: Invalid value: "\{.*\\"extra\\":1\}": strict decoding error: unknown field "extra"$/);
    assert.equal(r.body.details.causes[0].field, 'patch');
    assert.equal(r.body.details.causes[0].reason, 'FieldValueInvalid');
    const ok = await rest.patch(`${cms}/strictpatch?fieldValidation=Ignore`, { data: { a: 'b' }, extra: 1 });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.extra, undefined);
  });

  test('maps and opaque fields are not pruned', async () => {
    const r = await rest.post(`${cms}?fieldValidation=Strict`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'maps', labels: { any: 'x' }, annotations: { 'a/b': 'c' } },
      data: { whatever: '1' },
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body.data, { whatever: '1' });
  });
});

describe('sizes and media types', { concurrency: true }, () => {
  test('a body over 3 MiB is 413', async () => {
    const big = JSON.stringify(cm('huge', { blob: 'x'.repeat(3 * 1024 * 1024 + 16) }));
    const r = await rest.post(cms, big);
    assertStatus(r, 413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728');
  });

  test('a chunked body (no Content-Length) over 3 MiB is 413', async () => {
    const url = new URL(`${srv.url}${cms}`);
    const status = await new Promise<{ code: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        },
        (res) => {
          let body = '';
          res.on('data', (d: Buffer) => {
            body += d.toString();
          });
          res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', (err) => {
        // The server may close the connection once it has answered 413.
        if ((err as NodeJS.ErrnoException).code === 'EPIPE' || (err as NodeJS.ErrnoException).code === 'ECONNRESET') return;
        reject(err);
      });
      const chunk = 'x'.repeat(256 * 1024);
      req.write('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"chunked"},"data":{"a":"');
      let i = 0;
      const pump = (): void => {
        while (i < 14) {
          i++;
          if (!req.write(chunk)) {
            req.once('drain', pump);
            return;
          }
        }
        req.end('"}}');
      };
      pump();
    });
    assert.equal(status.code, 413, status.body);
    assert.equal((JSON.parse(status.body) as { reason: string }).reason, 'RequestEntityTooLarge');
  });

  test("objects are stored up to 1.5 MiB (etcd's request limit); a bigger one under the 3 MiB body limit is 413", async () => {
    // ControllerRevision.data is opaque: no kind-specific size rule stands before the storage limit.
    const revision = (name: string, size: number): Record<string, unknown> => ({
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name },
      revision: 1,
      data: { blob: 'x'.repeat(size) },
    });
    const fits = await rest.post(`/apis/apps/v1/namespaces/${ns}/controllerrevisions`, revision('fits', 1_400_000));
    assert.equal(fits.status, 201, fits.text.slice(0, 200));
    const big = await rest.post(`/apis/apps/v1/namespaces/${ns}/controllerrevisions`, revision('toobig', 2 * 1024 * 1024));
    assertStatus(big, 413, 'RequestEntityTooLarge', /^Request entity too large: object is \d+ bytes, more than the storage limit of 1572864 bytes$/);
    const absent = await rest.get(`/apis/apps/v1/namespaces/${ns}/controllerrevisions/toobig`);
    assert.equal(absent.status, 404);
  });

  test('an unsupported Content-Type is 415', async () => {
    const r = await rest.post(cms, JSON.stringify(cm('plain')), 'text/plain');
    assertStatus(
      r,
      415,
      'UnsupportedMediaType',
      /^the body of the request was in an unknown format - accepted media types include: application\/json, application\/yaml/,
    );
  });

  test('a patch with a non-patch Content-Type is 415', async () => {
    await rest.create(cms, cm('patch415'));
    const r = await rest.patch(`${cms}/patch415`, { data: { a: 'b' } }, 'application/json');
    // kube-apiserver's PATCH route (go-restful) refuses types it does not declare before its handler runs.
    assertStatus(r, 415, 'UnsupportedMediaType', '415: Unsupported Media Type');
    assert.deepEqual(r.body.details, {});
  });

  test('a malformed patch body is 400', async () => {
    await rest.create(cms, cm('badpatch'));
    const r = await rest.patch(`${cms}/badpatch`, '{"data":', 'application/merge-patch+json');
    assertStatus(r, 400, 'BadRequest');
    const j = await rest.patch(`${cms}/badpatch`, '{"op":"add"}', 'application/json-patch+json');
    assert.equal(j.status, 400, j.text);
  });

  test('an Accept the server cannot produce is 406', async () => {
    const r = await api(srv.url, cms, { headers: { accept: 'text/html' } });
    assertStatus(r, 406, 'NotAcceptable');
  });
});

describe('paths and verbs', { concurrency: true }, () => {
  test('an unknown path is 404', async () => {
    for (const path of ['/nothing-here', '/apis/nogroup.example.com/v1/things', '/api/v2', '/apis/apps/v9/deployments']) {
      const r = await rest.get(path);
      assert.equal(r.status, 404, `${path}: ${r.text}`);
    }
  });

  test('an unknown resource in a known group is 404 NotFound', async () => {
    for (const path of ['/api/v1/flurbs', '/apis/apps/v1/flurbs', `/apis/apps/v1/namespaces/${ns}/flurbs`]) {
      const r = await rest.get(path);
      assertStatus(r, 404, 'NotFound', 'the server could not find the requested resource');
      assert.deepEqual(r.body.details, {}, path);
    }
  });

  test('an unknown subresource is 404', async () => {
    await rest.create(cms, cm('nosub'));
    const r = await rest.get(`${cms}/nosub/flurb`);
    assertStatus(r, 404, 'NotFound', 'the server could not find the requested resource');
    assert.deepEqual(r.body.details, {});
  });

  test("a missing object is 404 with kube's message and details", async () => {
    const r = await rest.get(`/apis/apps/v1/namespaces/${ns}/deployments/nope`);
    assertStatus(r, 404, 'NotFound', 'deployments.apps "nope" not found');
    assert.deepEqual(r.body.details, { name: 'nope', group: 'apps', kind: 'deployments' });
  });

  test('verbs a resource does not support are 405 MethodNotAllowed', async () => {
    await rest.create(cms, cm('verb'));
    const cases: Array<[string, string]> = [
      ['DELETE', '/api/v1/namespaces'],
      ['POST', `${cms}/verb`],
      ['PUT', cms],
      ['PATCH', cms],
      ['POST', '/api/v1/componentstatuses'],
      ['DELETE', `/apis/apps/v1/namespaces/${ns}/deployments/x/status`],
    ];
    for (const [method, path] of cases) {
      const r = await api(srv.url, path, {
        method,
        headers: { 'content-type': 'application/json' },
        body: method === 'DELETE' ? undefined : JSON.stringify(cm('verb')),
      });
      assertStatus(r, 405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
      // As kube's generic answers: empty details, shown.
      assert.deepEqual(r.body.details, {}, `${method} ${path}`);
    }
  });

  test('kubectl reports 405 for an unsupported verb', async () => {
    const r = await k.run(['delete', '--raw', '/api/v1/namespaces']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /MethodNotAllowed|the server does not allow this method on the requested resource/);
  });
});

describe('conflicts', { concurrency: true }, () => {
  test("AlreadyExists is 409 with kube's message and details", async () => {
    await rest.create(cms, cm('twice'));
    const r = await rest.post(cms, cm('twice'));
    assertStatus(r, 409, 'AlreadyExists', 'configmaps "twice" already exists');
    assert.deepEqual(r.body.details, { name: 'twice', kind: 'configmaps' });
  });

  test("PUT with a stale resourceVersion is 409 Conflict with kube's message", async () => {
    const created = await rest.create(cms, cm('stale', { v: '1' }));
    const first = await rest.put(`${cms}/stale`, { ...created, data: { v: '2' } });
    assert.equal(first.status, 200, first.text);
    const second = await rest.put(`${cms}/stale`, { ...created, data: { v: '3' } });
    assertStatus(
      second,
      409,
      'Conflict',
      'Operation cannot be fulfilled on configmaps "stale": the object has been modified; please apply your changes to the latest version and try again',
    );
    assert.deepEqual(second.body.details, { name: 'stale', kind: 'configmaps' });
    assert.equal((await rest.get(`${cms}/stale`)).body.data.v, '2');
  });

  test('PUT without a resourceVersion is an unconditional update', async () => {
    const created = await rest.create(cms, cm('uncond', { v: '1' }));
    await rest.patch(`${cms}/uncond`, { data: { v: '2' } });
    const { resourceVersion: _rv, ...meta } = created.metadata as Record<string, unknown>;
    const r = await rest.put(`${cms}/uncond`, { ...created, metadata: meta, data: { v: '3' } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.data.v, '3');
  });

  test('PUT of a missing object is 404 (configmaps do not create on update)', async () => {
    const r = await rest.put(`${cms}/ghost`, cm('ghost'));
    assertStatus(r, 404, 'NotFound', 'configmaps "ghost" not found');
  });

  test('PATCH with a stale resourceVersion in the patch is 409', async () => {
    const created = await rest.create(cms, cm('stalepatch'));
    await rest.patch(`${cms}/stalepatch`, { data: { a: '1' } });
    const r = await rest.patch(`${cms}/stalepatch`, { metadata: { resourceVersion: created.metadata.resourceVersion }, data: { a: '2' } });
    assertStatus(r, 409, 'Conflict');
  });

  test('kubectl replace with a stale object reports the conflict', async () => {
    const name = uniqueName('kr');
    const created = await rest.create(cms, cm(name));
    await rest.patch(`${cms}/${name}`, { data: { a: '1' } });
    const r = await k.run(['replace', '-n', ns, '-f', '-'], { input: JSON.stringify({ ...created, data: { a: '2' } }) });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, new RegExp(`Error from server \\(Conflict\\).*Operation cannot be fulfilled on configmaps "${name}": the object has been modified`));
  });
});

describe('never a 500', () => {
  test('garbage on many endpoints and methods never gets a 5xx', async () => {
    await rest.create(cms, cm('fuzz'));
    const paths = [
      cms,
      `${cms}/fuzz`,
      `${cms}/fuzz/status`,
      '/api/v1/namespaces',
      `/api/v1/namespaces/${ns}`,
      `/api/v1/namespaces/${ns}/finalize`,
      `/apis/apps/v1/namespaces/${ns}/deployments`,
      `/apis/apps/v1/namespaces/${ns}/deployments/x/scale`,
      '/api/v1/nodes',
      `${cms}?labelSelector=a%20in%20(`,
      `${cms}?fieldSelector=metadata.name%3D%3D%3D`,
      `${cms}?watch=maybe&timeoutSeconds=1`,
      `${cms}?limit=-1`,
      `${cms}?resourceVersion=abc`,
      `${cms}?timeoutSeconds=x`,
      `${cms}/fuzz?gracePeriodSeconds=abc`,
    ];
    const bodies: Array<[string, string]> = [
      ['application/json', '{'],
      ['application/json', '{"metadata":{"name":5}}'],
      ['application/json', '{"metadata":{"labels":"x"}}'],
      ['application/json', '{"kind":7}'],
      ['application/json', '{"metadata":{"name":"fuzz","resourceVersion":7}}'],
      ['application/json', '{"metadata":{"name":"fuzz","finalizers":"x"}}'],
      ['application/json', '{"metadata":{"name":"fuzz","annotations":{"a":1}}}'],
      ['application/json', '[{"op":"add"}]'],
      ['application/yaml', '- a\n- b'],
      ['application/yaml', ': :'],
      ['application/merge-patch+json', '[1,2]'],
      ['application/json-patch+json', '{"op":"add"}'],
      // kube-apiserver answers an unknown $patch directive with a 500; Capstan with a 400.
      ['application/strategic-merge-patch+json', '{"spec":{"$patch":"bogus"}}'],
      ['application/strategic-merge-patch+json', '{"metadata":{"$patch":"bogus"}}'],
      ['application/json-patch+json', '[{"op":"move","from":"/nope","path":"/x"}]'],
      ['application/strategic-merge-patch+json', '"str"'],
    ];
    const failures: string[] = [];
    const requests = paths.flatMap((path) =>
      ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].flatMap((method) =>
        (method === 'GET' ? bodies.slice(0, 1) : bodies).map(([ct, body]) => ({ path, method, ct, body })),
      ),
    );
    // A few at a time: the point is the answers, not load.
    for (let i = 0; i < requests.length; i += 8) {
      await Promise.all(
        requests.slice(i, i + 8).map(async ({ path, method, ct, body }) => {
          try {
            const r = await api(srv.url, path, { method, headers: { 'content-type': ct }, body: method === 'GET' ? undefined : body });
            if (r.status >= 500) failures.push(`${method} ${path} [${ct}] ${body} -> ${r.status} ${r.text.slice(0, 200)}`);
          } catch (err) {
            const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : '';
            failures.push(`${method} ${path} [${ct}] ${body} -> ${String(err)} ${cause}`);
          }
        }),
      );
    }
    assert.deepEqual(failures, []);
  });
});
