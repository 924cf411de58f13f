/**
 * Removing a comparison's scratch namespace quickly: its ConfigMaps are deleted one by one with many
 * requests in flight before the namespace itself (scratch-namespace.ts) goes. A DELETE of the whole
 * collection would do it in one request, but kube-apiserver works through a collection with one
 * worker, waiting for one etcd fsync at a time: tens of seconds for 10,000 objects, past the
 * client's timeout, with the server still busy deleting during the next measurement.
 */
import { configMapsPath } from '../fixtures.js';
import { runPool, type HttpClient } from '../http-client.js';
import { log, sleep } from '../scenario.js';
import { deleteScratchNamespace } from '../scratch-namespace.js';

/** Deletes every ConfigMap of `ns` (`concurrency` in flight), then the namespace; logs problems, never throws. */
export async function removeScratchNamespace(client: HttpClient, ns: string, concurrency: number, label: string): Promise<void> {
  const path = configMapsPath(ns);
  try {
    const list = await client.request('GET', path, { timeoutMs: 120_000 });
    if (list.status === 200) {
      const names = ((JSON.parse(list.body) as { items?: Array<{ metadata?: { name?: string } }> }).items ?? [])
        .map((i) => i.metadata?.name)
        .filter((n): n is string => n !== undefined);
      await runPool(names.length, concurrency, performance.now() + 300_000, async (i) => {
        await client.request('DELETE', `${path}/${names[i]}`, { discardBody: true }).catch(() => undefined);
      });
    }
  } catch (err) {
    log(`${label}: emptying ${ns}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const problem = await deleteScratchNamespace(client, ns, [path]);
  if (problem !== undefined) log(`${label}: ${problem}`);
  // Let work the deletions started (watch caches, controllers) finish before the next measurement.
  await sleep(1000);
}
