/**
 * Force deletion of corrupt objects (SPEC section 3, AllowUnsafeMalformedObjectDeletion), against
 * both backends with genuinely undecodable bytes: written raw into Redis' object hash with a
 * separate client, and read through a corrupting storage decorator over the memory backend.
 * Messages follow kube-apiserver 1.36 (the gate-off behaviour was checked on the reference; the
 * gate-on wording is kube's registry/generic/registry/corrupt_obj_deleter.go and storage errors).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Redis } from 'ioredis';
import type { Authenticator } from '../../src/auth/authenticator.js';
import type { AuthorizationAttributes, Authorizer } from '../../src/auth/authorizer.js';
import { KNOWN_GATES } from '../../src/api/feature-gates.js';
import { MemoryStorage } from '../../src/storage/memory-storage.js';
import { typeKeys } from '../../src/storage/redis/keys.js';
import { RedisStorage } from '../../src/storage/redis/redis-storage.js';
import type { Storage } from '../../src/storage/storage.js';
import { api, startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';
import { CorruptedReads } from '../helpers/corrupted-reads.js';
import { startRedis, type RedisServer } from '../helpers/redis-process.js';
import { openWatch } from '../helpers/watch-client.js';

const OPTION = 'ignoreStoreReadErrorWithClusterBreakingPotential';
const NS = 'default';

/** A storage and a way to corrupt one stored object's bytes in it. */
interface CorruptibleStore {
  storage: Storage;
  /** Truncates the stored JSON of configmap `name` in place (no new version, no change event). */
  corrupt(name: string): Promise<void>;
  close(): Promise<void>;
}

interface Fixture {
  name: string;
  open(): Promise<CorruptibleStore>;
  stop(): Promise<void>;
}

/** Cuts the end off an object's JSON: a torn write that no longer parses. */
function truncated(json: string): string {
  return json.slice(0, json.length - 12);
}

function memoryFixture(): Fixture {
  return {
    name: 'memory',
    open: async () => {
      const storage = new CorruptedReads(new MemoryStorage({ historyMs: 300_000 }));
      return {
        storage,
        corrupt: async (name) => {
          const stored = await storage.get('configmaps', `${NS}/${name}`);
          assert.ok(stored, `configmap ${name} is stored`);
          storage.corruptObject('configmaps', `${NS}/${name}`, truncated(stored.json));
        },
        close: async () => undefined,
      };
    },
    stop: async () => undefined,
  };
}

function redisFixture(): Fixture {
  let server: RedisServer | undefined;
  const clients: Redis[] = [];
  return {
    name: 'redis',
    open: async () => {
      server ??= await startRedis();
      const prefix = `fd${randomBytes(4).toString('hex')}:`;
      const storage = await RedisStorage.connect({ url: server.url, keyPrefix: prefix, historyMs: 300_000 });
      const raw = new Redis(server.port, server.host);
      clients.push(raw);
      const objects = typeKeys(prefix, 'configmaps').objects;
      return {
        storage,
        corrupt: async (name) => {
          // The hash value is `<rv>:<offset>:<json>`: keep the framing, break the JSON.
          const value = await raw.hget(objects, `${NS}/${name}`);
          assert.ok(value !== null, `configmap ${name} is stored`);
          const second = value.indexOf(':', value.indexOf(':') + 1);
          await raw.hset(objects, `${NS}/${name}`, value.slice(0, second + 1) + truncated(value.slice(second + 1)));
        },
        close: async () => undefined,
      };
    },
    stop: async () => {
      for (const c of clients.splice(0)) c.disconnect();
      await server?.stop();
      server = undefined;
    },
  };
}

const LIMITED = 'limited-user';

/** Requests with header `x-test-user: limited` are LIMITED; the others an administrator. */
const byHeader: Authenticator = {
  async authenticate(req: IncomingMessage) {
    if (req.headers['x-test-user'] === 'limited') return { name: LIMITED, uid: '', groups: ['system:authenticated'], extra: {} };
    return { name: 'admin', uid: '', groups: ['system:authenticated'], extra: {} };
  },
};

