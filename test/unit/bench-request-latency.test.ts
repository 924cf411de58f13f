import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { countOf, parseRequestBuckets, parseRequestBucketsByCall, quantileOf, sloClassOf, subtractBuckets } from '../../bench/control-plane/request-latency.js';

/** Cumulative buckets of one series, as /metrics lists them. */
function series(verb: string, scope: string, resource: string, counts: Array<[string, number]>): string {
  return counts
    .map(
      ([le, n]) =>
        `apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="${resource}",scope="${scope}",subresource="",verb="${verb}",version="v1",le="${le}"} ${n}`,
    )
    .join('\n');
}

describe('bench request latency from the request-duration histogram', () => {
  test('classes follow kube SLOs: mutating verbs, single reads, LIST by scope; WATCH and non-resource requests are left out', () => {
    assert.equal(sloClassOf('POST', 'namespace'), 'mutating');
    assert.equal(sloClassOf('APPLY', 'resource'), 'mutating');
    assert.equal(sloClassOf('GET', 'resource'), 'get');
    assert.equal(sloClassOf('LIST', 'namespace'), 'list namespace');
    assert.equal(sloClassOf('LIST', 'cluster'), 'list cluster');
    assert.equal(sloClassOf('WATCH', 'cluster'), undefined);
    assert.equal(sloClassOf('GET', ''), undefined);
  });

  test('series of one class are summed, a later scrape minus an earlier one is what happened between them', () => {
    const before = parseRequestBuckets(
      [
        series('POST', 'namespace', 'pods', [
          ['0.1', 2],
          ['1', 2],
          ['+Inf', 2],
        ]),
        series('GET', '', '', [
          ['0.1', 50],
          ['1', 50],
          ['+Inf', 50],
        ]),
      ].join('\n'),
    );
    const after = parseRequestBuckets(
      [
        series('POST', 'namespace', 'pods', [
          ['0.1', 60],
          ['1', 100],
          ['+Inf', 102],
        ]),
        series('PUT', 'resource', 'leases', [
          ['0.1', 10],
          ['1', 10],
          ['+Inf', 10],
        ]),
        '# HELP apiserver_request_duration_seconds something',
        series('GET', '', '', [
          ['0.1', 90],
          ['1', 90],
          ['+Inf', 90],
        ]),
      ].join('\n'),
    );
    const delta = subtractBuckets(after, before);
    assert.deepEqual([...delta.keys()], ['mutating']);
    const mutating = delta.get('mutating');
    assert.ok(mutating);
    assert.equal(countOf(mutating), 110);
    assert.equal(mutating.get(0.1), 68);
    assert.equal(mutating.get(1), 108);
  });

  test('by call: each verb and resource (with its subresource) of a class is its own series', () => {
    const text = [
      series('POST', 'namespace', 'pods', [
        ['0.1', 3],
        ['+Inf', 4],
      ]),
      series('PUT', 'resource', 'leases', [
        ['0.1', 10],
        ['+Inf', 10],
      ]),
      series('PATCH', 'namespace', 'pods', [
        ['0.1', 1],
        ['+Inf', 1],
      ]).replaceAll('subresource=""', 'subresource="status"'),
      series('GET', 'namespace', 'pods', [
        ['0.1', 7],
        ['+Inf', 7],
      ]),
    ].join('\n');
    const calls = parseRequestBucketsByCall(text);
    assert.deepEqual([...calls.keys()].sort(), ['get GET pods', 'mutating PATCH pods/status', 'mutating POST pods', 'mutating PUT leases']);
    assert.equal(calls.get('mutating POST pods')?.get(Infinity), 4);
    assert.equal(calls.get('mutating PATCH pods/status')?.get(0.1), 1);
  });

  test('quantiles interpolate inside the bucket and stop at the last finite bound', () => {
    const s = new Map<number, number>([
      [0.1, 50],
      [0.5, 90],
      [1, 100],
      [Infinity, 100],
    ]);
    assert.ok(Math.abs(quantileOf(s, 0.5) - 0.1) < 1e-9);
    assert.ok(Math.abs(quantileOf(s, 0.7) - 0.3) < 1e-9);
    assert.ok(Math.abs(quantileOf(s, 0.95) - 0.75) < 1e-9);
    const overflowing = new Map<number, number>([
      [1, 10],
      [Infinity, 20],
    ]);
    assert.equal(quantileOf(overflowing, 0.99), 1);
    assert.ok(Number.isNaN(quantileOf(new Map([[Infinity, 0]]), 0.5)));
  });
});
