/**
 * The objects kube-apiserver 1.36 itself creates at start (its post-start hooks), as the reference
 * lists them: system PriorityClasses, the API priority-and-fairness FlowSchemas and
 * PriorityLevelConfigurations (kept reconciled as kube's ensurer keeps them, with the Dangling
 * condition its APF controller writes), and the legacy token tracking ConfigMap.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { openWatch } from '../helpers/watch-client.js';
import { kubectlFor } from './kubectl.js';
import { restFor, type Rest } from './rest.js';
import { ensureFlowControlConfiguration } from '../../src/controllers/flowcontrol-bootstrap.js';
import { ApiserverIdentityLease, apiserverIdentity } from '../../src/controllers/apiserver-identity-lease.js';
import { hostname } from 'node:os';
import { ensureLocalApiServices } from '../../src/server/bootstrap-apiservices.js';

/** `kubectl get priorityclasses,flowschemas,prioritylevelconfigurations -o name` on kube-apiserver 1.36. */
const REFERENCE_NAMES = [
  'priorityclass.scheduling.k8s.io/system-cluster-critical',
  'priorityclass.scheduling.k8s.io/system-node-critical',
  'flowschema.flowcontrol.apiserver.k8s.io/catch-all',
  'flowschema.flowcontrol.apiserver.k8s.io/exempt',
  'flowschema.flowcontrol.apiserver.k8s.io/global-default',
  'flowschema.flowcontrol.apiserver.k8s.io/kube-controller-manager',
  'flowschema.flowcontrol.apiserver.k8s.io/kube-scheduler',
  'flowschema.flowcontrol.apiserver.k8s.io/kube-system-service-accounts',
  'flowschema.flowcontrol.apiserver.k8s.io/probes',
  'flowschema.flowcontrol.apiserver.k8s.io/service-accounts',
  'flowschema.flowcontrol.apiserver.k8s.io/system-leader-election',
  'flowschema.flowcontrol.apiserver.k8s.io/system-node-high',
  'flowschema.flowcontrol.apiserver.k8s.io/system-nodes',
  'prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/catch-all',
  'prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/exempt',
  'prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/global-default',
  'prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/leader-election',
  'prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/node-high',
  'prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/system',
  'prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/workload-high',
  'prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/workload-low',
];

/** `kubectl get apiservices -o name` on kube-apiserver 1.36 serving its default versions (no CRDs). */
const REFERENCE_API_SERVICES = [
  'apiservice.apiregistration.k8s.io/v1.',
  'apiservice.apiregistration.k8s.io/v1.admissionregistration.k8s.io',
  'apiservice.apiregistration.k8s.io/v1.apiextensions.k8s.io',
  'apiservice.apiregistration.k8s.io/v1.apps',
  'apiservice.apiregistration.k8s.io/v1.authentication.k8s.io',
  'apiservice.apiregistration.k8s.io/v1.authorization.k8s.io',
  'apiservice.apiregistration.k8s.io/v1.autoscaling',
  'apiservice.apiregistration.k8s.io/v1.batch',
  'apiservice.apiregistration.k8s.io/v1.certificates.k8s.io',
  'apiservice.apiregistration.k8s.io/v1.coordination.k8s.io',
  'apiservice.apiregistration.k8s.io/v1.discovery.k8s.io',
  'apiservice.apiregistration.k8s.io/v1.events.k8s.io',
  'apiservice.apiregistration.k8s.io/v1.flowcontrol.apiserver.k8s.io',
  'apiservice.apiregistration.k8s.io/v1.networking.k8s.io',
  'apiservice.apiregistration.k8s.io/v1.node.k8s.io',
  'apiservice.apiregistration.k8s.io/v1.policy',
  'apiservice.apiregistration.k8s.io/v1.rbac.authorization.k8s.io',
  'apiservice.apiregistration.k8s.io/v1.resource.k8s.io',
  'apiservice.apiregistration.k8s.io/v1.scheduling.k8s.io',
  'apiservice.apiregistration.k8s.io/v1.storage.k8s.io',
  'apiservice.apiregistration.k8s.io/v2.autoscaling',
];

const FC = '/apis/flowcontrol.apiserver.k8s.io/v1';

/** Waits on a watch of FlowSchema `name` for a Dangling condition with `status`; returns the condition. */
async function waitForDangling(url: string, name: string, status: string): Promise<Record<string, unknown>> {
  const watch = await openWatch(url, `${FC}/flowschemas?watch=true&fieldSelector=metadata.name%3D${name}`);
  try {
    const dangling = (o: any): Record<string, unknown> | undefined =>
      (o?.status?.conditions ?? []).find((c: any) => c.type === 'Dangling' && c.status === status);
    const events = await watch.waitFor((es) => es.some((e) => dangling(e.object) !== undefined), 10_000);
    const found = events.map((e) => dangling(e.object)).find((c) => c !== undefined);
    assert.ok(found);
    return found;
  } finally {
    watch.close();
  }
}

