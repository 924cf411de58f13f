/**
 * Updates that start from the process's cached copy of the object (Storage.peek, the list cache on
 * Redis), as kube's GuaranteedUpdate starts from its watch cache: with a current copy the store is
 * not read before the write; with a copy that lags behind the store every answer (PUT with and
 * without a resourceVersion, PATCH, no-op, dry run, DELETE preconditions, a deleted object) is the
 * one decided on the store's current object. The lag is made exact by a memory store whose `peek` serves the objects
 * as they were at a chosen moment, as a cache behind on its change stream does.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStorage } from '../../src/storage/memory-storage.js';
import type { StoredObject } from '../../src/storage/storage.js';
import { StorageError } from '../../src/api/storage-error.js';
import { api, startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';

/** A memory store with a copy that lags: `peek` answers the objects as `freeze` last saw them. */
class LaggingCopyStorage extends MemoryStorage {
  private readonly reads = new Map<string, number>();
  private readonly frozen = new Map<string, StoredObject>();

  override get(type: string, key: string): Promise<StoredObject | undefined> {
    this.reads.set(`${type}\n${key}`, this.readsOf(type, key) + 1);
    return super.get(type, key);
  }

  /** How often `get` read this object. */
  readsOf(type: string, key: string): number {
    return this.reads.get(`${type}\n${key}`) ?? 0;
  }

  peek(type: string, key: string): StoredObject | undefined {
    return this.frozen.get(`${type}\n${key}`);
  }

  /** The next update is applied, then answers as if its reply were lost (a connection dropped). */
  loseNextUpdateAnswer = false;

  override async update(type: string, key: string, object: Record<string, unknown>, expected: string): Promise<StoredObject> {
    const stored = await super.update(type, key, object, expected);
    if (!this.loseNextUpdateAnswer) return stored;
    this.loseNextUpdateAnswer = false;
    throw new StorageError('Unavailable', 'the connection to the store dropped before its answer');
  }

  /** From now on `peek` serves this object as it is now, until the next freeze. */
  async freeze(type: string, key: string): Promise<void> {
    const now = await super.get(type, key);
    if (now === undefined) throw new Error(`nothing stored under ${key}`);
    this.frozen.set(`${type}\n${key}`, now);
  }
}

const NS = 'default';

