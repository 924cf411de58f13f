/**
 * Service cluster IP and node port allocation over the API (memory store), with kube-apiserver 1.36's
 * answers: addresses handed out and kept, requested ones checked (422 in kube's words), released on
 * delete and on type changes, nothing reserved by dry-runs, and the bootstrap `kubernetes` Service with
 * its IPAddress, Endpoints, EndpointSlice and ServiceCIDR.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';
import { assertStatus, restFor, type Rest } from './rest.js';
import { parseIpRange } from '../../src/config/ip-range.js';
import { parsePortRange } from '../../src/config/port-range.js';

const SERVICES = '/api/v1/namespaces/default/services';
const IP_ADDRESSES = '/apis/networking.k8s.io/v1/ipaddresses';

let srv: TestServer;
let rest: Rest;
before(async () => {
  srv = await startTestServer();
  rest = restFor(srv.url);
});
after(async () => {
  await srv?.stop();
});

function service(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }], ...spec } };
}

/** The address as a number, to check it lies in 10.96.0.0/12. */
function inDefaultRange(ip: string): boolean {
  const [a, b] = ip.split('.').map(Number);
  return a === 10 && b !== undefined && b >= 96 && b < 112;
}

async function ipAddressNames(): Promise<string[]> {
  const list = await rest.get(IP_ADDRESSES);
  assert.equal(list.status, 200, list.text);
  return (list.body.items as Array<{ metadata: { name: string } }>).map((i) => i.metadata.name);
}

function invalidMessage(name: string, field: string, detail: string): string {
  return `Service "${name}" is invalid: ${field}: ${detail}`;
}