/** Allows everything except the unsafe-delete verb to LIMITED (RBAC gives no reason when nothing matched). */
class DenyUnsafeToLimited implements Authorizer {
  readonly unsafeChecks: AuthorizationAttributes[] = [];
  async authorize(attrs: AuthorizationAttributes): Promise<{ allowed: boolean; reason: string }> {
    if (attrs.verb === 'unsafe-delete-ignore-read-errors') {
      this.unsafeChecks.push(attrs);
      if (attrs.user.name === LIMITED) return { allowed: false, reason: '' };
    }
    return { allowed: true, reason: '' };
  }
}

const JSON_HEADERS = { 'Content-Type': 'application/json' };

async function createConfigMap(url: string, name: string, extraMeta: Record<string, unknown> = {}): Promise<string> {
  const r = await api(url, `/api/v1/namespaces/${NS}/configmaps`, {
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify({ metadata: { name, labels: { app: 'force-delete' }, ...extraMeta }, data: { payload: 'x'.repeat(40) } }),
  });
  assert.equal(r.status, 201, r.text);
  return r.body.metadata.resourceVersion as string;
}

function del(url: string, name: string, query = '', body?: unknown, headers: Record<string, string> = {}) {
  return api(url, `/api/v1/namespaces/${NS}/configmaps/${name}${query}`, {
    method: 'DELETE',
    headers: { ...JSON_HEADERS, ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

const clash = (what: string) => `${OPTION}: Invalid value: true: cannot be set together with .${what}`;

for (const fixture of [memoryFixture(), redisFixture()]) {
  describe(`force deletion of corrupt objects (${fixture.name})`, () => {
    let on: TestServer;
    let off: TestServer;
    let storeOn: CorruptibleStore;
    let storeOff: CorruptibleStore;
    const authorizer = new DenyUnsafeToLimited();

    before(async () => {
      storeOn = await fixture.open();
      storeOff = await fixture.open();
      on = await startTestServer({ featureGates: { ...KNOWN_GATES, AllowUnsafeMalformedObjectDeletion: true } }, storeOn.storage, {
        authenticator: byHeader,
        authorizer,
      });
      off = await startTestServer({}, storeOff.storage);
    });
    after(async () => {
      await on?.stop();
      await off?.stop();
      await fixture.stop();
    });

    test('gate on: options that must stay unset are refused with 422 on DeleteOptions, as kube words it', async () => {
      const name = uniqueName('fd-opts');
      await createConfigMap(on.url, name);
      const dryRun = await del(on.url, name, `?${OPTION}=true&dryRun=All`);
      assert.equal(dryRun.status, 422, dryRun.text);
      assert.equal(dryRun.body.reason, 'Invalid');
      assert.equal(dryRun.body.message, `DeleteOptions.meta.k8s.io "" is invalid: ${clash('dryRun')}`);
      assert.deepEqual(dryRun.body.details, {
        group: 'meta.k8s.io',
        kind: 'DeleteOptions',
        causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: true: cannot be set together with .dryRun', field: OPTION }],
      });
      const several = await del(on.url, name, '', {
        [OPTION]: true,
        propagationPolicy: 'Background',
        gracePeriodSeconds: 0,
        preconditions: { uid: 'x' },
      });
      assert.equal(several.status, 422, several.text);
      assert.equal(
        several.body.message,
        `DeleteOptions.meta.k8s.io "" is invalid: [${clash('propagationPolicy')}, ${clash('gracePeriodSeconds')}, ${clash('preconditions')}]`,
      );
      const orphan = await del(on.url, name, `?${OPTION}=true&orphanDependents=false`);
      assert.equal(orphan.status, 422, orphan.text);
      assert.equal(orphan.body.message, `DeleteOptions.meta.k8s.io "" is invalid: ${clash('orphanDependents')}`);
      const collection = await api(on.url, `/api/v1/namespaces/${NS}/configmaps?${OPTION}=true`, { method: 'DELETE' });
      assert.equal(collection.status, 422, collection.text);
      assert.equal(
        collection.body.message,
        `DeleteOptions.meta.k8s.io "" is invalid: ${OPTION}: Invalid value: true: is not allowed with DELETECOLLECTION, try again after removing the option`,
      );
      assert.equal((await api(on.url, `/api/v1/namespaces/${NS}/configmaps/${name}`)).status, 200, 'nothing was deleted');
    });

    test('gate on: a readable (or missing) object is refused with 422 naming the option; nothing is deleted', async () => {
      const name = uniqueName('fd-ok');
      await createConfigMap(on.url, name);
      const refused = await del(on.url, name, `?${OPTION}=true`);
      assert.equal(refused.status, 422, refused.text);
      assert.deepEqual(refused.body, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        reason: 'Invalid',
        code: 422,
        message: `configmaps "${name}" is invalid: ${OPTION}: Invalid value: true: is exclusively used to delete corrupt object(s), try again by removing this option`,
        details: {
          name,
          kind: 'configmaps',
          causes: [
            {
              reason: 'FieldValueInvalid',
              message: 'Invalid value: true: is exclusively used to delete corrupt object(s), try again by removing this option',
              field: OPTION,
            },
          ],
        },
      });
      assert.equal((await api(on.url, `/api/v1/namespaces/${NS}/configmaps/${name}`)).status, 200);
      const missing = await del(on.url, uniqueName('fd-none'), `?${OPTION}=true`);
      assert.equal(missing.status, 422, missing.text);
      assert.match(missing.body.message, /is exclusively used to delete corrupt object\(s\)/);
    });

    test("gate on: reading or plainly deleting a corrupt object answers kube's corrupt-object 500", async () => {
      const name = uniqueName('fd-read');
      const rv = await createConfigMap(on.url, name);
      await storeOn.corrupt(name);
      const get = await api(on.url, `/api/v1/namespaces/${NS}/configmaps/${name}`);
      assert.equal(get.status, 500, get.text);
      assert.equal(get.body.reason, 'InternalError');
      const storageError = `StorageError: corrupt object, Code: 7, Key: /registry/configmaps/${NS}/${name}, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=${rv}: couldn't get version/kind; json parse error: `;
      assert.ok(get.body.message.startsWith(`Internal error occurred: ${storageError}`), get.body.message);
      assert.deepEqual(get.body.details, { causes: [{ message: get.body.message.slice('Internal error occurred: '.length) }] });
      const plain = await del(on.url, name);
      assert.equal(plain.status, 500, plain.text);
      assert.equal(plain.body.message, get.body.message);
      // Lists (whatever their selectors) and watches from the current state hold it: kube's aggregated read error.
      const cause = {
        reason: 'UnexpectedServerResponse',
        message: get.body.message.slice('Internal error occurred: '.length),
        field: `/registry/configmaps/${NS}/${name}`,
      };
      for (const path of ['', '?labelSelector=app%3Dnothing', '?watch=1&timeoutSeconds=5']) {
        const list = await api(on.url, `/api/v1/namespaces/${NS}/configmaps${path}`);
        assert.equal(list.status, 500, `${path}: ${list.text}`);
        assert.equal(list.body.reason, 'StorageReadError');
        assert.equal(list.body.message, 'failed to read one or more configmaps from the storage');
        assert.equal(list.body.details.kind, 'configmaps');
        assert.equal(list.body.details.name, 'list');
        assert.deepEqual(
          list.body.details.causes.find((c: { field?: string }) => c.field === cause.field),
          cause,
        );
      }
      const forced = await del(on.url, name, `?${OPTION}=true`);
      assert.equal(forced.status, 200, forced.text);
      assert.equal((await api(on.url, `/api/v1/namespaces/${NS}/configmaps`)).status, 200, 'readable again once it is gone');
    });

    test('gate on: without the unsafe-delete verb the request is forbidden (403) and the object stays', async () => {
      const name = uniqueName('fd-deny');
      await createConfigMap(on.url, name);
      await storeOn.corrupt(name);
      const denied = await del(on.url, name, `?${OPTION}=true`, undefined, { 'x-test-user': 'limited' });
      assert.equal(denied.status, 403, denied.text);
      assert.deepEqual(denied.body, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        reason: 'Forbidden',
        code: 403,
        message: `configmaps "${name}" is forbidden: not permitted to do "unsafe-delete-ignore-read-errors", reason: `,
        details: { name, kind: 'configmaps' },
      });
      const check = authorizer.unsafeChecks.find((a) => a.name === name);
      assert.ok(check, 'the unsafe verb was authorized');
      assert.deepEqual(
        { user: check.user.name, namespace: check.namespace, resource: check.resource, apiGroup: check.apiGroup, resourceRequest: check.resourceRequest },
        { user: LIMITED, namespace: NS, resource: 'configmaps', apiGroup: '', resourceRequest: true },
      );
      assert.equal((await api(on.url, `/api/v1/namespaces/${NS}/configmaps/${name}`)).status, 500, 'still stored, still corrupt');
      const allowed = await del(on.url, name, `?${OPTION}=true`);
      assert.equal(allowed.status, 200, `another user with the verb may: ${allowed.text}`);
    });

    test('gate on: a corrupt object is force-deleted despite its finalizers; watches see DELETED', async () => {
      const name = uniqueName('fd-gone');
      const rv = await createConfigMap(on.url, name, { finalizers: ['example.com/hold'] });
      await storeOn.corrupt(name);
      const all = await openWatch(on.url, `/api/v1/namespaces/${NS}/configmaps?watch=1&resourceVersion=${rv}`);
      const selected = await openWatch(on.url, `/api/v1/namespaces/${NS}/configmaps?watch=1&resourceVersion=${rv}&labelSelector=app%3Dforce-delete`);
      const table = await openWatch(on.url, `/api/v1/namespaces/${NS}/configmaps?watch=1&resourceVersion=${rv}`, {
        accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
      });
      try {
        const forced = await del(on.url, name, `?${OPTION}=true`);
        assert.equal(forced.status, 200, forced.text);
        assert.deepEqual(forced.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200, details: { name, kind: 'ConfigMap' } });
        for (const w of [all, selected]) {
          const events = await w.waitFor((es) => es.some((e) => e.type === 'DELETED' && e.object?.metadata?.name === name));
          const deleted = events.find((e) => e.type === 'DELETED' && e.object?.metadata?.name === name);
          assert.equal(deleted?.object.kind, 'ConfigMap');
          assert.equal(deleted?.object.apiVersion, 'v1');
          assert.equal(deleted?.object.metadata.namespace, NS);
          assert.ok(BigInt(deleted?.object.metadata.resourceVersion as string) > BigInt(rv), 'the deletion has a newer version');
        }
        const rows = await table.waitFor((es) => es.some((e) => e.type === 'DELETED'));
        const row = rows.find((e) => e.type === 'DELETED')?.object.rows[0];
        assert.equal(row?.cells[0], name, 'a Table row names the object');
        assert.equal(row?.object.kind, 'PartialObjectMetadata');
        assert.equal(row?.object.metadata.name, name);
        const get = await api(on.url, `/api/v1/namespaces/${NS}/configmaps/${name}`);
        assert.equal(get.status, 404, get.text);
        assert.equal(get.body.message, `configmaps "${name}" not found`);
      } finally {
        all.close();
        selected.close();
        table.close();
      }
    });

    test('gate off: the option does not exist; a readable object is deleted normally, clashing options and all', async () => {
      const name = uniqueName('fd-off');
      await createConfigMap(off.url, name);
      const dryRun = await del(off.url, name, `?${OPTION}=true&dryRun=All&gracePeriodSeconds=3`);
      assert.equal(dryRun.status, 200, dryRun.text);
      assert.equal(dryRun.body.status, 'Success');
      assert.equal((await api(off.url, `/api/v1/namespaces/${NS}/configmaps/${name}`)).status, 200, 'dry run kept it');
      const deleted = await del(off.url, name, `?${OPTION}=true`);
      assert.equal(deleted.status, 200, deleted.text);
      assert.equal((await api(off.url, `/api/v1/namespaces/${NS}/configmaps/${name}`)).status, 404);
    });

    test("gate off: a corrupt object cannot be deleted; reads answer the decoder's error as a 500 without reason", async () => {
      const name = uniqueName('fd-offc');
      await createConfigMap(off.url, name);
      await storeOff.corrupt(name);
      const get = await api(off.url, `/api/v1/namespaces/${NS}/configmaps/${name}`);
      assert.equal(get.status, 500, get.text);
      assert.equal(get.body.reason, undefined);
      assert.ok(get.body.message.startsWith("couldn't get version/kind; json parse error: "), get.body.message);
      const list = await api(off.url, `/api/v1/namespaces/${NS}/configmaps`);
      assert.equal(list.status, 500, list.text);
      assert.deepEqual(list.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: get.body.message, code: 500 });
      const forced = await del(off.url, name, `?${OPTION}=true`);
      assert.equal(forced.status, 500, forced.text);
      assert.equal(forced.body.message, get.body.message);
      assert.equal((await api(off.url, `/api/v1/namespaces/${NS}/configmaps/${name}`)).status, 500, 'still stored');
    });
  });
}
