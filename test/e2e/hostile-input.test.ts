/**
 * Hostile and careless input (issue 8), on the embedded store and on Redis with two workers: every
 * answer is the 4xx kube-apiserver 1.36 gives (checked against the reference), in milliseconds, and
 * nothing stored changes. Where kube answers a client's mistake with a 500 (unmapped strategic merge
 * patch errors, a `.` namespace), Capstan answers 400 with the same text.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { api, startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';
import { startRedisWorkers, type RedisWorkers } from '../helpers/redis-workers.js';
import { assertStatus, type ApiResult } from './rest.js';

interface Target {
  name: string;
  url: string;
  stop(): Promise<void>;
}

const targets: Array<{ name: string; start(): Promise<Target> }> = [
  {
    name: 'memory',
    start: async () => {
      const s: TestServer = await startTestServer();
      return { name: 'memory', url: s.url, stop: () => s.stop() };
    },
  },
  {
    name: 'redis --workers 2',
    start: async () => {
      const w: RedisWorkers = await startRedisWorkers();
      return { name: 'redis --workers 2', url: w.url, stop: () => w.stop() };
    },
  },
];

function send(url: string, method: string, path: string, body?: string, contentType = 'application/json', accept = 'application/json'): Promise<ApiResult> {
  const headers: Record<string, string> = { accept };
  if (body !== undefined) headers['content-type'] = contentType;
  return api(url, path, { method, headers, body });
}

/**
 * A request whose path goes on the wire exactly as written (fetch and WHATWG URLs resolve `..` and
 * `%2e%2e` before sending, which would hide what the server does with them).
 */
function rawPath(url: string, method: string, path: string, body?: string): Promise<ApiResult> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: hostname, port: Number(port), method, path, headers: { accept: 'application/json', 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // plain text
          }
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
          resolve({ status: res.statusCode ?? 0, headers, body: parsed, text });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** JSON nested `depth` objects deep: {"a":{"a":...1...}}. */