describe('cluster IPs', () => {
  test('a ClusterIP Service gets a free address of the range, single-stack IPv4, and its IPAddress object', async () => {
    const name = uniqueName('svc');
    const created = await rest.create(SERVICES, service(name, { selector: { app: 'x' } }));
    const spec = created.spec;
    assert.ok(inDefaultRange(spec.clusterIP), spec.clusterIP);
    assert.notEqual(spec.clusterIP, '10.96.0.1');
    assert.deepEqual(spec.clusterIPs, [spec.clusterIP]);
    assert.deepEqual(spec.ipFamilies, ['IPv4']);
    assert.equal(spec.ipFamilyPolicy, 'SingleStack');
    assert.deepEqual(Object.keys(spec).slice(0, 5), ['ports', 'selector', 'clusterIP', 'clusterIPs', 'type']);
    const ipAddress = await rest.get(`${IP_ADDRESSES}/${spec.clusterIP}`);
    assert.equal(ipAddress.status, 200, ipAddress.text);
    assert.deepEqual(ipAddress.body.metadata.labels, {
      'ipaddress.kubernetes.io/ip-family': 'IPv4',
      'ipaddress.kubernetes.io/managed-by': 'ipallocator.k8s.io',
    });
    assert.deepEqual(ipAddress.body.spec.parentRef, { resource: 'services', namespace: 'default', name });
    // A PUT without the allocated fields keeps them (kube's patchAllocatedValues).
    const put = await rest.put(`${SERVICES}/${name}`, service(name, { selector: { app: 'y' } }));
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.spec.clusterIP, spec.clusterIP);
  });

  test('a requested address is reserved; the same address again, or one outside the range, is refused with 422', async () => {
    const first = uniqueName('svc');
    const created = await rest.create(SERVICES, service(first, { clusterIP: '10.96.200.7' }));
    assert.deepEqual(created.spec.clusterIPs, ['10.96.200.7']);
    const second = uniqueName('svc');
    const taken = await rest.post(SERVICES, service(second, { clusterIP: '10.96.200.7' }));
    assertStatus(
      taken,
      422,
      'Invalid',
      invalidMessage(second, 'spec.clusterIPs', 'Invalid value: ["10.96.200.7"]: failed to allocate IP 10.96.200.7: provided IP is already allocated'),
    );
    assert.deepEqual(taken.body.details.causes, [
      {
        reason: 'FieldValueInvalid',
        field: 'spec.clusterIPs',
        message: 'Invalid value: ["10.96.200.7"]: failed to allocate IP 10.96.200.7: provided IP is already allocated',
      },
    ]);
    const outside = await rest.post(SERVICES, service(second, { clusterIP: '1.2.3.4' }));
    assertStatus(
      outside,
      422,
      'Invalid',
      invalidMessage(
        second,
        'spec.clusterIPs',
        'Invalid value: ["1.2.3.4"]: failed to allocate IP 1.2.3.4: the provided network does not match the current range',
      ),
    );
    const broadcast = await rest.post(SERVICES, service(second, { clusterIP: '10.111.255.255' }));
    assertStatus(broadcast, 422, 'Invalid', /does not match the current range/);
    const malformed = await rest.post(SERVICES, service(second, { clusterIP: '10.96.0.300' }));
    assertStatus(
      malformed,
      422,
      'Invalid',
      invalidMessage(second, 'spec.clusterIPs[0]', 'Invalid value: "10.96.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'),
    );
    const ipv6 = await rest.post(SERVICES, service(second, { clusterIP: 'fd00::5' }));
    assertStatus(ipv6, 422, 'Invalid', invalidMessage(second, 'spec.clusterIPs[0]', 'Invalid value: ["fd00::5"]: IPv6 is not configured on this cluster'));
    // None of the refused writes stored a Service or kept an address.
    assert.equal((await rest.get(`${SERVICES}/${second}`)).status, 404);
    assert.ok(!(await ipAddressNames()).includes('1.2.3.4'));
  });

  test('a create refused by storage (name taken) gives back what it reserved', async () => {
    const name = uniqueName('svc');
    await rest.create(SERVICES, service(name, { clusterIP: '10.96.206.1' }));
    const duplicate = await rest.post(SERVICES, service(name, { clusterIP: '10.96.206.2', type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }));
    assertStatus(duplicate, 409, 'AlreadyExists', `services "${name}" already exists`);
    assert.ok(!(await ipAddressNames()).includes('10.96.206.2'));
    const reuse = await rest.create(
      SERVICES,
      service(uniqueName('svc'), { clusterIP: '10.96.206.2', type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }),
    );
    assert.equal(reuse.spec.ports[0].nodePort, 30080);
  });

  test('the cluster IP may not change once set', async () => {
    const name = uniqueName('svc');
    await rest.create(SERVICES, service(name, { clusterIP: '10.96.201.1' }));
    const changed = await rest.patch(`${SERVICES}/${name}`, { spec: { clusterIP: '10.96.201.2', clusterIPs: ['10.96.201.2'] } });
    assertStatus(changed, 422, 'Invalid', invalidMessage(name, 'spec.clusterIPs[0]', 'Invalid value: ["10.96.201.2"]: may not change once set'));
    const names = await ipAddressNames();
    assert.ok(names.includes('10.96.201.1'));
    assert.ok(!names.includes('10.96.201.2'), 'the refused update reserved nothing');
  });

  test('headless and ExternalName Services get no address', async () => {
    const before = (await ipAddressNames()).length;
    const headless = await rest.create(SERVICES, service(uniqueName('svc'), { clusterIP: 'None', selector: { app: 'x' } }));
    assert.deepEqual(headless.spec.clusterIPs, ['None']);
    assert.deepEqual(headless.spec.ipFamilies, ['IPv4']);
    assert.equal(headless.spec.ipFamilyPolicy, 'SingleStack');
    const selectorless = await rest.create(SERVICES, service(uniqueName('svc'), { clusterIP: 'None' }));
    assert.deepEqual(selectorless.spec.ipFamilies, ['IPv4', 'IPv6']);
    assert.equal(selectorless.spec.ipFamilyPolicy, 'RequireDualStack');
    const external = await rest.create(SERVICES, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: uniqueName('svc') },
      spec: { type: 'ExternalName', externalName: 'db.example.com' },
    });
    assert.equal(external.spec.clusterIP, undefined);
    assert.equal(external.spec.clusterIPs, undefined);
    assert.equal(external.spec.ipFamilies, undefined);
    assert.equal((await ipAddressNames()).length, before);
  });

  test('deleting a Service releases its address, which a new Service may then request', async () => {
    const name = uniqueName('svc');
    await rest.create(SERVICES, service(name, { clusterIP: '10.96.202.9' }));
    const deleted = await rest.del(`${SERVICES}/${name}`);
    assert.equal(deleted.status, 200, deleted.text);
    assert.ok(!(await ipAddressNames()).includes('10.96.202.9'));
    const again = await rest.create(SERVICES, service(uniqueName('svc'), { clusterIP: '10.96.202.9' }));
    assert.equal(again.spec.clusterIP, '10.96.202.9');
  });

  test('a Service held by a finalizer keeps its address until the finalizer is removed', async () => {
    const name = uniqueName('svc');
    await rest.create(SERVICES, { ...service(name, { clusterIP: '10.96.207.7' }), metadata: { name, finalizers: ['example.com/hold'] } });
    const deleting = await rest.del(`${SERVICES}/${name}`);
    assert.equal(deleting.status, 200, deleting.text);
    assert.ok(deleting.body.metadata.deletionTimestamp !== undefined, deleting.text);
    assert.ok((await ipAddressNames()).includes('10.96.207.7'));
    const released = await rest.patch(`${SERVICES}/${name}`, { metadata: { finalizers: null } });
    assert.equal(released.status, 200, released.text);
    assert.equal((await rest.get(`${SERVICES}/${name}`)).status, 404);
    assert.ok(!(await ipAddressNames()).includes('10.96.207.7'));
  });

  test('changing to ExternalName releases the address; changing back allocates one', async () => {
    const name = uniqueName('svc');
    await rest.create(SERVICES, service(name, { clusterIP: '10.96.203.3' }));
    const external = await rest.patch(`${SERVICES}/${name}`, { spec: { type: 'ExternalName', externalName: 'x.example.com' } });
    assert.equal(external.status, 200, external.text);
    assert.equal(external.body.spec.clusterIP, undefined);
    assert.equal(external.body.spec.ipFamilies, undefined);
    assert.ok(!(await ipAddressNames()).includes('10.96.203.3'));
    const back = await rest.patch(`${SERVICES}/${name}`, { spec: { type: 'ClusterIP', externalName: null } });
    assert.equal(back.status, 200, back.text);
    assert.ok(inDefaultRange(back.body.spec.clusterIP));
    assert.ok((await ipAddressNames()).includes(back.body.spec.clusterIP));
  });
});

