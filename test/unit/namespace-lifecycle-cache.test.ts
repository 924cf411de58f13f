import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NamespaceLifecycle } from '../../src/admission/namespace-lifecycle.js';
import type { AdmissionAttributes } from '../../src/api/admission-attributes.js';
import { ApiError } from '../../src/api/errors.js';
import type { ResourceInfo } from '../../src/api/resource-info.js';
import { MemoryStorage } from '../../src/storage/memory-storage.js';
import type { ListOptions, ListResult, StoredObject } from '../../src/storage/storage.js';

const configMaps: ResourceInfo = {
  group: '',
  version: 'v1',
  resource: 'configmaps',
  kind: 'ConfigMap',
  namespaced: true,
  verbs: ['create'],
  singularName: 'configmap',
  shortNames: [],
  categories: [],
  definition: 'io.k8s.api.core.v1.ConfigMap',
  subresources: {},
};
const namespaces: ResourceInfo = { ...configMaps, resource: 'namespaces', kind: 'Namespace', namespaced: false, definition: 'io.k8s.api.core.v1.Namespace' };

function attrs(operation: AdmissionAttributes['operation'], info: ResourceInfo, namespace: string, name: string): AdmissionAttributes {
  return { operation, info, namespace, name, subresource: '', object: undefined, oldObject: undefined, dryRun: false };
}

/** The memory store, counting the single-object reads the plugin makes. */
class CountingStorage extends MemoryStorage {
  gets = 0;
  lists = 0;
  override async get(type: string, key: string): Promise<StoredObject | undefined> {
    this.gets++;
    return super.get(type, key);
  }
  override async list(type: string, options?: ListOptions): Promise<ListResult> {
    this.lists++;
    return super.list(type, options);
  }
}

async function refusal(p: Promise<void>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  assert.fail('admitted');
}

describe('NamespaceLifecycle with its namespace cache', () => {
  test('answers from the cache once listed, reads live what the cache lacks and what this server is deleting', async () => {
    const storage = new CountingStorage({ historyMs: 60_000 });
    const abort = new AbortController();
    let now = 1_000_000;
    const plugin = new NamespaceLifecycle(storage, abort.signal, () => now);
    try {
      await storage.create('namespaces', 'a', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' }, status: { phase: 'Active' } });
      // The first lookup starts the cache and reads live meanwhile.
      await plugin.validate(attrs('CREATE', configMaps, 'a', 'c1'));
      assert.equal(storage.gets, 1);
      while (storage.lists === 0) await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      const before = storage.gets;
      for (let i = 0; i < 5; i++) await plugin.validate(attrs('CREATE', configMaps, 'a', `c${i}`));
      assert.equal(storage.gets, before, 'cached namespace: no live reads');

      // A namespace the cache has not seen is read live: it exists, or the answer is 404.
      assert.equal((await refusal(plugin.validate(attrs('CREATE', configMaps, 'missing', 'c')))).code, 404);
      assert.equal(storage.gets, before + 1);

      // The cache follows the store: a namespace marked terminating refuses new content.
      await storage.update(
        'namespaces',
        'a',
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a', deletionTimestamp: '2026-11-29T00:00:00Z' }, status: { phase: 'Terminating' } },
        (await storage.get('namespaces', 'a'))?.resourceVersion ?? '',
      );
      const terminating = await refusal(plugin.validate(attrs('CREATE', configMaps, 'a', 'c9')));
      assert.equal(terminating.code, 403);
      assert.match(terminating.message, /being terminated/);

      // A namespace whose deletion this server admitted is read live for 30 s, then from the cache again.
      await storage.create('namespaces', 'b', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'b' }, status: { phase: 'Active' } });
      await plugin.validate(attrs('DELETE', namespaces, '', 'b'));
      const gets = storage.gets;
      await plugin.validate(attrs('CREATE', configMaps, 'b', 'c'));
      assert.equal(storage.gets, gets + 1);
      now += 31_000;
      await plugin.validate(attrs('CREATE', configMaps, 'b', 'c'));
      assert.equal(storage.gets, gets + 1);

      // System namespaces still cannot be deleted.
      assert.equal((await refusal(plugin.validate(attrs('DELETE', namespaces, '', 'kube-system')))).code, 403);
    } finally {
      abort.abort();
    }
  });
});
