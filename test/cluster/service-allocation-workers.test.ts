/**
 * Service allocation across the workers of `capstan --storage=redis --workers 2`: Services created
 * concurrently through both workers from small ranges (so random starting points collide often) all
 * get distinct cluster IPs and node ports, each backed by exactly one IPAddress object; deleting them
 * gives every address back.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createNamespace, fresh, startRedisWorkers, workersThatServed, type RedisWorkers } from '../helpers/redis-workers.js';

let env: RedisWorkers;

before(async () => {
  env = await startRedisWorkers({
    args: ['--log-level', 'info', '--service-cluster-ip-range', '10.0.0.0/26', '--service-node-port-range', '30000-30059'],
  });
});

after(async () => {
  await env?.stop();
});

const COUNT = 40;

test('40 Services created at once through 2 workers get distinct cluster IPs and node ports', async () => {
  const ns = 'svc-alloc';
  await createNamespace(env.url, ns);
  const base = `/api/v1/namespaces/${ns}/services`;
  const created = await Promise.all(
    Array.from({ length: COUNT }, (_, i) =>
      fresh(env.url, base, {
        method: 'POST',
        body: { apiVersion: 'v1', kind: 'Service', metadata: { name: `s-${i}` }, spec: { type: 'NodePort', ports: [{ port: 80 }] } },
      }),
    ),
  );
  for (const r of created) assert.equal(r.status, 201, r.text);
  assert.equal(workersThatServed(env.cap.stderr(), base).length, 2, 'both workers served creates');
  const ips = created.map((r) => r.body.spec.clusterIP as string);
  const ports = created.map((r) => r.body.spec.ports[0].nodePort as number);
  assert.equal(new Set(ips).size, COUNT, `cluster IPs ${ips.join(' ')}`);
  assert.equal(new Set(ports).size, COUNT, `node ports ${ports.join(' ')}`);
  for (const ip of ips) assert.match(ip, /^10\.0\.0\.(\d+)$/);
  assert.ok(!ips.includes('10.0.0.1'), 'the kubernetes Service keeps its address');
  for (const p of ports) assert.ok(p >= 30000 && p <= 30059, String(p));

  const listed = await fresh(env.url, '/apis/networking.k8s.io/v1/ipaddresses');
  assert.equal(listed.status, 200, listed.text);
  const owners = new Map<string, string>();
  for (const item of listed.body.items as Array<{ metadata: { name: string }; spec: { parentRef: { namespace: string; name: string } } }>) {
    owners.set(item.metadata.name, `${item.spec.parentRef.namespace}/${item.spec.parentRef.name}`);
  }
  for (const r of created) assert.equal(owners.get(r.body.spec.clusterIP), `${ns}/${r.body.metadata.name}`);

  const deleted = await Promise.all(created.map((r) => fresh(env.url, `${base}/${r.body.metadata.name}`, { method: 'DELETE' })));
  for (const r of deleted) assert.equal(r.status, 200, r.text);
  const after = await fresh(env.url, '/apis/networking.k8s.io/v1/ipaddresses');
  assert.deepEqual(
    (after.body.items as Array<{ metadata: { name: string } }>).map((i) => i.metadata.name),
    ['10.0.0.1'],
  );
  // Every node port is free again: the whole range can be requested.
  const again = await Promise.all(
    ports.map((p, i) =>
      fresh(env.url, base, {
        method: 'POST',
        body: { apiVersion: 'v1', kind: 'Service', metadata: { name: `again-${i}` }, spec: { type: 'NodePort', ports: [{ port: 80, nodePort: p }] } },
      }),
    ),
  );
  for (const r of again) assert.equal(r.status, 201, r.text);
});