// Requested node ports come from the low static band (30000-30085 here), which kube's allocator (and
// Capstan's) hands out at random only when the rest of the range is full: no random allocation by
// another test can take them.
describe('node ports', () => {
  test('NodePort and LoadBalancer Services get node ports from the range; a shared service port shares one', async () => {
    const np = await rest.create(
      SERVICES,
      service(uniqueName('svc'), {
        type: 'NodePort',
        ports: [
          { name: 'a', port: 80 },
          { name: 'b', port: 81 },
        ],
      }),
    );
    const [p0, p1] = (np.spec.ports as Array<{ nodePort: number }>).map((p) => p.nodePort);
    for (const p of [p0, p1]) assert.ok(p !== undefined && p >= 30000 && p <= 32767, String(p));
    assert.notEqual(p0, p1);
    const shared = await rest.create(
      SERVICES,
      service(uniqueName('svc'), {
        type: 'NodePort',
        ports: [
          { name: 'tcp', port: 53, protocol: 'TCP' },
          { name: 'udp', port: 53, protocol: 'UDP' },
        ],
      }),
    );
    assert.equal(shared.spec.ports[0].nodePort, shared.spec.ports[1].nodePort);
    const lb = await rest.create(SERVICES, service(uniqueName('svc'), { type: 'LoadBalancer', externalTrafficPolicy: 'Local' }));
    assert.ok(lb.spec.ports[0].nodePort >= 30000);
    assert.ok(lb.spec.healthCheckNodePort >= 30000 && lb.spec.healthCheckNodePort !== lb.spec.ports[0].nodePort);
    const noPorts = await rest.create(SERVICES, service(uniqueName('svc'), { type: 'LoadBalancer', allocateLoadBalancerNodePorts: false }));
    assert.equal(noPorts.spec.ports[0].nodePort, undefined);
  });

  test('a requested node port is reserved; taken or out of range is refused with 422', async () => {
    const first = uniqueName('svc');
    const created = await rest.create(SERVICES, service(first, { type: 'NodePort', ports: [{ port: 80, nodePort: 30077 }] }));
    assert.equal(created.spec.ports[0].nodePort, 30077);
    const second = uniqueName('svc');
    const taken = await rest.post(SERVICES, service(second, { type: 'NodePort', ports: [{ port: 80, nodePort: 30077 }] }));
    assertStatus(taken, 422, 'Invalid', invalidMessage(second, 'spec.ports[0].nodePort', 'Invalid value: 30077: provided port is already allocated'));
    const outside = await rest.post(SERVICES, service(second, { type: 'NodePort', ports: [{ port: 80, nodePort: 8080 }] }));
    assertStatus(
      outside,
      422,
      'Invalid',
      invalidMessage(second, 'spec.ports[0].nodePort', 'Invalid value: 8080: provided port is not in the valid range. The range of valid ports is 30000-32767'),
    );
    // A refused create gives back the cluster IP it had reserved first.
    const failing = uniqueName('svc');
    const refused = await rest.post(SERVICES, service(failing, { type: 'NodePort', clusterIP: '10.96.204.4', ports: [{ port: 80, nodePort: 30077 }] }));
    assert.equal(refused.status, 422);
    assert.ok(!(await ipAddressNames()).includes('10.96.204.4'));
  });

  test('a ClusterIP Service may not name a node port; a node port on an ExternalName Service is never released', async () => {
    const name = uniqueName('svc');
    const forbidden = await rest.post(SERVICES, service(name, { ports: [{ port: 80, nodePort: 30081 }] }));
    assertStatus(forbidden, 422, 'Invalid', `Service "${name}" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when \`type\` is 'ClusterIP'`);
    const holder = uniqueName('svc');
    await rest.create(SERVICES, service(holder, { type: 'NodePort', ports: [{ port: 80, nodePort: 30082 }] }));
    const external = uniqueName('svc');
    await rest.create(SERVICES, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: external },
      spec: { type: 'ExternalName', externalName: 'e.example.com', ports: [{ port: 80, nodePort: 30082 }] },
    });
    assert.equal((await rest.del(`${SERVICES}/${external}`)).status, 200);
    const stillHeld = await rest.post(SERVICES, service(uniqueName('svc'), { type: 'NodePort', ports: [{ port: 80, nodePort: 30082 }] }));
    assertStatus(stillHeld, 422, 'Invalid', /provided port is already allocated/);
  });

  test('leaving NodePort releases the node ports; deleting releases them too', async () => {
    const name = uniqueName('svc');
    await rest.create(SERVICES, service(name, { type: 'NodePort', ports: [{ port: 80, nodePort: 30078 }] }));
    const toClusterIP = await rest.patch(`${SERVICES}/${name}`, { spec: { type: 'ClusterIP', externalTrafficPolicy: null } });
    assert.equal(toClusterIP.status, 200, toClusterIP.text);
    assert.equal(toClusterIP.body.spec.ports[0].nodePort, undefined);
    const reuse = uniqueName('svc');
    await rest.create(SERVICES, service(reuse, { type: 'NodePort', ports: [{ port: 80, nodePort: 30078 }] }));
    assert.equal((await rest.del(`${SERVICES}/${reuse}`)).status, 200);
    const again = await rest.create(SERVICES, service(uniqueName('svc'), { type: 'NodePort', ports: [{ port: 80, nodePort: 30078 }] }));
    assert.equal(again.spec.ports[0].nodePort, 30078);
  });
});

