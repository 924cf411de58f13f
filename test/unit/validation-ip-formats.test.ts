/**
 * The IP and CIDR parsing behind kube's legacy-field and strict checks (src/validation/ip-formats.ts).
 * Expected answers are kube-apiserver 1.36's: recorded in test/golden/validation/ or checked against the
 * reference server (e.g. "10.0.0.0/08", "10.0.0.0/33", the canonical form of "1:0:0:2:0:0:0:3").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  cidrContains,
  endpointIPProblems,
  formatIPv6,
  legacyCIDRProblems,
  legacyIPProblems,
  parseCIDR,
  parseIP,
  strictIPProblems,
} from '../../src/validation/ip-formats.js';

test('parseIP reads IPv4, IPv6 and embedded IPv4 as Go does, leading zeros only when sloppy', () => {
  assert.deepEqual(parseIP('10.1.2.3'), [10, 1, 2, 3]);
  assert.deepEqual(parseIP('010.1.2.3'), [10, 1, 2, 3]);
  assert.equal(parseIP('010.1.2.3', true), undefined);
  assert.equal(parseIP('10.1.2.300'), undefined);
  assert.equal(parseIP('10.1.2'), undefined);
  assert.deepEqual(parseIP('::1'), [...new Array<number>(15).fill(0), 1]);
  assert.deepEqual(parseIP('::ffff:1.2.3.4')?.slice(10), [0xff, 0xff, 1, 2, 3, 4]);
  assert.equal(parseIP('1::2::3'), undefined);
  assert.equal(parseIP('1:2:3:4:5:6:7:8:9'), undefined);
  assert.equal(parseIP('fe80::1%eth0'), undefined);
});

test('legacy IP problems: leading zeros and IPv4-mapped addresses', () => {
  assert.deepEqual(legacyIPProblems('10.1.2.3'), []);
  assert.deepEqual(legacyIPProblems('not-an-ip'), ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)']);
  assert.deepEqual(legacyIPProblems('010.1.2.3'), ['must not have leading 0s']);
  assert.deepEqual(legacyIPProblems('::ffff:10.1.2.3'), ['must not be an IPv4-mapped IPv6 address']);
});

test('strict IPs must be canonical (RFC 5952 for IPv6)', () => {
  assert.equal(formatIPv6(parseIP('2001:db8:0:0:0:0:0:1') ?? []), '2001:db8::1');
  assert.equal(formatIPv6(parseIP('1:0:0:2:0:0:0:3') ?? []), '1:0:0:2::3');
  assert.equal(formatIPv6(parseIP('1:0:2:3:4:5:6:7') ?? []), '1:0:2:3:4:5:6:7');
  assert.deepEqual(strictIPProblems('2001:DB8::1'), ['must be in canonical form ("2001:db8::1")']);
  assert.deepEqual(strictIPProblems('2001:db8::1'), []);
});

test('legacy CIDR problems, in kube order of precedence', () => {
  assert.deepEqual(legacyCIDRProblems('10.0.0.0/8'), []);
  assert.deepEqual(legacyCIDRProblems('10.0.0.0'), ['must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)']);
  assert.deepEqual(legacyCIDRProblems('10.0.0.0/33'), ['must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)']);
  assert.deepEqual(legacyCIDRProblems('010.0.0.0/8'), ['must not have leading 0s in IP or prefix length']);
  assert.deepEqual(legacyCIDRProblems('10.0.0.0/08'), ['must not have leading 0s in IP or prefix length']);
  assert.deepEqual(legacyCIDRProblems('::ffff:10.0.0.0/104'), ['must not have an IPv4-mapped IPv6 address']);
  assert.deepEqual(legacyCIDRProblems('10.0.0.1/8'), ['must not have bits set beyond the prefix length']);
});

test('cidrContains never mixes families', () => {
  const net = parseCIDR('10.0.0.0/16');
  assert.ok(net !== undefined);
  assert.equal(cidrContains(net, parseIP('10.0.5.0') ?? []), true);
  assert.equal(cidrContains(net, parseIP('10.1.0.0') ?? []), false);
  assert.equal(cidrContains(net, parseIP('2001:db8::') ?? []), false);
});

test('endpoint IPs may not be unspecified, loopback or link-local', () => {
  assert.deepEqual(endpointIPProblems('10.1.2.3'), []);
  assert.deepEqual(endpointIPProblems('0.0.0.0'), ['may not be unspecified (0.0.0.0)']);
  assert.deepEqual(endpointIPProblems('::1'), ['may not be in the loopback range (127.0.0.0/8, ::1/128)']);
  assert.deepEqual(endpointIPProblems('169.254.1.1'), ['may not be in the link-local range (169.254.0.0/16, fe80::/10)']);
  assert.deepEqual(endpointIPProblems('ff02::1'), ['may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)']);
  assert.deepEqual(endpointIPProblems('bogus'), ['must be a valid IP address']);
});
