/**
 * APF's work estimate, as seats observed in apiserver_flowcontrol_work_estimated_seats: kube 1.36's
 * size-based LIST estimate, a seat per 100 kB the LIST holds at once, from the type's object count
 * and mean stored size (read from storage in the background, reported as apiserver_storage_objects
 * and apiserver_resource_size_estimate_bytes). A LIST of big objects takes more seats than a LIST
 * of as many small ones; a LIST read from storage holds its limit's worth, or half the type with a
 * selector; a GET takes one seat.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, createLevel, sampleValue, scrape, startApfServer, until, type ApfServer } from './apf-helpers.js';

const OBJECTS = 120;
const NS = 'estimates';
const BIG = `/api/v1/namespaces/${NS}/podtemplates`;
const SMALL = `/apis/apps/v1/namespaces/${NS}/controllerrevisions`;

describe('APF work estimation', () => {
  let s: ApfServer;
  let resourceVersion = '';

  before(async () => {
    s = await startApfServer(['tok-lister,lister,lister-uid'], { maxRequestsInflight: 100, maxMutatingRequestsInflight: 0 });
    // Half of the 100 seats, none lent or borrowed: room for the LISTs' seats.
    await createLevel(
      s.adminUrl,
      'wide',
      { nominalConcurrencyShares: 245, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Reject' } },
      ['lister'],
      50,
    );
    assert.equal((await admin(s.adminUrl, '/api/v1/namespaces', 'POST', { metadata: { name: NS } })).status, 201);
    for (let i = 0; i < OBJECTS; i += 20) {
      const batch = Array.from({ length: 20 }, (_, j) => [
        admin(s.adminUrl, BIG, 'POST', {
          metadata: { name: `big-${i + j}`, labels: { app: 'x' }, annotations: { note: 'n'.repeat(3000) } },
          template: { spec: { containers: [{ name: 'c', image: 'i' }] } },
        }),
        admin(s.adminUrl, SMALL, 'POST', { metadata: { name: `small-${i + j}` }, revision: 1 }),
      ]).flat();
      for (const r of await Promise.all(batch)) assert.equal(r.status, 201);
    }
    const big = await admin(s.adminUrl, '/api/v1/podtemplates');
    const small = await admin(s.adminUrl, '/apis/apps/v1/controllerrevisions');
    assert.equal(big.body.items.length, OBJECTS);
    assert.equal(small.body.items.length, OBJECTS);
    resourceVersion = big.body.metadata.resourceVersion;
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

  /** The mean stored size of a type, from the storage metrics (their product is what they report). */
  async function averageSize(group: string, resource: string): Promise<number> {
    const samples = await scrape(s.adminUrl);
    const count = sampleValue(samples, 'apiserver_storage_objects', { resource: group === '' ? resource : `${resource}.${group}` });
    const total = sampleValue(samples, 'apiserver_resource_size_estimate_bytes', { group, resource });
    assert.equal(count, OBJECTS);
    assert.ok(total !== undefined && total > 0, `size of ${resource}: ${total}`);
    return total / OBJECTS;
  }

  test('a LIST of big objects takes more seats than a LIST of as many small ones: a seat per 100 kB', async () => {
    const big = await averageSize('', 'podtemplates');
    const small = await averageSize('apps', 'controllerrevisions');
    assert.ok(big > 3000 && small < 1000, `big ${big}, small ${small}`);
    const bigSeats = Math.ceil((OBJECTS * big) / 100_000);
    const smallSeats = Math.max(1, Math.ceil((OBJECTS * small) / 100_000));
    assert.ok(bigSeats > smallSeats);
    // The first LIST of a type may find no stats yet (1 seat) and starts reading them.
    await until(`a LIST of big objects estimated at ${bigSeats} seats`, async () => ((await seatsOf(BIG)) === bigSeats ? true : undefined));
    await until(`a LIST of small objects estimated at ${smallSeats} seats`, async () => ((await seatsOf(SMALL)) === smallSeats ? true : undefined));
    assert.equal(await seatsOf(`${BIG}/big-0`), 1);
  });

  test('a LIST read from storage holds its limit, or half the type with a selector; from the cache, its limit', async () => {
    const big = await averageSize('', 'podtemplates');
    await until('the stats known', async () => ((await seatsOf(BIG)) === Math.ceil((OBJECTS * big) / 100_000) ? true : undefined));
    assert.equal(await seatsOf(`${BIG}?limit=10&resourceVersion=${resourceVersion}`), Math.ceil((10 * big) / 100_000));
    assert.equal(await seatsOf(`${BIG}?limit=10&resourceVersion=${resourceVersion}&labelSelector=app%3Dx`), Math.ceil(((OBJECTS / 2) * big) / 100_000));
    assert.equal(await seatsOf(`${BIG}?limit=40`), Math.ceil((40 * big) / 100_000));
  });
});
