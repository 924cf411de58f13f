/**
 * Row logic of the server-side Table printers: pod status reasons, ready counts and restarts,
 * workloads, service ports, node status and roles, events, human durations, quantities, and how
 * toTable picks a printer.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { humanDuration, formatLabelSelector, labelSelectorString } from '../../src/strategy/printers/format.js';
import { podStatusCells } from '../../src/strategy/printers/pod.js';
import { nodeRoles, nodeStatus, serviceExternalIP, servicePorts, formatEndpoints, quotaCells } from '../../src/strategy/printers/core.js';
import { eventCells } from '../../src/strategy/printers/events.js';
import { jobCells } from '../../src/strategy/printers/batch.js';
import { canonicalQuantity } from '../../src/api/quantity.js';
import { formatHPAMetrics } from '../../src/strategy/printers/autoscaling.js';
import { csrCondition } from '../../src/strategy/printers/access.js';
import { controllerName } from '../../src/strategy/printers/apps.js';
import { printerOf } from '../../src/strategy/strategies.js';
import { ResourceCatalog } from '../../src/catalog/resource-catalog.js';
import { toTable } from '../../src/codec/representations.js';

type Obj = Record<string, unknown>;

const NOW = Date.parse('2025-06-01T12:00:00Z');
const ago = (ms: number): string => new Date(NOW - ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

function pod(spec: Obj, status: Obj, metadata: Obj = {}): Obj {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', creationTimestamp: ago(10 * MIN), ...metadata }, spec, status };
}

const twoContainers = {
  containers: [
    { name: 'a', image: 'a' },
    { name: 'b', image: 'b' },
  ],
};
const running = (name: string, extra: Obj = {}): Obj => ({ name, ready: true, restartCount: 0, state: { running: { startedAt: ago(MIN) } }, ...extra });

describe('humanDuration (kube duration.HumanDuration)', () => {
  const cases: Array<[number, string]> = [
    [-2000, '<invalid>'],
    [-1500, '0s'],
    [0, '0s'],
    [59_000, '59s'],
    [119_999, '119s'],
    [2 * MIN, '2m'],
    [2 * MIN + 5000, '2m5s'],
    [9 * MIN + 59_000, '9m59s'],
    [10 * MIN, '10m'],
    [179 * MIN, '179m'],
    [3 * HOUR, '3h'],
    [3 * HOUR + 5 * MIN, '3h5m'],
    [8 * HOUR, '8h'],
    [47 * HOUR, '47h'],
    [48 * HOUR, '2d'],
    [50 * HOUR, '2d2h'],
    [8 * DAY, '8d'],
    [729 * DAY, '729d'],
    [730 * DAY, '2y'],
    [760 * DAY, '2y30d'],
    [8 * 365 * DAY, '8y'],
    [20 * 365 * DAY, '20y'],
  ];
  for (const [ms, want] of cases) test(`${ms}ms -> ${want}`, () => assert.equal(humanDuration(ms), want));
});

describe('pod Ready / Status / Restarts', () => {
  test('running containers count as ready; a waiting reason wins the status', () => {
    const p = pod(twoContainers, {
      phase: 'Running',
      containerStatuses: [running('a', { restartCount: 3 }), { name: 'b', ready: false, restartCount: 2, state: { waiting: { reason: 'CrashLoopBackOff' } } }],
    });
    assert.deepEqual(podStatusCells(p, NOW), { ready: '1/2', status: 'CrashLoopBackOff', restarts: '5' });
  });

  test('restarts carry the age of the last termination', () => {
    const p = pod(
      { containers: [{ name: 'a' }] },
      {
        phase: 'Running',
        containerStatuses: [running('a', { restartCount: 4, lastState: { terminated: { exitCode: 1, finishedAt: ago(5 * MIN) } } })],
      },
    );
    assert.deepEqual(podStatusCells(p, NOW), { ready: '1/1', status: 'Running', restarts: '4 (5m ago)' });
  });

  test('pending pod without statuses, and a pod with no phase at all', () => {
    assert.deepEqual(podStatusCells(pod(twoContainers, { phase: 'Pending' }), NOW), { ready: '0/2', status: 'Pending', restarts: '0' });
    assert.equal(podStatusCells(pod(twoContainers, { phase: 'Pending', reason: 'Evicted' }), NOW).status, 'Evicted');
  });

  test('init containers: progress, waiting reason, failures by exit code, signal and reason', () => {
    const spec = { ...twoContainers, initContainers: [{ name: 'i1' }, { name: 'i2' }] };
    const done = { name: 'i1', state: { terminated: { exitCode: 0, reason: 'Completed' } } };
    assert.equal(
      podStatusCells(pod(spec, { phase: 'Pending', initContainerStatuses: [done, { name: 'i2', state: { running: {} } }] }), NOW).status,
      'Init:1/2',
    );
    assert.equal(
      podStatusCells(pod(spec, { phase: 'Pending', initContainerStatuses: [{ name: 'i1', state: { waiting: { reason: 'PodInitializing' } } }] }), NOW).status,
      'Init:0/2',
    );
    assert.equal(
      podStatusCells(pod(spec, { phase: 'Pending', initContainerStatuses: [{ name: 'i1', state: { waiting: { reason: 'ErrImagePull' } } }] }), NOW).status,
      'Init:ErrImagePull',
    );
    assert.equal(
      podStatusCells(pod(spec, { phase: 'Pending', initContainerStatuses: [{ name: 'i1', state: { terminated: { exitCode: 2 } } }] }), NOW).status,
      'Init:ExitCode:2',
    );
    assert.equal(
      podStatusCells(pod(spec, { phase: 'Pending', initContainerStatuses: [{ name: 'i1', state: { terminated: { exitCode: 137, signal: 9 } } }] }), NOW).status,
      'Init:Signal:9',
    );
    assert.equal(
      podStatusCells(pod(spec, { phase: 'Failed', initContainerStatuses: [{ name: 'i1', state: { terminated: { exitCode: 1, reason: 'Error' } } }] }), NOW)
        .status,
      'Init:Error',
    );
  });

  test('init container restarts count while initializing', () => {
    const spec = { containers: [{ name: 'a' }], initContainers: [{ name: 'i1' }] };
    const p = pod(spec, { phase: 'Pending', initContainerStatuses: [{ name: 'i1', restartCount: 7, state: { waiting: { reason: 'CrashLoopBackOff' } } }] });
    assert.deepEqual(podStatusCells(p, NOW), { ready: '0/1', status: 'Init:CrashLoopBackOff', restarts: '7' });
  });

  test('restartable (sidecar) init containers count towards ready and total', () => {
    const spec = { containers: [{ name: 'a' }], initContainers: [{ name: 'side', restartPolicy: 'Always' }] };
    const p = pod(spec, {
      phase: 'Running',
      conditions: [
        { type: 'Initialized', status: 'True' },
        { type: 'Ready', status: 'True' },
      ],
      initContainerStatuses: [{ name: 'side', started: true, ready: true, restartCount: 1, state: { running: {} } }],
      containerStatuses: [running('a')],
    });
    assert.deepEqual(podStatusCells(p, NOW), { ready: '2/2', status: 'Running', restarts: '1' });
  });

  test('terminated containers: reason, exit code, signal; Completed with a running container', () => {
    const one = { containers: [{ name: 'a' }] };
    assert.equal(
      podStatusCells(pod(one, { phase: 'Failed', containerStatuses: [{ name: 'a', state: { terminated: { exitCode: 3 } } }] }), NOW).status,
      'ExitCode:3',
    );
    assert.equal(
      podStatusCells(pod(one, { phase: 'Failed', containerStatuses: [{ name: 'a', state: { terminated: { exitCode: 0, signal: 15 } } }] }), NOW).status,
      'Signal:15',
    );
    const completed = pod(one, { phase: 'Succeeded', containerStatuses: [{ name: 'a', state: { terminated: { exitCode: 0, reason: 'Completed' } } }] });
    assert.deepEqual(podStatusCells(completed, NOW), {
      ready: '0/1',
      status: 'Completed',
      restarts: '0',
      conditions: [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }],
    });
    const mixed = (ready: string): Obj =>
      pod(twoContainers, {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: ready }],
        containerStatuses: [running('a'), { name: 'b', state: { terminated: { exitCode: 0, reason: 'Completed' } } }],
      });
    assert.equal(podStatusCells(mixed('True'), NOW).status, 'Running');
    assert.equal(podStatusCells(mixed('False'), NOW).status, 'NotReady');
  });

  test('deletion: Terminating unless terminal; Unknown for lost nodes; SchedulingGated', () => {
    const deleting = { deletionTimestamp: ago(MIN) };
    assert.equal(podStatusCells(pod(twoContainers, { phase: 'Running' }, deleting), NOW).status, 'Terminating');
    assert.equal(podStatusCells(pod(twoContainers, { phase: 'Succeeded' }, deleting), NOW).status, 'Succeeded');
    assert.equal(podStatusCells(pod(twoContainers, { phase: 'Running', reason: 'NodeLost' }, deleting), NOW).status, 'Unknown');
    const gated = pod(twoContainers, { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] });
    assert.equal(podStatusCells(gated, NOW).status, 'SchedulingGated');
    assert.deepEqual(podStatusCells(pod(twoContainers, { phase: 'Failed' }), NOW).conditions?.[0]?.reason, 'Failed');
  });

  test('full row including wide cells', () => {
    const p = pod(
      { ...twoContainers, nodeName: 'n1', readinessGates: [{ conditionType: 'x' }, { conditionType: 'y' }] },
      {
        phase: 'Running',
        podIPs: [{ ip: '10.0.0.5' }],
        podIP: '10.0.0.5',
        conditions: [
          { type: 'x', status: 'True' },
          { type: 'y', status: 'False' },
        ],
        containerStatuses: [running('a'), running('b')],
      },
    );
    const table = toTable([p], { resourceVersion: '5' }, 'None', printerOf({ group: '', resource: 'pods' }), { now: NOW });
    assert.deepEqual((table.rows as Obj[])[0], { cells: ['p', '2/2', 'Running', '0', '10m', '10.0.0.5', 'n1', '<none>', '1/2'] });
  });
});

describe('workloads', () => {
  test('deployment: Ready n/m with replicas defaulting to 1, selector string', () => {
    const printer = printerOf({ group: 'apps', resource: 'deployments' });
    assert.ok(printer);
    const d = {
      metadata: { name: 'web', creationTimestamp: ago(3 * HOUR) },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['b', 'a'] }] },
        template: {
          spec: {
            containers: [
              { name: 'nginx', image: 'nginx:1' },
              { name: 'side', image: 'busybox' },
            ],
          },
        },
      },
      status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 },
    };
    assert.deepEqual(printer.row(d, NOW).cells, ['web', '2/3', 3, 2, '3h', 'nginx,side', 'nginx:1,busybox', 'app=web,tier in (a,b)']);
    assert.deepEqual(
      printer.columns.map((c) => [c.name, c.priority]),
      [
        ['Name', 0],
        ['Ready', 0],
        ['Up-to-date', 0],
        ['Available', 0],
        ['Age', 0],
        ['Containers', 1],
        ['Images', 1],
        ['Selector', 1],
      ],
    );
    assert.equal(printer.row({ metadata: { name: 'x' }, spec: {} }, NOW).cells[1], '0/1');
  });

  test('replica sets, stateful sets and daemon sets', () => {
    const rs = printerOf({ group: 'apps', resource: 'replicasets' });
    assert.deepEqual(rs?.row({ metadata: { name: 'r' }, spec: { replicas: 2, selector: {} }, status: { replicas: 2, readyReplicas: 1 } }, NOW).cells, [
      'r',
      2,
      2,
      1,
      '<unknown>',
      '',
      '',
      '<none>',
    ]);
    const ss = printerOf({ group: 'apps', resource: 'statefulsets' });
    assert.deepEqual(ss?.row({ metadata: { name: 's' }, spec: { replicas: 3 }, status: { readyReplicas: 3 } }, NOW).cells.slice(0, 2), ['s', '3/3']);
    const ds = printerOf({ group: 'apps', resource: 'daemonsets' });
    const cells = ds?.row(
      {
        metadata: { name: 'd' },
        spec: { template: { spec: { nodeSelector: { 'kubernetes.io/os': 'linux' } } } },
        status: { desiredNumberScheduled: 3, currentNumberScheduled: 3, numberReady: 2, updatedNumberScheduled: 3, numberAvailable: 2 },
      },
      NOW,
    ).cells;
    assert.deepEqual(cells?.slice(0, 7), ['d', 3, 3, 2, 3, 2, 'kubernetes.io/os=linux']);
  });

  test('label selectors format like kube (sorted, operators, <none>, <error>)', () => {
    assert.equal(
      labelSelectorString({
        matchLabels: { b: '2', a: '1' },
        matchExpressions: [
          { key: 'c', operator: 'Exists' },
          { key: 'aa', operator: 'DoesNotExist' },
          { key: 'z', operator: 'NotIn', values: ['y', 'x'] },
        ],
      }),
      'a=1,!aa,b=2,c,z notin (x,y)',
    );
    assert.equal(formatLabelSelector(undefined), '<none>');
    assert.equal(formatLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Bogus' }] }), '<error>');
  });

  test('jobs: status, completions, duration; controller revisions name their owner', () => {
    const job = (spec: Obj, status: Obj, metadata: Obj = {}): Obj => ({ metadata: { name: 'j', ...metadata }, spec, status });
    assert.deepEqual(jobCells(job({ completions: 3, parallelism: 3 }, { succeeded: 1, startTime: ago(90_000) }), NOW), {
      status: 'Running',
      completions: '1/3',
      duration: '90s',
    });
    assert.deepEqual(jobCells(job({ parallelism: 4 }, { succeeded: 2 }), NOW), { status: 'Running', completions: '2/1 of 4', duration: '' });
    assert.deepEqual(
      jobCells(
        job({ completions: 1 }, { succeeded: 1, startTime: ago(10 * MIN), completionTime: ago(5 * MIN), conditions: [{ type: 'Complete', status: 'True' }] }),
        NOW,
      ),
      { status: 'Complete', completions: '1/1', duration: '5m' },
    );
    assert.equal(jobCells(job({}, { conditions: [{ type: 'Failed', status: 'True' }] }), NOW).status, 'Failed');
    assert.equal(jobCells(job({}, { conditions: [{ type: 'Suspended', status: 'True' }] }), NOW).status, 'Suspended');
    assert.equal(jobCells(job({}, {}, { deletionTimestamp: ago(1000) }), NOW).status, 'Terminating');
    assert.equal(
      controllerName({ metadata: { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'ds', controller: true }] } }),
      'daemonset.apps/ds',
    );
    assert.equal(controllerName({ metadata: {} }), '<none>');
  });
});

describe('services, endpoints, quotas', () => {
  test('ports: port/protocol, with node ports, TCP by default', () => {
    assert.equal(
      servicePorts([{ port: 80, protocol: 'TCP' }, { port: 443, nodePort: 30443, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }, { port: 8080 }]),
      '80/TCP,443:30443/TCP,53/UDP,8080/TCP',
    );
  });

  test('external IP by service type', () => {
    assert.equal(serviceExternalIP({ spec: { type: 'ClusterIP' } }), '<none>');
    assert.equal(serviceExternalIP({ spec: { type: 'NodePort', externalIPs: ['1.2.3.4', '5.6.7.8'] } }), '1.2.3.4,5.6.7.8');
    assert.equal(serviceExternalIP({ spec: { type: 'LoadBalancer' } }), '<pending>');
    assert.equal(
      serviceExternalIP({ spec: { type: 'LoadBalancer' }, status: { loadBalancer: { ingress: [{ ip: '9.9.9.9' }, { hostname: 'lb.example.com' }] } } }),
      '9.9.9.9,lb.example.com',
    );
    assert.equal(
      serviceExternalIP({ spec: { type: 'LoadBalancer', externalIPs: ['1.1.1.1'] }, status: { loadBalancer: { ingress: [{ ip: '9.9.9.9' }] } } }),
      '9.9.9.9,1.1.1.1',
    );
    assert.equal(serviceExternalIP({ spec: { type: 'ExternalName', externalName: 'db.example.com' } }), 'db.example.com');
  });

  test('service row', () => {
    const svc = {
      metadata: { name: 's', creationTimestamp: ago(DAY * 3) },
      spec: {
        type: 'NodePort',
        clusterIP: '10.0.0.1',
        clusterIPs: ['10.0.0.1'],
        ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }],
        selector: { app: 'x' },
      },
    };
    assert.deepEqual(printerOf({ group: '', resource: 'services' })?.row(svc, NOW).cells, [
      's',
      'NodePort',
      '10.0.0.1',
      '<none>',
      '80:30080/TCP',
      '3d',
      'app=x',
    ]);
    assert.deepEqual(
      printerOf({ group: '', resource: 'services' })
        ?.row({ metadata: { name: 'h' }, spec: { clusterIP: 'None' } }, NOW)
        .cells.slice(1, 5),
      ['ClusterIP', 'None', '<none>', '<none>'],
    );
  });

  test('endpoints: three addresses then "+ N more..."', () => {
    const ep = { subsets: [{ addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], ports: [{ port: 80 }, { port: 443 }] }] };
    assert.equal(formatEndpoints(ep), '10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more...');
    assert.equal(formatEndpoints({ subsets: [{ addresses: [{ ip: 'fd00::1' }], ports: [{ port: 80 }] }] }), '[fd00::1]:80');
    assert.equal(formatEndpoints({}), '<none>');
  });

  test('resource quota: sorted used/hard pairs, limits apart', () => {
    assert.deepEqual(
      quotaCells({ status: { hard: { pods: '10', 'limits.cpu': '2', 'requests.memory': '1024Mi' }, used: { pods: '1', 'requests.memory': '512Mi' } } }),
      ['pods: 1/10, requests.memory: 512Mi/1Gi', 'limits.cpu: 0/2'],
    );
  });
});

describe('nodes', () => {
  const node = (conditions: Obj[], labels: Record<string, string> = {}, unschedulable = false): Obj => ({
    metadata: { name: 'n', labels },
    spec: { unschedulable },
    status: { conditions },
  });

  test('status from the Ready condition, plus SchedulingDisabled', () => {
    assert.equal(
      nodeStatus(
        node([
          { type: 'MemoryPressure', status: 'False' },
          { type: 'Ready', status: 'True' },
        ]),
      ),
      'Ready',
    );
    assert.equal(nodeStatus(node([{ type: 'Ready', status: 'False' }])), 'NotReady');
    assert.equal(nodeStatus(node([{ type: 'Ready', status: 'Unknown' }])), 'NotReady');
    assert.equal(nodeStatus(node([])), 'Unknown');
    assert.equal(nodeStatus(node([{ type: 'Ready', status: 'True' }], {}, true)), 'Ready,SchedulingDisabled');
  });

  test('roles from node-role labels and kubernetes.io/role, sorted', () => {
    assert.equal(
      nodeRoles(node([], { 'node-role.kubernetes.io/control-plane': '', 'kubernetes.io/role': 'worker', 'node-role.kubernetes.io/': 'x' })),
      'control-plane,worker',
    );
    assert.equal(nodeRoles(node([], { app: 'x' })), '<none>');
  });

  test('wide cells', () => {
    const n = {
      metadata: { name: 'n1' },
      status: {
        conditions: [{ type: 'Ready', status: 'True' }],
        addresses: [
          { type: 'Hostname', address: 'n1' },
          { type: 'InternalIP', address: '10.1.1.1' },
        ],
        nodeInfo: { kubeletVersion: 'v1.36.0', osImage: 'Debian' },
      },
    };
    assert.deepEqual(printerOf({ group: '', resource: 'nodes' })?.row(n, NOW).cells, [
      'n1',
      'Ready',
      '<none>',
      '<unknown>',
      'v1.36.0',
      '10.1.1.1',
      '<none>',
      'Debian',
      '<unknown>',
      '<unknown>',
    ]);
  });
});

describe('events', () => {
  test('core/v1 event: last/first seen, object, count', () => {
    const ev = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'p.123' },
      involvedObject: { kind: 'Pod', name: 'p', fieldPath: 'spec.containers{a}' },
      type: 'Warning',
      reason: 'BackOff',
      message: ' Back-off restarting \n',
      count: 3,
      firstTimestamp: ago(10 * MIN),
      lastTimestamp: ago(2 * MIN),
      source: { component: 'kubelet', host: 'n1' },
    };
    assert.deepEqual(eventCells(ev, NOW), ['2m', 'Warning', 'BackOff', 'pod/p', 'spec.containers{a}', 'kubelet, n1', 'Back-off restarting', '10m', 3, 'p.123']);
  });

  test('series and events.k8s.io/v1 fields; singleton count 1; kind-only object', () => {
    const ev = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'e' },
      regarding: { kind: 'Node' },
      note: 'hello',
      type: 'Normal',
      reason: 'Started',
      eventTime: '2025-06-01T11:00:00.000000Z',
      reportingController: 'ctrl',
      reportingInstance: 'i-1',
    };
    assert.deepEqual(eventCells(ev, NOW), ['60m', 'Normal', 'Started', 'node', '', 'ctrl, i-1', 'hello', '60m', 1, 'e']);
    const series = { ...ev, series: { count: 7, lastObservedTime: '2025-06-01T11:59:30.000000Z' } };
    assert.deepEqual(eventCells(series, NOW).slice(0, 1).concat(eventCells(series, NOW).slice(8, 9)), ['30s', 7]);
    const columns = printerOf({ group: '', resource: 'events' })
      ?.columns.filter((c) => c.priority === 0)
      .map((c) => c.name);
    assert.deepEqual(columns, ['Last Seen', 'Type', 'Reason', 'Object', 'Message']);
  });
});

describe('other printers', () => {
  test('quantities print in canonical form', () => {
    const cases: Array<[string, string]> = [
      ['1024Mi', '1Gi'],
      ['1.5Gi', '1536Mi'],
      ['10Gi', '10Gi'],
      ['0.5', '500m'],
      ['1000', '1k'],
      ['1500', '1500'],
      ['100m', '100m'],
      ['1e3', '1e3'],
      ['12e2', '1200'],
      ['0.5Ki', '512'],
      ['1Ki', '1Ki'],
      ['0', '0'],
      ['2000000', '2M'],
      ['1n', '1n'],
      ['0.0000000001', '1n'],
      ['bogus', 'bogus'],
    ];
    for (const [input, want] of cases) assert.equal(canonicalQuantity(input), want, input);
  });

  test('HPA targets in v2 and v1 form', () => {
    const v2 = {
      spec: {
        metrics: [
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
          { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '1024Mi' } } },
          { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } },
        ],
      },
      status: { currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 40 } } }] },
    };
    assert.equal(formatHPAMetrics(v2), 'cpu: 40%/80%, memory: <unknown>/1Gi + 1 more...');
    assert.equal(formatHPAMetrics({ spec: { targetCPUUtilizationPercentage: 50 }, status: { currentCPUUtilizationPercentage: 12 } }), 'cpu: 12%/50%');
    assert.equal(formatHPAMetrics({ spec: {} }), 'cpu: <unknown>/80%');
  });

  test('CSR condition and misc rows', () => {
    assert.equal(csrCondition({ status: {} }), 'Pending');
    assert.equal(csrCondition({ status: { conditions: [{ type: 'Approved' }], certificate: 'Zm9v' } }), 'Approved,Issued');
    assert.equal(csrCondition({ status: { conditions: [{ type: 'Approved' }, { type: 'Denied' }, { type: 'Failed' }] } }), 'Denied,Failed');
    assert.deepEqual(
      printerOf({ group: '', resource: 'configmaps' })?.row({ metadata: { name: 'c' }, data: { a: '1', b: '2' }, binaryData: { c: 'AA==' } }, NOW).cells,
      ['c', 3, '<unknown>'],
    );
    assert.deepEqual(
      printerOf({ group: '', resource: 'secrets' })?.row({ metadata: { name: 's' }, type: 'kubernetes.io/tls', data: { a: '', b: '' } }, NOW).cells,
      ['s', 'kubernetes.io/tls', 2, '<unknown>'],
    );
    assert.deepEqual(
      printerOf({ group: 'storage.k8s.io', resource: 'storageclasses' })?.row(
        { metadata: { name: 'std', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }, provisioner: 'p' },
        NOW,
      ).cells,
      ['std (default)', 'p', 'Delete', 'Immediate', false, '<unknown>'],
    );
    assert.deepEqual(
      printerOf({ group: 'policy', resource: 'poddisruptionbudgets' })?.row(
        { metadata: { name: 'b' }, spec: { minAvailable: '50%' }, status: { disruptionsAllowed: 1 } },
        NOW,
      ).cells,
      ['b', '50%', 'N/A', 1, '<unknown>'],
    );
    assert.deepEqual(
      printerOf({ group: 'rbac.authorization.k8s.io', resource: 'rolebindings' })?.row(
        {
          metadata: { name: 'rb' },
          roleRef: { kind: 'Role', name: 'r' },
          subjects: [
            { kind: 'User', name: 'u1' },
            { kind: 'User', name: 'u2' },
            { kind: 'ServiceAccount', namespace: 'ns', name: 'sa' },
          ],
        },
        NOW,
      ).cells,
      ['rb', 'Role/r', '<unknown>', 'u1, u2', '', 'ns/sa'],
    );
    assert.deepEqual(
      printerOf({ group: 'batch', resource: 'cronjobs' })
        ?.row({ metadata: { name: 'cj' }, spec: { schedule: '*/5 * * * *', suspend: false }, status: { lastScheduleTime: ago(5 * MIN), active: [{}] } }, NOW)
        .cells.slice(0, 6),
      ['cj', '*/5 * * * *', '<none>', 'False', 1, '5m'],
    );
    assert.deepEqual(
      printerOf({ group: 'apiregistration.k8s.io', resource: 'apiservices' })
        ?.row(
          {
            metadata: { name: 'v1.x' },
            spec: { service: { namespace: 'ns', name: 'svc' } },
            status: { conditions: [{ type: 'Available', status: 'False', reason: 'MissingEndpoints' }] },
          },
          NOW,
        )
        .cells.slice(0, 3),
      ['v1.x', 'ns/svc', 'False (MissingEndpoints)'],
    );
  });

  test('admission configurations and policies print their counts and references', () => {
    const group = 'admissionregistration.k8s.io';
    const webhooks = { metadata: { name: 'w' }, webhooks: [{ name: 'a.x.io' }, { name: 'b.x.io' }] };
    for (const resource of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) {
      const printer = printerOf({ group, resource });
      assert.deepEqual(
        printer?.columns.map((c) => c.name),
        ['Name', 'Webhooks', 'Age'],
        resource,
      );
      assert.deepEqual(printer?.row(webhooks, NOW).cells.slice(0, 2), ['w', 2]);
    }
    const vap = printerOf({ group, resource: 'validatingadmissionpolicies' });
    assert.deepEqual(
      vap?.columns.map((c) => c.name),
      ['Name', 'Validations', 'ParamKind', 'Age'],
    );
    assert.deepEqual(
      vap?.row({ metadata: { name: 'p' }, spec: { validations: [{}], paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } } }, NOW).cells.slice(0, 3),
      ['p', 1, 'v1/ConfigMap'],
    );
    assert.deepEqual(
      printerOf({ group, resource: 'mutatingadmissionpolicies' })?.columns.map((c) => c.name),
      ['Name', 'Mutations', 'ParamKind', 'Age'],
    );
    for (const resource of ['validatingadmissionpolicybindings', 'mutatingadmissionpolicybindings']) {
      assert.deepEqual(
        printerOf({ group, resource })?.columns.map((c) => c.name),
        ['Name', 'PolicyName', 'ParamRef', 'Age'],
        resource,
      );
    }
  });

  test('roles, limit ranges and CRDs have no printer (default table)', () => {
    assert.equal(printerOf({ group: 'rbac.authorization.k8s.io', resource: 'roles' }), undefined);
    assert.equal(printerOf({ group: '', resource: 'limitranges' }), undefined);
    assert.equal(printerOf({ group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' }), undefined);
    let printed = 0;
    for (const info of ResourceCatalog.builtIn().all()) {
      const p = printerOf(info);
      if (p === undefined) continue;
      printed++;
      assert.equal(p.row({}, NOW).cells.length, p.columns.length, `${info.group}/${info.resource}: one cell per column`);
    }
    assert.ok(printed >= 50, `${printed} built-in resources print with their own columns`);
  });
});

describe('toTable', () => {
  const cm = (name: string): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, creationTimestamp: ago(MIN), resourceVersion: '3' }, data: {} });

  const configMaps = printerOf({ group: '', resource: 'configmaps' });

  test("prints with the kind's strategy's columns and keeps includeObject behaviour", () => {
    const t = toTable([cm('a')], { resourceVersion: '9' }, 'Metadata', configMaps, { now: NOW });
    assert.equal(t.kind, 'Table');
    assert.deepEqual(
      (t.columnDefinitions as Obj[]).map((c) => c.name),
      ['Name', 'Data', 'Age'],
    );
    assert.deepEqual(t.rows, [{ cells: ['a', 0, '60s'], object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: cm('a').metadata } }]);
    const full = toTable([cm('a')], {}, 'Object', configMaps, { now: NOW });
    assert.equal(((full.rows as Obj[])[0]?.object as Obj).kind, 'ConfigMap');
    const none = toTable([cm('a')], {}, 'None', configMaps, { now: NOW });
    assert.equal('object' in ((none.rows as Obj[])[0] ?? {}), false);
  });

  test('types without a printer get Name and Created At', () => {
    const t = toTable([{ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', creationTimestamp: '2025-01-01T00:00:00Z' } }], {}, 'None');
    assert.deepEqual(
      (t.columnDefinitions as Obj[]).map((c) => [c.name, c.type, c.format]),
      [
        ['Name', 'string', 'name'],
        ['Created At', 'date', ''],
      ],
    );
    assert.deepEqual(t.rows, [{ cells: ['w', '2025-01-01T00:00:00Z'] }]);
  });

  test('empty lists print the columns of their kind; noHeaders drops column definitions', () => {
    const t = toTable([], { resourceVersion: '1' }, 'Metadata', printerOf({ group: '', resource: 'pods' }));
    assert.deepEqual(
      (t.columnDefinitions as Obj[]).map((c) => c.name),
      ['Name', 'Ready', 'Status', 'Restarts', 'Age', 'IP', 'Node', 'Nominated Node', 'Readiness Gates'],
    );
    assert.deepEqual(t.rows, []);
    assert.equal(toTable([cm('a')], {}, 'None', undefined, { noHeaders: true }).columnDefinitions, null);
  });

  test('pod rows of finished pods carry the Completed condition; flow schemas sort by precedence', () => {
    const t = toTable([pod({ containers: [{ name: 'a' }] }, { phase: 'Succeeded' })], {}, 'None', printerOf({ group: '', resource: 'pods' }), { now: NOW });
    assert.deepEqual((t.rows as Obj[])[0]?.conditions, [
      { type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' },
    ]);
    const fs = (name: string, p: number): Obj => ({
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name },
      spec: { matchingPrecedence: p, priorityLevelConfiguration: { name: 'pl' } },
    });
    const sorted = toTable(
      [fs('b', 500), fs('a', 9000), fs('c', 500)],
      {},
      'None',
      printerOf({ group: 'flowcontrol.apiserver.k8s.io', resource: 'flowschemas' }),
      {
        now: NOW,
      },
    );
    assert.deepEqual(
      (sorted.rows as Obj[]).map((r) => (r.cells as unknown[])[0]),
      ['b', 'c', 'a'],
    );
  });
});
