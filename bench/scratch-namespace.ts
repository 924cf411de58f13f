/**
 * Scratch namespaces: a scenario that runs against a shared server (such as the reference
 * kube-apiserver) creates its objects in a namespace of its own and deletes it afterwards, waiting
 * until it is gone so that the deletion's work is not measured by the next phase. When no namespace
 * controller finishes the deletion (a kube-apiserver without kube-controller-manager), the bench,
 * having deleted everything it put there, finalizes the namespace itself.
 */
import type { HttpClient } from './http-client.js';
import { namespaceBody, serviceAccountBody } from './manifests.js';
import { sleep } from './scenario.js';

const CLEANUP_TIMEOUT_MS = 120_000;
/** How long a namespace controller gets before the bench finalizes the namespace itself. */
const CONTROLLER_GRACE_MS = 5_000;

async function expectStatus(client: HttpClient, method: string, path: string, body: string | undefined, accepted: number[]): Promise<void> {
  const res = await client.request(method, path, body !== undefined ? { body } : {});
  if (!accepted.includes(res.status)) throw new Error(`${method} ${path}: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
}

/** A namespace name unique to this run: `bench-<purpose>-<base36 time>`. */
export function scratchNamespaceName(purpose: string, run = Date.now().toString(36)): string {
  return `bench-${purpose.toLowerCase()}-${run}`;
}

/**
 * Creates namespace `ns` with its `default` ServiceAccount (kube-apiserver's ServiceAccount admission
 * needs it for Pods; 409 when a controller made it first).
 */
export async function createScratchNamespace(client: HttpClient, ns: string): Promise<void> {
  await expectStatus(client, 'POST', '/api/v1/namespaces', namespaceBody(ns), [201]);
  await expectStatus(client, 'POST', `/api/v1/namespaces/${ns}/serviceaccounts`, serviceAccountBody(), [201, 409]);
}

/** Waits until namespace `ns` is gone (true) or `ms` have passed (false). */
async function waitGone(client: HttpClient, ns: string, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (performance.now() < deadline) {
    const res = await client.request('GET', `/api/v1/namespaces/${ns}`, { discardBody: true });
    if (res.status === 404) return true;
    await sleep(250);
  }
  return false;
}

/** Empties spec.finalizers of a terminating namespace (PUT .../finalize), as a namespace controller does once it is empty. */
async function finalizeNamespace(client: HttpClient, ns: string): Promise<void> {
  const res = await client.request('GET', `/api/v1/namespaces/${ns}`);
  if (res.status === 404) return;
  if (res.status !== 200) throw new Error(`GET namespace ${ns}: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
  const namespace: unknown = JSON.parse(res.body);
  if (typeof namespace !== 'object' || namespace === null) throw new Error(`GET namespace ${ns}: not an object`);
  const body = JSON.stringify({ ...namespace, spec: { finalizers: [] } });
  await expectStatus(client, 'PUT', `/api/v1/namespaces/${ns}/finalize`, body, [200, 404]);
}

/**
 * Deletes the objects of each of `collections` (paths) and the ServiceAccounts, then namespace `ns`,
 * and waits until the namespace is gone; returns the problem when that fails, undefined when it worked.
 */
export async function deleteScratchNamespace(client: HttpClient, ns: string, collections: readonly string[]): Promise<string | undefined> {
  try {
    for (const collection of [...collections, `/api/v1/namespaces/${ns}/serviceaccounts`]) {
      await expectStatus(client, 'DELETE', collection, undefined, [200]);
    }
    await expectStatus(client, 'DELETE', `/api/v1/namespaces/${ns}`, undefined, [200, 202]);
    if (await waitGone(client, ns, CONTROLLER_GRACE_MS)) return undefined;
    await finalizeNamespace(client, ns);
    if (await waitGone(client, ns, CLEANUP_TIMEOUT_MS - CONTROLLER_GRACE_MS)) return undefined;
    return `namespace ${ns} still exists ${CLEANUP_TIMEOUT_MS / 1000} s after its deletion`;
  } catch (err) {
    return `cleanup of ${ns}: ${err instanceof Error ? err.message : String(err)}`;
  }
}
