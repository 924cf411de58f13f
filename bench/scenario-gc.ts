/**
 * gc: the garbage collector at work. An owner ConfigMap with 1,000 dependent ConfigMaps is deleted
 * with each propagation policy; measured is the time from the DELETE until the collector is done:
 * the last dependent gone (Background), the owner gone after all its blocking dependents
 * (Foreground), the owner gone after every dependent lost its reference (Orphan).
 */
import { CM_PATH, payload } from './fixtures.js';
import { HttpClient, runPool } from './http-client.js';
import { metric } from './metrics.js';
import { log, withTarget, type Scenario } from './scenario.js';

const DEPENDENTS = 1000;
const POLL_MS = 10;
const TIMEOUT_MS = 300_000;

interface Created {
  metadata: { name: string; uid: string };
}

async function createOwnerAndDependents(client: HttpClient, run: string, concurrency: number, block: boolean): Promise<Created> {
  const res = await client.request('POST', CM_PATH, { body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${run}-owner` } }) });
  if (res.status !== 201) throw new Error(`creating the owner: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
  const owner = JSON.parse(res.body) as Created;
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: owner.metadata.name, uid: owner.metadata.uid, blockOwnerDeletion: block };
  let failed = '';
  await runPool(DEPENDENTS, concurrency, performance.now() + TIMEOUT_MS, async (i) => {
    const body = JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `${run}-dep-${i}`, labels: { 'gc-run': run }, ownerReferences: [ref] },
      data: { payload: payload(256, i) },
    });
    const r = await client.request('POST', CM_PATH, { body });
    if (r.status !== 201) failed ||= `HTTP ${r.status}: ${r.body.slice(0, 300)}`;
  });
  if (failed !== '') throw new Error(`creating dependents: ${failed}`);
  return owner;
}

/** Polls until `done` answers true; returns the ms since `t0`. */
async function until(t0: number, what: string, done: () => Promise<boolean>): Promise<number> {
  for (;;) {
    if (await done()) return performance.now() - t0;
    if (performance.now() - t0 > TIMEOUT_MS) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

export const gcScenario: Scenario = {
  name: 'gc',
  title: `gc: deleting an owner with ${DEPENDENTS} dependents, time until the collector is done`,
  async run(target, options) {
    return withTarget(target, options, async (t) => {
      const client = new HttpClient(t.server.url, options.concurrency);
      const noneLeft = (run: string) => async (): Promise<boolean> => {
        const r = await client.request('GET', `${CM_PATH}?labelSelector=gc-run%3D${run}&limit=1`);
        return r.status === 200 && (JSON.parse(r.body) as { items: unknown[] }).items.length === 0;
      };
      const gone = (name: string) => async (): Promise<boolean> => (await client.request('GET', `${CM_PATH}/${name}`)).status === 404;
      const orphaned = (run: string) => async (): Promise<boolean> => {
        const r = await client.request('GET', `${CM_PATH}?labelSelector=gc-run%3D${run}`);
        const items = (JSON.parse(r.body) as { items: Array<{ metadata: { ownerReferences?: unknown[] } }> }).items;
        return items.length === DEPENDENTS && items.every((i) => i.metadata.ownerReferences === undefined);
      };
      try {
        const times: Record<string, number> = {};
        for (const policy of ['Background', 'Foreground', 'Orphan'] as const) {
          const run = policy.toLowerCase();
          log(`gc: creating an owner and ${DEPENDENTS} dependents (${policy})`);
          const owner = await createOwnerAndDependents(client, run, options.concurrency, policy === 'Foreground');
          t.assertAlive();
          const t0 = performance.now();
          const del = await client.request('DELETE', `${CM_PATH}/${owner.metadata.name}?propagationPolicy=${policy}`);
          if (del.status !== 200) throw new Error(`DELETE (${policy}): HTTP ${del.status}: ${del.body.slice(0, 300)}`);
          if (policy === 'Background') times[policy] = await until(t0, 'the last dependent to go', noneLeft(run));
          else if (policy === 'Foreground') {
            times[policy] = await until(t0, 'the owner to go', gone(owner.metadata.name));
            if (!(await noneLeft(run)())) throw new Error('Foreground: the owner went before its dependents');
          } else {
            times[policy] = await until(t0, 'the owner to go', gone(owner.metadata.name));
            if (!(await orphaned(run)())) throw new Error('Orphan: dependents were deleted or kept their reference');
          }
          t.assertAlive();
        }
        return {
          metrics: [
            metric('Background: DELETE to last dependent gone', times.Background ?? null, 'ms'),
            metric('Foreground: DELETE to owner gone', times.Foreground ?? null, 'ms'),
            metric('Orphan: DELETE to owner gone (dependents kept)', times.Orphan ?? null, 'ms'),
          ],
          notes: [`${DEPENDENTS} ConfigMaps of 256 B data owned by one ConfigMap; polled every ${POLL_MS} ms`],
        };
      } finally {
        client.close();
      }
    });
  },
};
