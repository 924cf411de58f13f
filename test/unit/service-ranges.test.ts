/** The Service address ranges: CIDR and port range parsing, and the static bands kube keeps for requested values. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  firstServiceAddress,
  formatIPv4,
  holdsServiceAddress,
  ipv4Problem,
  lastServiceAddress,
  parseIPv4,
  parseIpRange,
  staticBandSize,
} from '../../src/config/ip-range.js';
import { holdsPort, parsePortRange, staticPortBandSize } from '../../src/config/port-range.js';

test('an IPv4 CIDR range parses to its network, first and last Service addresses', () => {
  const r = parseIpRange('10.100.7.9/12');
  assert.equal(r.text, '10.96.0.0/12');
  assert.equal(formatIPv4(firstServiceAddress(r)), '10.96.0.1');
  assert.equal(formatIPv4(lastServiceAddress(r)), '10.111.255.254');
  assert.ok(holdsServiceAddress(r, parseIPv4('10.111.255.254')));
  assert.ok(!holdsServiceAddress(r, parseIPv4('10.111.255.255')), 'broadcast');
  assert.ok(!holdsServiceAddress(r, parseIPv4('10.96.0.0')), 'network');
  assert.ok(!holdsServiceAddress(r, parseIPv4('10.112.0.1')));
  assert.equal(parseIpRange('192.168.0.0/16').text, '192.168.0.0/16');
  assert.equal(formatIPv4(parseIPv4('255.255.255.255')), '255.255.255.255');
});

test('bad ranges and addresses are refused', () => {
  for (const bad of ['10.96.0.0', '10.96.0.0/33', '10.96.0/12', 'fd00::/108', '10.96.0.0/31', 'x/12']) {
    assert.throws(() => parseIpRange(bad), Error, bad);
  }
  assert.equal(ipv4Problem('10.0.0.1'), undefined);
  assert.equal(ipv4Problem('10.00.0.1'), 'must not have leading 0s');
  assert.match(ipv4Problem('10.0.0.256') ?? '', /must be a valid IP address/);
});

test("static bands: kube's min(max(16, size/16), 256) for IPs and min(max(16, size/32), 128) for ports", () => {
  assert.equal(staticBandSize(parseIpRange('10.96.0.0/12')), 256);
  assert.equal(staticBandSize(parseIpRange('10.0.0.0/24')), 16);
  assert.equal(staticBandSize(parseIpRange('10.0.0.0/28')), 0);
  assert.equal(staticPortBandSize(parsePortRange('30000-32767')), 86);
  assert.equal(staticPortBandSize(parsePortRange('30000-30009')), 0);
});

test("port ranges parse as Go's ParsePortRange", () => {
  const r = parsePortRange('30000-32767');
  assert.deepEqual(r, { base: 30000, size: 2768, text: '30000-32767' });
  assert.ok(holdsPort(r, 32767) && !holdsPort(r, 32768) && !holdsPort(r, 29999));
  assert.deepEqual(parsePortRange('30000+9'), { base: 30000, size: 10, text: '30000-30009' });
  assert.deepEqual(parsePortRange('8080'), { base: 8080, size: 1, text: '8080-8080' });
  for (const bad of ['32767-30000', '0-10', '1-70000', 'a-b', '1-2-3', '']) assert.throws(() => parsePortRange(bad), Error, bad);
});
