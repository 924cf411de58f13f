import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AggregatorRegistry, Registry } from 'prom-client';
import { RequestSeries } from '../../src/metrics/request-series.js';
import type { RequestLabels } from '../../src/metrics/request-labels.js';

const NAMES = { total: 'test_request_total', totalHelp: 'Requests.', duration: 'test_request_duration_seconds', durationHelp: 'Latency.' };
const BOUNDS = [0.005, 0.025, 0.1];

function labels(verb: string, resource: string): RequestLabels {
  return { verb, dry_run: '', group: '', version: 'v1', resource, subresource: '', scope: 'resource', component: 'apiserver' };
}

const SERIES = 'verb="GET",dry_run="",group="",version="v1",resource="pods",subresource="",scope="resource",component="apiserver"';
/** The same labels as kube-apiserver writes a histogram's: sorted, `le` last. */
const SORTED = 'component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="GET",version="v1"';

describe('request counter and latency histogram', () => {
  test('counts by code and fills cumulative buckets in the exposition format', async () => {
    const registry = new Registry();
    const series = new RequestSeries(BOUNDS, NAMES, registry);
    series.record(labels('GET', 'pods'), 200, 0.001);
    series.record(labels('GET', 'pods'), 200, 0.005); // on a bound: counted in that bucket
    series.record(labels('GET', 'pods'), 404, 0.05);
    series.record(labels('GET', 'pods'), 200, 7); // above every bound: only +Inf
    series.record(labels('WATCH', 'pods'), 200, undefined); // long-running: counted, not timed
    const text = await registry.metrics();
    const lines = text.split('\n');
    for (const expected of [
      '# TYPE test_request_total counter',
      `test_request_total{${SERIES},code="200"} 3`,
      `test_request_total{${SERIES},code="404"} 1`,
      'test_request_total{verb="WATCH",dry_run="",group="",version="v1",resource="pods",subresource="",scope="resource",component="apiserver",code="200"} 1',
      '# TYPE test_request_duration_seconds histogram',
      `test_request_duration_seconds_bucket{${SORTED},le="0.005"} 2`,
      `test_request_duration_seconds_bucket{${SORTED},le="0.025"} 2`,
      `test_request_duration_seconds_bucket{${SORTED},le="0.1"} 3`,
      `test_request_duration_seconds_bucket{${SORTED},le="+Inf"} 4`,
      `test_request_duration_seconds_sum{${SORTED}} 7.056`,
      `test_request_duration_seconds_count{${SORTED}} 4`,
    ])
      assert.ok(lines.includes(expected), `missing line: ${expected}\n${text}`);
    assert.ok(!text.includes('verb="WATCH",version="v1"}'), 'a long-running request has no latency');
  });

  test("workers' series add up in the primary's aggregation", async () => {
    const workers = [new Registry(), new Registry()];
    const series = workers.map((r) => new RequestSeries(BOUNDS, NAMES, r));
    series[0].record(labels('GET', 'pods'), 200, 0.01);
    series[1].record(labels('GET', 'pods'), 200, 0.2);
    series[1].record(labels('LIST', 'pods'), 200, 0.01);
    const merged = await AggregatorRegistry.aggregate(await Promise.all(workers.map((r) => r.getMetricsAsJSON()))).metrics();
    const lines = merged.split('\n');
    assert.ok(lines.includes(`test_request_total{${SERIES},code="200"} 2`), merged);
    assert.ok(lines.includes(`test_request_duration_seconds_bucket{${SORTED},le="0.025"} 1`), merged);
    assert.ok(lines.includes(`test_request_duration_seconds_bucket{${SORTED},le="+Inf"} 2`), merged);
    assert.ok(
      lines.some((l) => l.startsWith('test_request_total{verb="LIST"') && l.endsWith(' 1')),
      merged,
    );
  });
});