describe('bootstrap objects', () => {
  let srv: TestServer;
  let rest: Rest;
  before(async () => {
    srv = await startTestServer();
    rest = restFor(srv.url);
  });
  after(async () => {
    await srv?.stop();
  });

  test('kubectl lists the PriorityClasses, FlowSchemas and PriorityLevelConfigurations the reference lists', async () => {
    const out = await kubectlFor(srv.kubeconfig).ok(['get', 'priorityclasses,flowschemas,prioritylevelconfigurations', '-o', 'name']);
    assert.deepEqual(out.trim().split('\n'), REFERENCE_NAMES);
  });

  test("APF objects carry kube's specs, the autoupdate annotation, and FlowSchemas a Dangling=False condition", async () => {
    const levels = (await rest.get(`${FC}/prioritylevelconfigurations`)).body.items;
    for (const pl of levels) {
      assert.deepEqual(pl.metadata.annotations, { 'apf.kubernetes.io/autoupdate-spec': 'true' }, pl.metadata.name);
      assert.equal(pl.metadata.generation, 1);
    }
    const byName = (items: any[], name: string): any => items.find((i) => i.metadata.name === name);
    assert.deepEqual(byName(levels, 'exempt').spec, { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } });
    assert.deepEqual(byName(levels, 'workload-low').spec, {
      type: 'Limited',
      limited: {
        nominalConcurrencyShares: 100,
        lendablePercent: 90,
        limitResponse: { type: 'Queue', queuing: { queues: 128, handSize: 6, queueLengthLimit: 50 } },
      },
    });
    assert.deepEqual(byName(levels, 'catch-all').spec.limited.nominalConcurrencyShares, 5);
    for (const fs of ['exempt', 'catch-all', 'probes', 'global-default']) {
      const condition = await waitForDangling(srv.url, fs, 'False');
      const plName = (await rest.get(`${FC}/flowschemas/${fs}`)).body.spec.priorityLevelConfiguration.name;
      assert.equal(condition.reason, 'Found');
      assert.equal(condition.message, `This FlowSchema references the PriorityLevelConfiguration object named "${plName}" and it exists`);
    }
    const schemas = (await rest.get(`${FC}/flowschemas`)).body.items;
    assert.equal(byName(schemas, 'system-leader-election').spec.matchingPrecedence, 100);
    assert.deepEqual(byName(schemas, 'probes').spec.rules, [
      {
        subjects: [
          { kind: 'Group', group: { name: 'system:unauthenticated' } },
          { kind: 'Group', group: { name: 'system:authenticated' } },
        ],
        nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }],
      },
    ]);
  });

  test('a FlowSchema naming a missing priority level dangles until the level exists', async () => {
    const fs = {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name: 'mine' },
      spec: { priorityLevelConfiguration: { name: 'later' }, matchingPrecedence: 5000 },
    };
    await rest.create(`${FC}/flowschemas`, fs);
    const dangling = await waitForDangling(srv.url, 'mine', 'True');
    assert.equal(dangling.reason, 'NotFound');
    assert.equal(dangling.message, 'This FlowSchema references the PriorityLevelConfiguration object named "later" but there is no such object');
    await rest.create(`${FC}/prioritylevelconfigurations`, {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'PriorityLevelConfiguration',
      metadata: { name: 'later' },
      spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Reject' } } },
    });
    const found = await waitForDangling(srv.url, 'mine', 'False');
    assert.equal(found.reason, 'Found');
  });

  test("kube's ensurer rules: mandatory specs come back, opted-out suggestions stay, missing ones return, retired ones go", async () => {
    const storage = srv.server.context.storage;
    const exempt = (await rest.get(`${FC}/prioritylevelconfigurations/exempt`)).body;
    const edited = await rest.put(`${FC}/prioritylevelconfigurations/exempt`, {
      ...exempt,
      spec: { type: 'Exempt', exempt: { nominalConcurrencyShares: 7, lendablePercent: 0 } },
    });
    assert.equal(edited.status, 200, edited.text);
    const system = (await rest.get(`${FC}/prioritylevelconfigurations/system`)).body;
    const optedOut = await rest.put(`${FC}/prioritylevelconfigurations/system`, {
      ...system,
      metadata: { ...system.metadata, annotations: { 'apf.kubernetes.io/autoupdate-spec': 'false' } },
      spec: { ...system.spec, limited: { ...system.spec.limited, nominalConcurrencyShares: 33 } },
    });
    assert.equal(optedOut.status, 200, optedOut.text);
    assert.equal((await rest.del(`${FC}/flowschemas/probes`)).status, 200);
    await rest.create(`${FC}/flowschemas`, {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name: 'retired', annotations: { 'apf.kubernetes.io/autoupdate-spec': 'true' } },
      spec: { priorityLevelConfiguration: { name: 'global-default' }, matchingPrecedence: 7000 },
    });

    await ensureFlowControlConfiguration(storage);

    const restored = (await rest.get(`${FC}/prioritylevelconfigurations/exempt`)).body;
    assert.equal(restored.spec.exempt.nominalConcurrencyShares, 0);
    assert.equal(restored.metadata.annotations['apf.kubernetes.io/autoupdate-spec'], 'true');
    const kept = (await rest.get(`${FC}/prioritylevelconfigurations/system`)).body;
    assert.equal(kept.spec.limited.nominalConcurrencyShares, 33);
    assert.equal(kept.metadata.annotations['apf.kubernetes.io/autoupdate-spec'], 'false');
    assert.equal((await rest.get(`${FC}/flowschemas/probes`)).status, 200);
    assert.equal((await rest.get(`${FC}/flowschemas/retired`)).status, 404);
  });

  test('kube-system holds the legacy service account token tracking ConfigMap', async () => {
    const cm = await rest.get('/api/v1/namespaces/kube-system/configmaps/kube-apiserver-legacy-service-account-token-tracking');
    assert.equal(cm.status, 200, cm.text);
    assert.match(cm.body.data.since, /^\d{4}-\d\d-\d\d$/);
    assert.equal(Object.keys(cm.body.data).length, 1);
  });

  test("the apiserver identity Lease has kube's name for this host, labels and duration, and is renewed", async () => {
    // The reference kube-apiserver, on host "vm", names its lease so.
    assert.equal(apiserverIdentity('vm'), 'apiserver-wlv32tlttr4jl3gtroqexyxapa');
    const name = apiserverIdentity(hostname());
    const lease = (await rest.get(`/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/${name}`)).body;
    assert.deepEqual(lease.metadata.labels, { 'apiserver.kubernetes.io/identity': 'kube-apiserver', 'kubernetes.io/hostname': hostname() });
    assert.equal(lease.metadata.annotations['kubernetes.io/peer-advertise-address'], `127.0.0.1:${new URL(srv.url).port}`);
    assert.equal(lease.spec.leaseDurationSeconds, 3600);
    assert.ok(lease.spec.holderIdentity.startsWith(`${name}_`));
    assert.match(lease.spec.renewTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

    // Another apiserver on host "peer" renews its own lease; a lease nobody renews is collected.
    const storage = srv.server.context.storage;
    const stale = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'apiserver-gone', labels: { 'apiserver.kubernetes.io/identity': 'kube-apiserver' } },
      spec: { holderIdentity: 'apiserver-gone_x', leaseDurationSeconds: 1, renewTime: '2020-01-01T00:00:00.000000Z' },
    };
    await rest.create('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases', stale);
    const peerName = apiserverIdentity('peer');
    const watch = await openWatch(srv.url, `/apis/coordination.k8s.io/v1/namespaces/kube-system/leases?watch=true&fieldSelector=metadata.name%3D${peerName}`);
    const peer = new ApiserverIdentityLease(storage, { peerAddress: '10.0.0.2:6443', hostname: 'peer', renewMs: 50 });
    try {
      await peer.start();
      const events = await watch.waitFor((es) => es.filter((e) => e.type === 'MODIFIED').length >= 2, 10_000);
      const times = events.map((e) => e.object.spec.renewTime as string);
      assert.ok(times[times.length - 1] > times[0], 'renewTime moves forward');
      assert.equal((await rest.get('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/apiserver-gone')).status, 404);
    } finally {
      peer.stop();
      watch.close();
    }
  });

  test("every served local group version has its onstart APIService with kube's priorities", async () => {
    const out = await kubectlFor(srv.kubeconfig).ok(['get', 'apiservices', '-o', 'name']);
    assert.deepEqual(out.trim().split('\n'), REFERENCE_API_SERVICES);
    const AS = '/apis/apiregistration.k8s.io/v1/apiservices';
    const core = (await rest.get(`${AS}/v1.`)).body;
    assert.deepEqual(core.spec, { version: 'v1', groupPriorityMinimum: 18000, versionPriority: 1 });
    assert.deepEqual(core.metadata.labels, { 'kube-aggregator.kubernetes.io/automanaged': 'onstart' });
    assert.deepEqual(
      core.status.conditions.map((c: Record<string, unknown>) => [c.type, c.status, c.reason, c.message]),
      [['Available', 'True', 'Local', 'Local APIServices are always available']],
    );
    assert.deepEqual((await rest.get(`${AS}/v2.autoscaling`)).body.spec, {
      group: 'autoscaling',
      version: 'v2',
      groupPriorityMinimum: 17500,
      versionPriority: 30,
    });

    // At the next start: an edited spec is put back, a version no longer served loses its APIService.
    const apps = (await rest.get(`${AS}/v1.apps`)).body;
    assert.equal((await rest.put(`${AS}/v1.apps`, { ...apps, spec: { ...apps.spec, versionPriority: 1 } })).status, 200);
    await rest.create(AS, {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: 'v1beta1.batch', labels: { 'kube-aggregator.kubernetes.io/automanaged': 'onstart' } },
      spec: { group: 'batch', version: 'v1beta1', groupPriorityMinimum: 17400, versionPriority: 9 },
    });
    await ensureLocalApiServices(srv.server.context.storage, srv.server.context.catalog);
    assert.equal((await rest.get(`${AS}/v1.apps`)).body.spec.versionPriority, 15);
    assert.equal((await rest.get(`${AS}/v1beta1.batch`)).status, 404);
  });
});