function nested(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

function revision(name: string, dataJson: string): string {
  return `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"${name}"},"revision":1,"data":${dataJson}}`;
}

/** The "billion laughs": nine levels of nine aliases, 483 bytes, 387 million strings if expanded. */
function laughs(levels: number, name = 'laughs'): string {
  const lines = ['apiVersion: v1', 'kind: ConfigMap', `metadata: {name: ${name}}`, 'x0: &x0 "lol"'];
  for (let i = 1; i <= levels; i++)
    lines.push(
      `x${i}: &x${i} [${Array(9)
        .fill(`*x${i - 1}`)
        .join(',')}]`,
    );
  return lines.join('\n');
}

/** `text` as a literal in a regular expression. */
function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

for (const spec of targets) {
  describe(`hostile input (${spec.name})`, () => {
    let t: Target;
    let ns: string;
    let other: string;
    let canary: string;
    const cms = (namespace: string): string => `/api/v1/namespaces/${namespace}/configmaps`;

    before(async () => {
      t = await spec.start();
      ns = uniqueName('hostile');
      other = uniqueName('victim');
      for (const n of [ns, other]) {
        const r = await send(t.url, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: n } }));
        assert.equal(r.status, 201, r.text);
      }
      const c = await send(
        t.url,
        'POST',
        cms(other),
        JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { secret: 'keep' } }),
      );
      assert.equal(c.status, 201, c.text);
      canary = c.text;
    });

    after(async () => {
      // Nothing any test sent changed the canary in the other namespace.
      const r = await send(t.url, 'GET', `${cms(other)}/x`);
      assert.equal(r.text, canary);
      await t.stop();
    });

    test('YAML alias expansion ("billion laughs", 483 bytes) is 400 in milliseconds, as go-yaml refuses it', async () => {
      const body = laughs(9);
      assert.equal(Buffer.byteLength(body), 483);
      for (const levels of [9, 4]) {
        const started = Date.now();
        const r = await send(t.url, 'POST', cms(ns), laughs(levels), 'application/yaml');
        assertStatus(
          r,
          400,
          'BadRequest',
          /^the object provided is unrecognized \(must be of type ConfigMap\): yaml: document contains excessive aliasing \([0-9a-f]{60} \.\.\.\)$/,
        );
        assert.ok(Date.now() - started < 2000, `answered in ${Date.now() - started} ms`);
      }
      // Three levels (729 strings) stay within go-yaml's budget: decoded; the undeclared fields are dropped.
      const small = await send(t.url, 'POST', cms(ns), laughs(3), 'application/yaml');
      assert.equal(small.status, 201, small.text.slice(0, 300));
    });

    test('a self-referencing YAML anchor is 400, as go-yaml words it', async () => {
      const r = await send(t.url, 'POST', cms(ns), 'apiVersion: v1\nkind: ConfigMap\nmetadata: &m {name: x, self: *m}\n', 'application/yaml');
      assertStatus(r, 400, 'BadRequest', /^the object provided is unrecognized \(must be of type ConfigMap\): yaml: anchor 'm' value contains itself \(/);
    });

    test('JSON nested 10,000 levels is 400 everywhere a body is read (create, update, merge and strategic patches, managedFields)', async () => {
      const deep = nested(10_000);
      const create = await send(t.url, 'POST', `/apis/apps/v1/namespaces/${ns}/controllerrevisions`, revision('deep', deep));
      assertStatus(
        create,
        400,
        'BadRequest',
        /^the object provided is unrecognized \(must be of type ControllerRevision\): couldn't get version\/kind; json parse error: invalid character '\{' exceeded max depth \(/,
      );
      const fields = await send(
        t.url,
        'POST',
        cms(ns),
        `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"mf","managedFields":[{"manager":"m","operation":"Update","fieldsType":"FieldsV1","fieldsV1":${deep}}]}}`,
      );
      assertStatus(fields, 400, 'BadRequest', /exceeded max depth/);
      const base = await send(t.url, 'POST', cms(ns), JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'target' } }));
      assert.equal(base.status, 201, base.text);
      const put = await send(t.url, 'PUT', `${cms(ns)}/target`, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"target"},"data":${deep}}`);
      assertStatus(put, 400, 'BadRequest', /exceeded max depth/);
      const merge = await send(t.url, 'PATCH', `${cms(ns)}/target`, `{"data":${deep}}`, 'application/merge-patch+json');
      assertStatus(merge, 400, 'BadRequest', "error decoding patch: invalid character '{' exceeded max depth");
      const smp = await send(t.url, 'PATCH', `${cms(ns)}/target`, `{"data":${deep}}`, 'application/strategic-merge-patch+json');
      assertStatus(smp, 400, 'BadRequest', "invalid character '{' exceeded max depth");
      const yaml = await send(
        t.url,
        'POST',
        cms(ns),
        `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\ndata: ${'['.repeat(5000)}${']'.repeat(5000)}\n`,
        'application/yaml',
      );
      assertStatus(yaml, 400, 'BadRequest', /yaml: line 4: exceeded max depth of 1000/);
      const unchanged = await send(t.url, 'GET', `${cms(ns)}/target`);
      assert.equal(unchanged.text, base.text);
    });

    test('an object nested to the limit (1,000 levels) is stored and served in every encoding, list and watch', async () => {
      // The object itself is the first level: data nested 999 deep makes 1,000 in all.
      const r = await send(t.url, 'POST', `/apis/apps/v1/namespaces/${ns}/controllerrevisions`, revision('ladder', nested(999)));
      assert.equal(r.status, 201, r.text.slice(0, 300));
      const path = `/apis/apps/v1/namespaces/${ns}/controllerrevisions`;
      for (const accept of ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf', 'application/json;as=Table;g=meta.k8s.io;v=v1']) {
        const one = await send(t.url, 'GET', `${path}/ladder`, undefined, undefined, accept);
        assert.equal(one.status, 200, `${accept}: ${one.text.slice(0, 200)}`);
        const list = await send(t.url, 'GET', path, undefined, undefined, accept);
        assert.equal(list.status, 200, `${accept} list: ${list.text.slice(0, 200)}`);
      }
      const watch = await send(t.url, 'GET', `${path}?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Dladder`);
      assert.equal(watch.status, 200);
      assert.match(watch.text, /^\{"type":"ADDED"/);
      const patched = await send(t.url, 'PATCH', `${path}/ladder`, '{"metadata":{"labels":{"a":"b"}}}', 'application/merge-patch+json');
      assert.equal(patched.status, 200, patched.text.slice(0, 200));
      const tooDeep = await send(t.url, 'POST', path, revision('ladder2', nested(1000)));
      assert.equal(tooDeep.status, 400, tooDeep.text.slice(0, 200));
      assert.match(tooDeep.body.message, /exceeded max depth/);
    });

    test('a large object reads back as YAML (the YAML writer is linear, no stack)', async () => {
      const big = 'x'.repeat(1_200_000);
      const r = await send(
        t.url,
        'POST',
        `/apis/apps/v1/namespaces/${ns}/controllerrevisions`,
        revision('bigyaml', JSON.stringify({ blob: big, 'line\nbreaks': `${'a b\n'.repeat(50_000)}` })),
      );
      assert.equal(r.status, 201, r.text.slice(0, 200));
      const one = await send(t.url, 'GET', `/apis/apps/v1/namespaces/${ns}/controllerrevisions/bigyaml`, undefined, undefined, 'application/yaml');
      assert.equal(one.status, 200, one.text.slice(0, 200));
      assert.ok(one.text.includes(`  blob: ${big}\n`), 'the long line is written whole');
      const list = await send(t.url, 'GET', `/apis/apps/v1/namespaces/${ns}/controllerrevisions`, undefined, undefined, 'application/yaml');
      assert.equal(list.status, 200, list.text.slice(0, 200));
    });

    test("strategic merge patch errors are client errors with the library's words (kube answers 500 for the first two)", async () => {
      const pod = await send(
        t.url,
        'POST',
        `/api/v1/namespaces/${ns}/pods`,
        JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }),
      );
      assert.equal(pod.status, 201, pod.text);
      const smp = (body: unknown): Promise<ApiResult> =>
        send(t.url, 'PATCH', `/api/v1/namespaces/${ns}/pods/p`, JSON.stringify(body), 'application/strategic-merge-patch+json');
      assertStatus(await smp({ spec: { $patch: 'bogus' } }), 400, 'BadRequest', 'unknown patch type: bogus in map: map[$patch:bogus]');
      assertStatus(
        await smp({ spec: { containers: [{ $patch: 'delete' }] } }),
        400,
        'BadRequest',
        'map: map[$patch:delete] does not contain declared merge key: name',
      );
      assertStatus(
        await smp({ spec: { containers: [{ name: 5 }] } }),
        422,
        'Invalid',
        ' "" is invalid: patch: Invalid value: "map[spec:map[containers:[map[name:5]]]]": cannot convert int64 to string',
      );
      assertStatus(await smp({ spec: { $retainKeys: 5 } }), 400, 'BadRequest', 'invalid patch format of retainKeys');
      const after = await send(t.url, 'GET', `/api/v1/namespaces/${ns}/pods/p`);
      assert.equal(after.text, pod.text);
    });

    test('dot segments, escapes and backslashes never leave the request path', async () => {
      const get = (path: string): Promise<ApiResult> => rawPath(t.url, 'GET', path);
      for (const path of [
        `${cms(ns)}/../../${other}/configmaps/x`,
        `${cms(ns)}/%2e%2e/%2e%2e/${other}/configmaps/x`,
        `/apis/apps/../../api/v1/namespaces/${other}/configmaps/x`,
      ]) {
        const r = await get(path);
        assert.equal(r.status, 404, `${path}: ${r.text.slice(0, 200)}`);
        assert.equal(r.body.message, 'the server could not find the requested resource', path);
      }
      const put = await rawPath(
        t.url,
        'PUT',
        `${cms(ns)}/../../${other}/configmaps/x`,
        JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { secret: 'stolen' } }),
      );
      assertStatus(put, 404, 'NotFound');
      const backslash = await get(`/api\\v1\\namespaces\\${other}\\configmaps`);
      assert.equal(backslash.status, 404);
      assert.equal(backslash.text, '404 page not found\n');
      assertStatus(await get(`${cms(ns)}/..`), 400, 'BadRequest', 'Name parameter invalid: "..": may not be \'..\'');
      assertStatus(await get(`${cms(ns)}/%2e`), 400, 'BadRequest', 'Name parameter invalid: ".": may not be \'.\'');
      assertStatus(await get('/api/v1/namespaces/./configmaps'), 400, 'BadRequest', 'Namespace parameter invalid: ".": may not be \'.\'');
      assertStatus(await get(`/api/v1/namespaces/${ns}//configmaps`), 404, 'NotFound');
    });

    test('__proto__ keys are refused however they are spelled, in every body and patch', async () => {
      const escaped = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p1"},"data":{"\\u005f_proto__":"x"}}';
      assertStatus(await send(t.url, 'POST', cms(ns), escaped), 400, 'BadRequest', 'invalid field name "__proto__"');
      const base = await send(t.url, 'POST', cms(ns), JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'p2' } }));
      assert.equal(base.status, 201);
      assertStatus(
        await send(t.url, 'PATCH', `${cms(ns)}/p2`, '{"data":{"\\u005f_proto__":"x"}}', 'application/merge-patch+json'),
        400,
        'BadRequest',
        'invalid field name "__proto__"',
      );
      assertStatus(
        await send(t.url, 'PATCH', `${cms(ns)}/p2`, '{"data":{"\\u005f_proto__":"x"}}', 'application/strategic-merge-patch+json'),
        400,
        'BadRequest',
        'invalid field name "__proto__"',
      );
      assertStatus(
        await send(
          t.url,
          'PATCH',
          `${cms(ns)}/p2`,
          '[{"op":"add","path":"/data","value":{}},{"op":"add","path":"/data/__proto__","value":"x"}]',
          'application/json-patch+json',
        ),
        400,
        'BadRequest',
        'invalid field name "__proto__"',
      );
      assertStatus(
        await send(t.url, 'POST', cms(ns), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p3}\ndata: {__proto__: x}\n', 'application/yaml'),
        400,
        'BadRequest',
        'invalid field name "__proto__"',
      );
      const unchanged = await send(t.url, 'GET', `${cms(ns)}/p2`);
      assert.equal(unchanged.text, base.text);
    });

    test("JSON patch copies are bounded (kube's 3 MiB): 1.9 KB of copies cannot build a 64 MiB object", async () => {
      const start = await send(
        t.url,
        'POST',
        `/apis/apps/v1/namespaces/${ns}/controllerrevisions`,
        revision('copies', JSON.stringify({ a: 'x'.repeat(512 * 1024) })),
      );
      assert.equal(start.status, 201);
      const ops = [{ op: 'copy', from: '/data/a', path: '/data/b' }];
      for (let i = 0; i < 18; i++) ops.push({ op: 'copy', from: '/data', path: `/data/c${i}` });
      const r = await send(t.url, 'PATCH', `/apis/apps/v1/namespaces/${ns}/controllerrevisions/copies`, JSON.stringify(ops), 'application/json-patch+json');
      assertStatus(r, 422, 'Invalid', 'the server rejected our request due to an error in our request');
      const unchanged = await send(t.url, 'GET', `/apis/apps/v1/namespaces/${ns}/controllerrevisions/copies`);
      assert.equal(unchanged.text, start.text);
    });

    test('duplicate JSON keys: Strict refuses them, Warn warns, both as kube words them', async () => {
      const body = '{"apiVersion":"v1","kind":"ConfigMap","foo":1,"metadata":{"name":"dup","bar":2,"name":"dup"},"data":{"x":"1","x":"2"}}';
      assertStatus(
        await send(t.url, 'POST', `${cms(ns)}?fieldValidation=Strict`, body),
        400,
        'BadRequest',
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "foo", unknown field "metadata.bar", duplicate field "metadata.name", duplicate field "data.x"',
      );
      const warn = await send(t.url, 'POST', cms(ns), body);
      assert.equal(warn.status, 201, warn.text);
      assert.equal(
        warn.headers.get('warning'),
        '299 - "unknown field \\"foo\\"", 299 - "unknown field \\"metadata.bar\\"", 299 - "duplicate field \\"metadata.name\\"", 299 - "duplicate field \\"data.x\\""',
      );
      assert.deepEqual(warn.body.data, { x: '2' });
    });

    test('query parameters parse as kube-apiserver parses them', async () => {
      assertStatus(
        await send(t.url, 'DELETE', `${cms(ns)}/whatever?gracePeriodSeconds=abc`),
        400,
        'BadRequest',
        'strconv.ParseInt: parsing "abc": invalid syntax',
      );
      assertStatus(await send(t.url, 'GET', `${cms(ns)}?limit=1e3`), 400, 'BadRequest', 'strconv.ParseInt: parsing "1e3": invalid syntax');
      const dry = await send(t.url, 'POST', `${cms(ns)}?dryRun=maybe`, JSON.stringify({ metadata: { name: 'dry' } }));
      assertStatus(dry, 422, 'Invalid', 'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["maybe"]: supported values: "All"');
      assertStatus(
        await send(t.url, 'POST', `${cms(ns)}?fieldValidation=bogus`, JSON.stringify({ metadata: { name: 'fv' } })),
        422,
        'Invalid',
        'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "bogus": supported values: "", "Ignore", "Strict", "Warn"',
      );
      // Any value but 0/f/false is true: watch=maybe is a watch.
      const watch = await send(t.url, 'GET', `${cms(ns)}?watch=maybe&timeoutSeconds=1`);
      assert.equal(watch.status, 200);
      assert.match(watch.text, /^\{"type":"ADDED"/);
      const pod = await send(
        t.url,
        'POST',
        `/api/v1/namespaces/${ns}/pods`,
        JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'evictee' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }),
      );
      assert.equal(pod.status, 201, pod.text);
      const eviction = await send(t.url, 'POST', `/api/v1/namespaces/${ns}/pods/evictee/eviction`, '{"metadata":5}');
      assertStatus(
        eviction,
        400,
        'BadRequest',
        'Eviction in version "v1" cannot be handled as a Eviction: json: cannot unmarshal number into Go struct field Eviction.metadata of type v1.ObjectMeta',
      );
    });

    test('fuzz findings answer as kube does: odd field names in warnings, bad YAML text, kind-changing patches, nameless PUT, dot names', async () => {
      // An unknown field whose name holds a control character and a non-ASCII letter: the Warning
      // header quotes it as Go's %q does (UTF-8 bytes as they are, \x01 escaped), never a 500.
      const warned = await new Promise<{ status: number; warning: string }>((resolve, reject) => {
        const { hostname, port } = new URL(t.url);
        const body = Buffer.from('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"odd-field"},"f\u00fc\\u0001":1}');
        const req = request({ host: hostname, port: Number(port), method: 'POST', path: cms(ns), headers: { 'content-type': 'application/json' } }, (res) => {
          res.resume();
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              warning: Buffer.from(res.rawHeaders[res.rawHeaders.findIndex((h) => h.toLowerCase() === 'warning') + 1] ?? '', 'latin1').toString('utf8'),
            }),
          );
        });
        req.on('error', reject);
        req.end(body);
      });
      assert.deepEqual(warned, { status: 201, warning: '299 - "unknown field \\"f\u00fc\\\\x01\\""' });

      const yaml = (text: Buffer): Promise<ApiResult> =>
        api(t.url, cms(ns), { method: 'POST', headers: { 'content-type': 'application/yaml', accept: 'application/json' }, body: new Uint8Array(text) });
      const bom = await yaml(Buffer.from('\ufeffapiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: with-bom\n'));
      assert.equal(bom.status, 201, bom.text);
      const prefix = 'the object provided is unrecognized (must be of type ConfigMap): yaml: ';
      assertStatus(
        await yaml(Buffer.from('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \xff\n', 'latin1')),
        400,
        'BadRequest',
        new RegExp(`^${escape(prefix)}invalid leading UTF-8 octet \\(`),
      );
      assertStatus(
        await yaml(Buffer.from('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\x01\n')),
        400,
        'BadRequest',
        new RegExp(`^${escape(prefix)}control characters are not allowed \\(`),
      );

      // A merge patch that changes the kind: 422 with the scheme's words; a kind of the wrong type: the decoder's.
      const merge = (patch: string): Promise<ApiResult> => send(t.url, 'PATCH', `${cms(ns)}/odd-field`, patch, 'application/merge-patch+json');
      assertStatus(
        await merge('{"kind":"Secret"}'),
        422,
        'Invalid',
        /^ "" is invalid: patch: Invalid value: ".*": no kind "Secret" is registered for version "v1" in scheme "pkg\/runtime\/scheme\.go:111"$/,
      );
      assertStatus(
        await merge('{"kind":5}'),
        422,
        'Invalid',
        /: couldn't get version\/kind; json parse error: json: cannot unmarshal number into Go struct field \.kind of type string$/,
      );

      // PUT of an object without a name: kube's "undeterminable" 400, not a mismatch.
      assertStatus(
        await send(t.url, 'PUT', `${cms(ns)}/odd-field`, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}'),
        400,
        'BadRequest',
        'the name of the object (odd-field based on URL) was undeterminable: name must be provided',
      );

      // An unknown subresource is 404 before the name (here ".") is judged.
      assertStatus(await rawPath(t.url, 'GET', `${cms(ns)}/./plain`), 404, 'NotFound', 'the server could not find the requested resource');
    });

    test('a body over the limit is answered 413 while it is still being sent, and the close lingers so the client reads the answer', async () => {
      const { hostname, port } = new URL(t.url);
      const declared = 3 * 1024 * 1024 + 100;
      const outcome = await new Promise<{ reply: string; error?: string; wroteAfterAnswer: number }>((resolve) => {
        const socket = connect(Number(port), hostname);
        let reply = '';
        let wroteAfterAnswer = 0;
        let answered = false;
        socket.on('data', (d: Buffer) => {
          reply += d.toString();
          if (answered || !reply.includes('\r\n\r\n')) return;
          answered = true;
          // The answer came before the body was sent: the client goes on sending, as a client that
          // does not read while it writes does. The server must keep reading (and dropping) it.
          const chunk = Buffer.alloc(64 * 1024, 'x');
          const more = (): void => {
            while (wroteAfterAnswer < 256 * 1024) {
              wroteAfterAnswer += chunk.length;
              if (!socket.write(chunk)) {
                socket.once('drain', more);
                return;
              }
            }
            socket.end();
          };
          more();
        });
        socket.on('error', (err: NodeJS.ErrnoException) => resolve({ reply, error: err.code ?? err.message, wroteAfterAnswer }));
        socket.on('close', () => resolve({ reply, wroteAfterAnswer }));
        socket.write(
          `PUT ${cms(ns)}/big HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\nConnection: close\r\n\r\n{"apiVersion":"v1",`,
        );
      });
      assert.match(outcome.reply, /^HTTP\/1\.1 413 /);
      assert.match(outcome.reply, /"reason":"RequestEntityTooLarge"/);
      assert.equal(
        outcome.error,
        undefined,
        `the server reset the connection while the client was still sending (${outcome.wroteAfterAnswer} bytes after the answer)`,
      );
      assert.equal(outcome.wroteAfterAnswer, 256 * 1024);
    });

    test("a request line without an HTTP version, or a malformed escape, is Go's plain 400", async () => {
      const { hostname, port } = new URL(t.url);
      for (const request of [`GET ${cms(ns)}\r\n\r\n`, `GET /api/v1/namespaces/%zz HTTP/1.1\r\nHost: x\r\n\r\n`]) {
        const reply = await new Promise<string>((resolve, reject) => {
          const socket = connect(Number(port), hostname, () => socket.end(request));
          let data = '';
          socket.on('data', (d: Buffer) => {
            data += d.toString();
          });
          socket.on('end', () => resolve(data));
          socket.on('error', reject);
        });
        assert.match(reply, /^HTTP\/1\.1 400 Bad Request\r\n/, JSON.stringify(reply));
        assert.match(reply, /\r\n\r\n400 Bad Request$/);
      }
    });
  });
}