describe('dry-run', () => {
  test("reports kube's placeholder values and reserves nothing", async () => {
    const before = await ipAddressNames();
    const dry = await rest.post(
      `${SERVICES}?dryRun=All`,
      service(uniqueName('svc'), {
        type: 'NodePort',
        ports: [
          { name: 'a', port: 80 },
          { name: 'b', port: 81 },
        ],
      }),
    );
    assert.equal(dry.status, 201, dry.text);
    assert.equal(dry.body.spec.clusterIP, '10.96.0.0');
    assert.deepEqual(
      dry.body.spec.ports.map((p: { nodePort: number }) => p.nodePort),
      [32769, 32770],
    );
    const requested = await rest.post(
      `${SERVICES}?dryRun=All`,
      service(uniqueName('svc'), { clusterIP: '10.96.205.5', type: 'NodePort', ports: [{ port: 80, nodePort: 30079 }] }),
    );
    assert.equal(requested.status, 201, requested.text);
    assert.equal(requested.body.spec.clusterIP, '10.96.205.5');
    assert.deepEqual(await ipAddressNames(), before);
    // The same requested values are still free for a real create.
    const real = await rest.create(
      SERVICES,
      service(uniqueName('svc'), { clusterIP: '10.96.205.5', type: 'NodePort', ports: [{ port: 80, nodePort: 30079 }] }),
    );
    assert.equal(real.spec.clusterIP, '10.96.205.5');
    assert.equal(real.spec.ports[0].nodePort, 30079);
    // A dry-run checks the range (in the dry-run allocator's words) and taken node ports.
    const name = uniqueName('svc');
    const outside = await rest.post(`${SERVICES}?dryRun=All`, service(name, { clusterIP: '1.2.3.4' }));
    assertStatus(
      outside,
      422,
      'Invalid',
      invalidMessage(
        name,
        'spec.clusterIPs',
        'Invalid value: ["1.2.3.4"]: failed to allocate IP 1.2.3.4: the provided IP (1.2.3.4) is not in the valid range. The range of valid IPs is 10.96.0.0/12',
      ),
    );
    const taken = await rest.post(`${SERVICES}?dryRun=All`, service(name, { type: 'NodePort', ports: [{ port: 80, nodePort: 30079 }] }));
    assertStatus(taken, 422, 'Invalid', invalidMessage(name, 'spec.ports[0].nodePort', 'Invalid value: 30079: provided port is already allocated'));
  });

  test('a dry-run delete releases nothing', async () => {
    const name = uniqueName('svc');
    const created = await rest.create(SERVICES, service(name, {}));
    const dry = await rest.del(`${SERVICES}/${name}?dryRun=All`);
    assert.equal(dry.status, 200, dry.text);
    assert.ok((await ipAddressNames()).includes(created.spec.clusterIP));
  });
});

