/**
 * APF's work estimate, as seats observed in apiserver_flowcontrol_work_estimated_seats: a LIST takes
 * a seat per 100 stored objects of its resource (kube's count-based list estimator, read from
 * storage's count in the background), a LIST read from storage (a limit with a resourceVersion)
 * twice its limit, or the stored count plus its limit with a selector; a GET takes one seat.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, createLevel, sampleValue, scrape, startApfServer, until, type ApfServer } from './apf-helpers.js';

const CONFIGMAPS = 250;
const NS = '/api/v1/namespaces/default/configmaps';

describe('APF work estimation', () => {
  let s: ApfServer;
  /** Every ConfigMap stored (the ones created here and each namespace's kube-root-ca.crt): what storage counts. */
  let stored = 0;
  let resourceVersion = '';

  before(async () => {
    s = await startApfServer(['tok-lister,lister,lister-uid'], { maxRequestsInflight: 100, maxMutatingRequestsInflight: 0 });
    // Half of the 100 seats, none lent or borrowed: room for the widest LIST (10 seats).
    await createLevel(
      s.adminUrl,
      'wide',
      { nominalConcurrencyShares: 245, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Reject' } },
      ['lister'],
      50,
    );
    for (let i = 0; i < CONFIGMAPS; i += 25) {
      const batch = Array.from({ length: Math.min(25, CONFIGMAPS - i) }, (_, j) =>
        admin(s.adminUrl, NS, 'POST', { metadata: { name: `cm-${i + j}`, labels: { app: 'x' } }, data: { k: 'v' } }),
      );
      for (const r of await Promise.all(batch)) assert.equal(r.status, 201);
    }
    const all = await admin(s.adminUrl, '/api/v1/configmaps');
    stored = all.body.items.length;
    resourceVersion = all.body.metadata.resourceVersion;
    assert.ok(stored >= CONFIGMAPS && stored < 300, `stored ${stored}`);
  });

  after(async () => s?.stop());

  /** The seats the server estimated for the lister's next request to `path` (its sum's growth in the histogram). */
  async function seatsOf(path: string): Promise<number> {
    const sum = async (): Promise<number> =>
      sampleValue(await scrape(s.adminUrl), 'apiserver_flowcontrol_work_estimated_seats_sum', { flow_schema: 'wide', priority_level: 'wide' }) ?? 0;
    const before = await sum();
    const r = await s.client.send('tok-lister', path);
    assert.equal(r.status, 200, `${path}: ${r.text.slice(0, 200)}`);
    return (await sum()) - before;
  }

  test('a LIST takes a seat per 100 stored objects, once the count is known', async () => {
    const expected = Math.ceil(stored / 100);
    // The first LIST of a type may find no count yet (1 seat) and starts reading it.
    await until(`a LIST estimated at ${expected} seats`, async () => ((await seatsOf(NS)) === expected ? true : undefined));
    assert.equal(await seatsOf(`${NS}/cm-0`), 1);
  });

  test('a LIST read from storage costs twice its limit, or the count plus its limit with a selector', async () => {
    await until('the count known', async () => ((await seatsOf(NS)) === Math.ceil(stored / 100) ? true : undefined));
    assert.equal(await seatsOf(`${NS}?limit=60&resourceVersion=${resourceVersion}`), Math.ceil(120 / 100));
    assert.equal(await seatsOf(`${NS}?limit=60&resourceVersion=${resourceVersion}&labelSelector=app%3Dx`), Math.ceil((stored + 60) / 100));
    // From the cache (no resourceVersion): the whole count, whatever the limit.
    assert.equal(await seatsOf(`${NS}?limit=60`), Math.ceil(stored / 100));
  });
});