describe('updates from a cached copy', () => {
  const storage = new LaggingCopyStorage({ historyMs: 60_000 });
  let srv: TestServer;

  before(async () => {
    srv = await startTestServer({}, storage);
  });
  after(async () => {
    await srv.stop();
  });

  const path = (name: string): string => `/api/v1/namespaces/${NS}/configmaps/${name}`;

  async function createConfigMap(data: Record<string, string>): Promise<{ name: string; rv: string }> {
    const name = uniqueName('cached');
    const res = await api(srv.url, `/api/v1/namespaces/${NS}/configmaps`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data }),
    });
    assert.equal(res.status, 201, res.text);
    return { name, rv: res.body.metadata.resourceVersion };
  }

  async function put(name: string, body: Record<string, unknown>, query = ''): Promise<{ status: number; body: any; text: string }> {
    return api(srv.url, `${path(name)}${query}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', ...body }),
    });
  }

  const pods = `/api/v1/namespaces/${NS}/pods`;

  /** Creates an unscheduled pod and freezes the copy of it as created. */
  async function createPodAndFreeze(prefix: string): Promise<string> {
    const name = uniqueName(prefix);
    const created = await api(srv.url, pods, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }),
    });
    assert.equal(created.status, 201, created.text);
    await storage.freeze('pods', `${NS}/${name}`);
    return name;
  }

  /** POSTs `body` to the pod's subresource `sub`. */
  function postTo(name: string, sub: string, body: Record<string, unknown>): Promise<{ status: number; body: any; text: string }> {
    return api(srv.url, `${pods}/${name}/${sub}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  }

  const binding = (name: string, node: string): Record<string, unknown> => ({
    apiVersion: 'v1',
    kind: 'Binding',
    metadata: { name },
    target: { apiVersion: 'v1', kind: 'Node', name: node },
  });

  test('with a current copy, an update writes without reading the store first', async () => {
    const { name, rv } = await createConfigMap({ a: '1' });
    await storage.freeze('configmaps', `${NS}/${name}`);
    const readsBefore = storage.readsOf('configmaps', `${NS}/${name}`);
    const res = await put(name, { metadata: { name, resourceVersion: rv }, data: { a: '2' } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data, { a: '2' });
    assert.notEqual(res.body.metadata.resourceVersion, rv);
    assert.equal(storage.readsOf('configmaps', `${NS}/${name}`), readsBefore, 'the store was read although the copy was current');
  });

  test('/metrics counts writes whose copy was current and writes whose copy was behind', async () => {
    const count = async (copy: string): Promise<number> => {
      const text = (await api(srv.url, '/metrics')).text;
      const line = text.split('\n').find((l) => l.startsWith(`capstan_cached_copy_writes_total{copy="${copy}"}`));
      return line === undefined ? 0 : Number(line.split(' ').pop());
    };
    const [current, behind] = [await count('current'), await count('behind')];
    const { name, rv } = await createConfigMap({ a: '1' });
    await storage.freeze('configmaps', `${NS}/${name}`);
    assert.equal((await put(name, { metadata: { name, resourceVersion: rv }, data: { a: '2' } })).status, 200);
    assert.equal(await count('current'), current + 1);
    assert.equal(await count('behind'), behind);
    assert.equal((await put(name, { metadata: { name }, data: { a: '3' } })).status, 200);
    assert.equal(await count('behind'), behind + 1);
  });

  test('a write whose answer was lost is not decided again: the client hears of the failure, not a conflict', async () => {
    const { name, rv } = await createConfigMap({ a: '1' });
    await storage.freeze('configmaps', `${NS}/${name}`);
    storage.loseNextUpdateAnswer = true;
    const res = await put(name, { metadata: { name, resourceVersion: rv }, data: { a: '2' } });
    assert.equal(res.status, 503, res.text);
    assert.equal(res.body.kind, 'Status');
    // It took effect; deciding the write again on the new version would have answered 409.
    assert.deepEqual((await api(srv.url, path(name))).body.data, { a: '2' });
  });

  test('a PUT pinned to the store’s version succeeds although the copy is older', async () => {
    const { name } = await createConfigMap({ a: '1' });
    await storage.freeze('configmaps', `${NS}/${name}`);
    const second = await put(name, { metadata: { name }, data: { a: '2' } });
    assert.equal(second.status, 200, second.text);
    const third = await put(name, { metadata: { name, resourceVersion: second.body.metadata.resourceVersion }, data: { a: '3' } });
    assert.equal(third.status, 200, third.text);
    assert.deepEqual(third.body.data, { a: '3' });
    const stored = await api(srv.url, path(name));
    assert.equal(stored.body.metadata.resourceVersion, third.body.metadata.resourceVersion);
  });

  test('a PUT pinned to the copy’s older version is a conflict, as against the store', async () => {
    const { name, rv } = await createConfigMap({ a: '1' });
    await storage.freeze('configmaps', `${NS}/${name}`);
    assert.equal((await put(name, { metadata: { name }, data: { a: '2' } })).status, 200);
    const stale = await put(name, { metadata: { name, resourceVersion: rv }, data: { a: 'stale' } });
    assert.equal(stale.status, 409, stale.text);
    assert.equal(stale.body.reason, 'Conflict');
    assert.equal(
      stale.body.message,
      `Operation cannot be fulfilled on configmaps "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    );
    assert.deepEqual((await api(srv.url, path(name))).body.data, { a: '2' });
  });

  test('a PATCH applies to the store’s object, not the older copy', async () => {
    const { name } = await createConfigMap({ a: '1' });
    await storage.freeze('configmaps', `${NS}/${name}`);
    assert.equal((await put(name, { metadata: { name }, data: { a: '1', b: '2' } })).status, 200);
    const res = await api(srv.url, path(name), {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ data: { c: '3' } }),
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data, { a: '1', b: '2', c: '3' });
  });

  test('an update that changes nothing answers the store’s version, and a dry run the store’s object', async () => {
    const { name } = await createConfigMap({ a: '1' });
    await storage.freeze('configmaps', `${NS}/${name}`);
    const second = await put(name, { metadata: { name }, data: { a: '2' } });
    assert.equal(second.status, 200, second.text);
    const same = await put(name, { metadata: { name }, data: { a: '2' } });
    assert.equal(same.status, 200, same.text);
    assert.equal(same.body.metadata.resourceVersion, second.body.metadata.resourceVersion);
    const dry = await api(srv.url, `${path(name)}?dryRun=All`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ data: { d: '4' } }),
    });
    assert.equal(dry.status, 200, dry.text);
    assert.deepEqual(dry.body.data, { a: '2', d: '4' });
    assert.deepEqual((await api(srv.url, path(name))).body.data, { a: '2' });
  });

  test('a DELETE decides its preconditions on the store’s object, not the older copy', async () => {
    const { name, rv } = await createConfigMap({ a: '1' });
    await storage.freeze('configmaps', `${NS}/${name}`);
    const second = await put(name, { metadata: { name }, data: { a: '2' } });
    assert.equal(second.status, 200, second.text);
    const current = second.body.metadata.resourceVersion;
    const del = (precondition: string): Promise<{ status: number; body: any; text: string }> =>
      api(srv.url, path(name), {
        method: 'DELETE',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: precondition } }),
      });
    const stale = await del(rv);
    assert.equal(stale.status, 409, stale.text);
    assert.equal(
      stale.body.message,
      `Operation cannot be fulfilled on configmaps "${name}": Precondition failed: ResourceVersion in precondition: ${rv}, ResourceVersion in object meta: ${current}`,
    );
    const done = await del(current);
    assert.equal(done.status, 200, done.text);
    assert.equal((await api(srv.url, path(name))).status, 404);
  });

  test('a second binding of a pod is refused although the copy predates the first', async () => {
    const name = await createPodAndFreeze('bind');
    assert.equal((await postTo(name, 'binding', binding(name, 'node-1'))).status, 201);
    const second = await postTo(name, 'binding', binding(name, 'node-2'));
    assert.equal(second.status, 409, second.text);
    assert.equal(second.body.message, `Operation cannot be fulfilled on pods/binding "${name}": pod ${name} is already assigned to node "node-1"`);
    assert.equal((await api(srv.url, `${pods}/${name}`)).body.spec.nodeName, 'node-1');
  });

  test('an object deleted since the copy was taken is not found', async () => {
    const { name } = await createConfigMap({ a: '1' });
    await storage.freeze('configmaps', `${NS}/${name}`);
    assert.equal((await api(srv.url, path(name), { method: 'DELETE' })).status, 200);
    const res = await api(srv.url, path(name), {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ data: { b: '2' } }),
    });
    assert.equal(res.status, 404, res.text);
    assert.equal(res.body.reason, 'NotFound');
  });

  test('a pod deleted since the copy was taken cannot be evicted or bound', async () => {
    const name = await createPodAndFreeze('gone');
    // Not bound to a node: removed at once.
    assert.equal((await api(srv.url, `${pods}/${name}`, { method: 'DELETE' })).status, 200);
    assert.equal((await api(srv.url, `${pods}/${name}`)).status, 404);
    const eviction = await postTo(name, 'eviction', { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name } });
    assert.equal(eviction.status, 404, eviction.text);
    assert.equal(eviction.body.message, `pods "${name}" not found`);
    const bound = await postTo(name, 'binding', binding(name, 'node-1'));
    assert.equal(bound.status, 404, bound.text);
    assert.equal(bound.body.message, `pods "${name}" not found`);
  });
});