describe('bootstrap', () => {
  test('the kubernetes Service holds the first address; a loopback server announces no Endpoints (as kube)', async () => {
    const port = Number(new URL(srv.url).port);
    const svc = await rest.get(`${SERVICES}/kubernetes`);
    assert.equal(svc.status, 200, svc.text);
    assert.equal(svc.body.spec.clusterIP, '10.96.0.1');
    assert.deepEqual(svc.body.spec.ports, [{ name: 'https', protocol: 'TCP', port: 443, targetPort: port }]);
    const ip = await rest.get(`${IP_ADDRESSES}/10.96.0.1`);
    assert.equal(ip.status, 200, ip.text);
    assert.deepEqual(ip.body.spec.parentRef, { resource: 'services', namespace: 'default', name: 'kubernetes' });
    const cidr = await rest.get('/apis/networking.k8s.io/v1/servicecidrs/kubernetes');
    assert.equal(cidr.status, 200, cidr.text);
    assert.deepEqual(cidr.body.spec.cidrs, ['10.96.0.0/12']);
    assert.deepEqual(
      cidr.body.status.conditions.map((c: Record<string, string>) => [c.type, c.status, c.reason, c.message]),
      [['Ready', 'True', '', 'Kubernetes default Service CIDR is ready']],
    );
    assert.equal((await rest.get('/api/v1/namespaces/default/endpoints/kubernetes')).status, 404);
    assert.equal((await rest.get('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes')).status, 404);
    // Nobody else may have the kubernetes Service's address.
    const name = uniqueName('svc');
    const taken = await rest.post(SERVICES, service(name, { clusterIP: '10.96.0.1' }));
    assertStatus(taken, 422, 'Invalid', /provided IP is already allocated/);
  });

  test('with --advertise-address, the Endpoints and EndpointSlice point at that address and the server port', async () => {
    const advertised = await startTestServer({ advertiseAddress: '192.0.2.10' });
    try {
      const r = restFor(advertised.url);
      const port = Number(new URL(advertised.url).port);
      const endpoints = await r.get('/api/v1/namespaces/default/endpoints/kubernetes');
      assert.equal(endpoints.status, 200, endpoints.text);
      assert.deepEqual(endpoints.body.metadata.labels, { 'endpointslice.kubernetes.io/skip-mirror': 'true' });
      assert.deepEqual(endpoints.body.subsets, [{ addresses: [{ ip: '192.0.2.10' }], ports: [{ name: 'https', port, protocol: 'TCP' }] }]);
      const slice = await r.get('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes');
      assert.equal(slice.status, 200, slice.text);
      assert.equal(slice.body.addressType, 'IPv4');
      assert.deepEqual(slice.body.metadata.labels, { 'kubernetes.io/service-name': 'kubernetes' });
      assert.deepEqual(slice.body.endpoints, [{ addresses: ['192.0.2.10'], conditions: { ready: true } }]);
      assert.deepEqual(slice.body.ports, [{ name: 'https', protocol: 'TCP', port }]);
    } finally {
      await advertised.stop();
    }
  });
});

describe('configured ranges', () => {
  let small: TestServer;
  before(async () => {
    small = await startTestServer({ serviceClusterIPRange: parseIpRange('10.0.0.0/29'), serviceNodePortRange: parsePortRange('31000-31002') });
  });
  after(async () => {
    await small?.stop();
  });

  test('every address and port of a small range is handed out once, then the range is full (500)', async () => {
    const r = restFor(small.url);
    const ips = new Set<string>();
    for (let i = 0; i < 5; i++) ips.add((await r.create(SERVICES, service(`full-${i}`, {}))).spec.clusterIP);
    assert.deepEqual([...ips].sort(), ['10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5', '10.0.0.6']);
    const full = await r.post(SERVICES, service('full-5', {}));
    assertStatus(full, 500, 'InternalError', 'Internal error occurred: failed to allocate a serviceIP for Service "full-5": range is full');
    assert.equal((await r.del(`${SERVICES}/full-0`)).status, 200);
    const ports = new Set<number>();
    for (let i = 0; i < 3; i++) {
      await r.del(`${SERVICES}/full-${i + 1}`);
      ports.add((await r.create(SERVICES, service(`np-${i}`, { type: 'NodePort' }))).spec.ports[0].nodePort);
    }
    assert.deepEqual([...ports].sort(), [31000, 31001, 31002]);
    await r.del(`${SERVICES}/full-4`);
    const noPort = await r.post(SERVICES, service('np-3', { type: 'NodePort' }));
    assertStatus(noPort, 500, 'InternalError', 'Internal error occurred: failed to allocate a nodePort: range is full');
    const cidr = await r.get('/apis/networking.k8s.io/v1/servicecidrs/kubernetes');
    assert.deepEqual(cidr.body.spec.cidrs, ['10.0.0.0/29']);
  });
});
