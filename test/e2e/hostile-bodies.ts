/**
 * Hand-written create bodies that users and careless programs get wrong, for the ten namespaced kinds
 * the client decoding test lists (Deployments, ReplicaSets, StatefulSets, DaemonSets, Pods, Services,
 * Jobs, CronJobs, ConfigMaps, Secrets): wrong JSON types, out-of-range and non-integer numbers
 * (including literals JSON.stringify cannot write, such as `1e400`), nulls, bad enums, bad base64,
 * bad quantities and int-or-strings, unknown fields, non-string labels. Each body is JSON text, built
 * from a valid object of the kind with one change, so a refusal is about that change.
 */

/** A kind the client decoding test covers, with where it is created. */
export interface KindInfo {
  kind: string;
  apiVersion: string;
  resource: string;
}

/** The kinds, in the order the Go and Python checkers report them. */
export const KINDS: readonly KindInfo[] = [
  { kind: 'Deployment', apiVersion: 'apps/v1', resource: 'deployments' },
  { kind: 'ReplicaSet', apiVersion: 'apps/v1', resource: 'replicasets' },
  { kind: 'StatefulSet', apiVersion: 'apps/v1', resource: 'statefulsets' },
  { kind: 'DaemonSet', apiVersion: 'apps/v1', resource: 'daemonsets' },
  { kind: 'Pod', apiVersion: 'v1', resource: 'pods' },
  { kind: 'Service', apiVersion: 'v1', resource: 'services' },
  { kind: 'Job', apiVersion: 'batch/v1', resource: 'jobs' },
  { kind: 'CronJob', apiVersion: 'batch/v1', resource: 'cronjobs' },
  { kind: 'ConfigMap', apiVersion: 'v1', resource: 'configmaps' },
  { kind: 'Secret', apiVersion: 'v1', resource: 'secrets' },
];

/** One hostile create: the kind, what is wrong, and the body as JSON text (metadata.name is NAME_PLACEHOLDER). */
export interface HostileBody {
  kind: string;
  label: string;
  body: string;
}

/** Stands for the object's name in every body; the test replaces it with a unique name. */
export const NAME_PLACEHOLDER = '@@NAME@@';

type Obj = Record<string, unknown>;

/** Marks a number written literally (`raw('1e400')`), for values JSON.stringify cannot produce. */
const raw = (literal: string): string => `@@RAW:${literal}@@`;
/** Marks a field to remove. */
const DELETE = Symbol('delete');

const container = (): Obj => ({ name: 'c', image: 'nginx' });
const podSpec = (): Obj => ({ containers: [container()] });
const template = (extra: Obj = {}): Obj => ({ metadata: { labels: { app: 'x' } }, spec: { ...podSpec(), ...extra } });

/** A valid object of each kind (before the one change). */
function valid(kind: string): Obj {
  const info = KINDS.find((k) => k.kind === kind);
  if (info === undefined) throw new Error(`no kind ${kind}`);
  const head = { apiVersion: info.apiVersion, kind, metadata: { name: NAME_PLACEHOLDER } };
  switch (kind) {
    case 'Deployment':
    case 'ReplicaSet':
    case 'DaemonSet':
      return { ...head, spec: { selector: { matchLabels: { app: 'x' } }, template: template() } };
    case 'StatefulSet':
      return { ...head, spec: { serviceName: 's', selector: { matchLabels: { app: 'x' } }, template: template() } };
    case 'Pod':
      return { ...head, spec: podSpec() };
    case 'Service':
      return { ...head, spec: { selector: { app: 'x' }, ports: [{ port: 80 }] } };
    case 'Job':
      return { ...head, spec: { template: { spec: { ...podSpec(), restartPolicy: 'Never' } } } };
    case 'CronJob':
      return { ...head, spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: { spec: { ...podSpec(), restartPolicy: 'Never' } } } } } };
    case 'ConfigMap':
      return { ...head, data: { a: 'b' } };
    case 'Secret':
      return { ...head, data: { a: 'YQ==' } };
    default:
      throw new Error(`no valid ${kind}`);
  }
}

/** `obj` with the value at a dotted path (numbers index arrays) replaced, or removed for DELETE. */
function withValue(obj: Obj, path: string, value: unknown): Obj {
  const copy = structuredClone(obj);
  const keys = path.split('.');
  let at: any = copy;
  for (const key of keys.slice(0, -1)) {
    if (at[key] === undefined || at[key] === null || typeof at[key] !== 'object') at[key] = {};
    at = at[key];
  }
  const last = keys[keys.length - 1];
  if (value === DELETE) delete at[last];
  else at[last] = value;
  return copy;
}

/** JSON text with every raw() marker replaced by its literal. */
function rawLiterals(json: string): string {
  return json.replace(/"@@RAW:([^@"]*)@@"/g, '$1');
}

function text(obj: Obj): string {
  return rawLiterals(JSON.stringify(obj));
}

/** Paths inside each workload kind's pod template. */
const POD_SPEC_PATH: Record<string, string> = {
  Deployment: 'spec.template.spec',
  ReplicaSet: 'spec.template.spec',
  StatefulSet: 'spec.template.spec',
  DaemonSet: 'spec.template.spec',
  Pod: 'spec',
  Job: 'spec.template.spec',
  CronJob: 'spec.jobTemplate.spec.template.spec',
};

/** [kind, path, values]: one body per value. */
const CHANGES: Array<[string, string, unknown[]]> = [
  // Deployment: counts of the wrong type, range or form.
  ['Deployment', 'spec.replicas', ['abc', -3, raw('1e400'), 1.5, null, raw('1e2'), raw('1.0'), 3000000000, true, {}, '3', raw('-0')]],
  ['Deployment', 'spec.minReadySeconds', ['5', raw('99999999999999999999')]],
  [
    'Deployment',
    'spec.strategy',
    [
      { type: 'RollingUpdate', rollingUpdate: { maxSurge: true } },
      { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1.5 } },
      { type: 'RollingUpdate', rollingUpdate: { maxSurge: {} } },
      { type: 'RollingUpdate', rollingUpdate: { maxSurge: 'abc' } },
      { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: [1] } },
      { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: null } },
      { type: 'Sometimes' },
      'RollingUpdate',
    ],
  ],
  ['Deployment', 'spec.template.spec.containers', [[null], {}, 'c', [], null, [{ name: 'c' }]]],
  ['Deployment', 'spec.template.metadata.labels', [{ app: 'x', n: 1 }, { app: 1 }]],
  ['Deployment', 'spec.bogus', [1]],
  ['Deployment', 'spec.template.spec.containers.0.bogus', [true]],
  ['Deployment', 'metadata.labels', [{ a: 1 }, { a: true }, { a: null }, { a: {} }, ['a'], 'a=b']],
  ['Deployment', 'metadata.annotations', [{ a: 1 }, { a: null }, { a: '\ud800' }, { a: ['x'] }]],
  ['Deployment', 'metadata.creationTimestamp', ['yesterday', 5]],
  ['Deployment', 'metadata.generation', ['1']],
  ['Deployment', 'spec', [null, 'x', []]],
  ['Deployment', 'status', [{ replicas: 'x' }, { conditions: [{ type: 'Available', status: 'True', lastUpdateTime: 'bad' }] }, 'x']],
  // Quantities and int-or-strings inside pod templates of every workload kind.
  [
    'Deployment',
    'spec.template.spec.containers.0.resources',
    [
      { requests: { cpu: 'abc' } },
      { requests: { cpu: 1.5 } },
      { requests: { cpu: '1e400' } },
      { requests: { cpu: true } },
      { requests: { cpu: raw('1e400') } },
      { limits: { memory: '9999999999999999999999999Ei' } },
      { requests: { cpu: '-1' } },
      { requests: { cpu: '' } },
      { requests: { cpu: null } },
      { requests: ['cpu'] },
      { limits: { memory: '1.5.5Gi' } },
      { requests: { memory: '0.1m' } },
      // Texts the quantity pattern admits that Go's parser refuses (a bad suffix or exponent), and extreme exponents.
      { requests: { cpu: '1e' } },
      { requests: { cpu: '1ee' } },
      { requests: { cpu: '1i' } },
      { requests: { cpu: '1Ki5' } },
      { requests: { cpu: '1m5' } },
      { requests: { cpu: '1e99999999999999999999' } },
      { requests: { cpu: '1e1000000000' } },
      { requests: { cpu: '1e-1000000000' } },
      { requests: { cpu: '1e4294967296' } },
      { requests: { cpu: '.' } },
      { requests: { cpu: '+' } },
      { requests: { cpu: ' 1 ' } },
      { requests: { cpu: raw('1e1000000000') } },
    ],
  ],
  ['Deployment', 'spec.template.spec.containers.0.ports', [[{ containerPort: 'http' }], [{ containerPort: 70000 }], [{ containerPort: 80, protocol: 'ICMP' }]]],
  [
    'Deployment',
    'spec.template.spec.containers.0.readinessProbe',
    [
      { httpGet: { port: 1.5 } },
      { httpGet: { port: {} } },
      { httpGet: { port: 'ht tp' } },
      { tcpSocket: { port: -1 } },
      { tcpSocket: { port: raw('1e400') } },
      { httpGet: { port: null } },
      { httpGet: { port: '8080' } },
    ],
  ],
  ['ReplicaSet', 'spec.replicas', ['abc', 1.5]],
  ['ReplicaSet', 'spec.template.spec.containers.0.image', [DELETE, 5]],
  ['StatefulSet', 'spec.serviceName', [3]],
  [
    'StatefulSet',
    'spec.volumeClaimTemplates',
    [
      [{ metadata: { name: 'd' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: 'lots' } } } }],
      [{ metadata: { name: 'd' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: 1.5 } } } }],
    ],
  ],
  ['StatefulSet', 'spec.podManagementPolicy', [7, 'Whenever']],
  [
    'StatefulSet',
    'spec.updateStrategy',
    [
      { type: 'RollingUpdate', rollingUpdate: { partition: 'x' } },
      { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 'x%' } },
    ],
  ],
  [
    'DaemonSet',
    'spec.updateStrategy',
    [
      { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1.5 } },
      { type: 'RollingUpdate', rollingUpdate: { maxSurge: 'abc' } },
      { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: true } },
    ],
  ],
  // Pods.
  ['Pod', 'spec', [{}, null, { containers: {} }]],
  ['Pod', 'spec.containers.0.image', [DELETE, '']],
  ['Pod', 'spec.restartPolicy', ['Sometimes', 1]],
  [
    'Pod',
    'spec.containers.0.env',
    [[{ name: 'A', value: 5 }], [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 1 } } }], [null], [{ name: 'A', value: null }]],
  ],
  ['Pod', 'spec.activeDeadlineSeconds', ['10', -5, 0, raw('1e400')]],
  ['Pod', 'spec.containers.0.args', [['a', null], 'sh', [1]]],
  [
    'Pod',
    'spec.terminationGracePeriodSeconds',
    [
      raw('1e400'),
      raw('99999999999999999999'),
      -1,
      raw('9223372036854775807'),
      raw('9223372036854775808'),
      raw('9007199254740993'),
      raw('9.223372036854775807e18'),
      raw('1E1'),
    ],
  ],
  ['Job', 'spec.activeDeadlineSeconds', [raw('9223372036854775807'), raw('9007199254740993'), raw('-9223372036854775808')]],
  ['CronJob', 'spec.startingDeadlineSeconds', [raw('9223372036854775807'), raw('9223372036854775806')]],
  ['Deployment', 'spec.progressDeadlineSeconds', [raw('2147483647'), raw('2147483648'), raw('-2147483648')]],
  ['Pod', 'spec.nodeSelector', [{ a: 1 }, { a: null }]],
  [
    'Pod',
    'spec.tolerations',
    [[{ key: 'a', tolerationSeconds: 'x' }], [{ key: 'a', effect: 'NoExecute', tolerationSeconds: raw('1e400') }], [{ key: 'a', operator: 'Maybe' }]],
  ],
  ['Pod', 'spec.securityContext', [{ runAsUser: -1 }, { runAsUser: 'root' }, { runAsUser: raw('99999999999999999999') }, { fsGroup: 1.5 }]],
  ['Pod', 'spec.containers.0.name', ['', 5, 'Not_A_Name']],
  ['Pod', 'spec.containers.0.livenessProbe', [{ exec: { command: 'ls' } }, { periodSeconds: 'often' }]],
  ['Pod', 'spec.priority', ['high']],
  ['Pod', 'spec.hostname', [5]],
  ['Pod', 'status', [{ phase: 5 }, { startTime: 'now' }, { phase: 'Dancing' }]],
  ['Pod', 'spec.containers.0.resources', [{ limits: { cpu: '1e400' } }, { requests: { 'example.com/gpu': 1.5 } }, { claims: 'x' }]],
  // Fields the Python client's models require (they raise when one is missing).
  [
    'Pod',
    'spec.containers.0.env',
    [[{ value: 'x' }], [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'c' } } }], [{ name: 'A', valueFrom: { fieldRef: {} } }]],
  ],
  ['Pod', 'spec.containers.0.ports', [[{ name: 'http' }], [{}]]],
  ['Pod', 'spec.containers.0.volumeMounts', [[{ name: 'v' }], [{ mountPath: '/v' }]]],
  ['Pod', 'spec.volumes', [[{ emptyDir: {} }], [{ name: 'v', configMap: { name: 'c', items: [{ key: 'k' }] } }]]],
  [
    'Pod',
    'spec.topologySpreadConstraints',
    [[{ maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule' }], [{ topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' }]],
  ],
  [
    'Pod',
    'spec.affinity',
    [
      { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: {} }] } },
      { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: {} } },
      { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'a' }] }] } } },
    ],
  ],
  ['Pod', 'spec.hostAliases', [[{ hostnames: ['a'] }]]],
  ['Pod', 'spec.readinessGates', [[{}]]],
  ['Pod', 'spec.securityContext', [{ sysctls: [{ name: 'net.core.somaxconn' }] }]],
  ['Pod', 'spec.containers.0.livenessProbe', [{ httpGet: { path: '/' } }, { tcpSocket: {} }, { grpc: {} }]],
  ['Pod', 'spec.containers.0.lifecycle', [{ preStop: { httpGet: {} } }, { postStart: { sleep: {} } }]],
  ['Pod', 'spec.containers.0.resources', [{ claims: [{}] }]],
  ['Pod', 'spec.ephemeralContainers', [[{ image: 'x' }]]],
  ['Pod', 'spec.initContainers', [[{ image: 'x' }]]],
  ['Deployment', 'spec.selector', [DELETE, {}, { matchExpressions: [{ key: 'app' }] }, { matchExpressions: [{ operator: 'Exists' }] }]],
  ['Deployment', 'spec.template', [DELETE]],
  ['ReplicaSet', 'spec.selector', [DELETE, null]],
  ['StatefulSet', 'spec.selector', [DELETE, null]],
  ['DaemonSet', 'spec.selector', [DELETE, null]],
  [
    'Pod',
    'spec.affinity',
    [
      { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: null } } },
      { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1 }] } },
      { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1 }] } },
    ],
  ],
  ['Deployment', 'spec.template.spec.affinity', [{ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: {} } }]],
  ['StatefulSet', 'spec.volumeClaimTemplates', [[{ metadata: { name: 'd' } }]]],
  ['Service', 'spec.ports', [[{ targetPort: 80 }], [{ name: 'a', port: 80 }, { port: 81 }]]],
  ['Job', 'spec.template', [DELETE]],
  ['CronJob', 'spec.schedule', [DELETE]],
  ['CronJob', 'spec.jobTemplate', [DELETE]],
  [
    'ConfigMap',
    'metadata.ownerReferences',
    [[{ kind: 'X', name: 'n', uid: 'u' }], [{ apiVersion: 'v1', name: 'n', uid: 'u' }], [{ apiVersion: 'v1', kind: 'X', uid: 'u' }]],
  ],
  // Services.
  ['Service', 'spec.ports.0.port', ['http', 0, 70000, 1.5, raw('1e400'), null]],
  ['Service', 'spec.ports.0.targetPort', [1.5, {}, -1, '', true, 70000, 'http', 'not a port name']],
  ['Service', 'spec.ports.0.nodePort', ['x']],
  ['Service', 'spec.ports.0.protocol', ['ICMP', 6]],
  ['Service', 'spec.type', ['Weird', 5]],
  ['Service', 'spec.clusterIP', ['abc', 5]],
  ['Service', 'spec.ports', [null, {}, [], [null]]],
  ['Service', 'spec.selector', [{ app: 1 }, ['app']]],
  ['Service', 'spec.sessionAffinity', ['Sticky']],
  ['Service', 'spec.sessionAffinityConfig', [{ clientIP: { timeoutSeconds: 'x' } }]],
  ['Service', 'spec.externalIPs', [[1], ['not an ip']]],
  ['Service', 'spec.ipFamilies', [['IPv7']]],
  ['Service', 'spec.bogus', [{}]],
  // Jobs and CronJobs.
  ['Job', 'spec.parallelism', ['x', -1, 1.5]],
  ['Job', 'spec.completions', [raw('1e400'), '2']],
  ['Job', 'spec.backoffLimit', [-1, '6']],
  ['Job', 'spec.template.spec.restartPolicy', ['Always', 'Sometimes']],
  ['Job', 'spec.activeDeadlineSeconds', [0, 'x']],
  ['Job', 'spec.completionMode', ['Sometimes']],
  ['Job', 'spec.template.spec.containers.0.image', [DELETE]],
  ['Job', 'spec.manualSelector', ['yes']],
  ['Job', 'spec.ttlSecondsAfterFinished', ['1h']],
  ['CronJob', 'spec.schedule', [5, 'not a schedule', '']],
  ['CronJob', 'spec.suspend', ['yes']],
  ['CronJob', 'spec.startingDeadlineSeconds', ['x']],
  ['CronJob', 'spec.concurrencyPolicy', ['Sometimes']],
  ['CronJob', 'spec.timeZone', [5, 'Mars/Base']],
  ['CronJob', 'spec.successfulJobsHistoryLimit', [-1]],
  ['CronJob', 'spec.jobTemplate.spec.parallelism', ['x']],
  // Metadata every kind shares, some of it stored as sent (managedFields).
  [
    'ConfigMap',
    'metadata.managedFields',
    [
      [{ manager: 'm', operation: 'Update', apiVersion: 'v1', time: '2024-13-45T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: {} }],
      [{ manager: 'm', operation: 'Update', apiVersion: 'v1', time: '2024-02-30T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: {} }],
      [{ manager: 'm', operation: 'Update', apiVersion: 'v1', time: '2024-01-01T25:61:00Z', fieldsType: 'FieldsV1', fieldsV1: {} }],
      [{ manager: 'm', operation: 'Update', apiVersion: 'v1', time: '2024-01-01T00:00:00+25:00', fieldsType: 'FieldsV1', fieldsV1: {} }],
      [{ manager: 'm', operation: 'Update', apiVersion: 'v1', time: 5, fieldsType: 'FieldsV1', fieldsV1: {} }],
      [{ manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: 'x' }],
      [{ manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: [1] }],
      // Year 0 is left out: Go accepts it and kube-apiserver stores it, but the Python client cannot parse it.
      ...[
        '2024-01-01T00:00:00.123456789123Z',
        '2024-01-01T00:00:00+24:00',
        '2024-01-01T00:00:00+23:60',
        '2024-01-01t00:00:00Z',
        '2024-01-01T00:00:00z',
        '9999-12-31T23:59:59-23:59',
        '2024-02-29T00:00:00Z',
        '2023-02-29T00:00:00Z',
        '2024-01-01T23:59:60Z',
        '2024-01-01T00:00:00.5Z',
      ].map((time) => [{ manager: 'm', operation: 'Update', apiVersion: 'v1', time, fieldsType: 'FieldsV1', fieldsV1: {} }]),
      [{ manager: 'm', operation: 5 }],
      [null],
      {},
    ],
  ],
  [
    'ConfigMap',
    'metadata.ownerReferences',
    [
      [{ apiVersion: 'v1', kind: 'X', name: 'n', uid: 'u', controller: 'yes' }],
      [{ apiVersion: 'v1', kind: 'X', name: 'n' }],
      [null],
      [{ apiVersion: 'v1', kind: 'X', name: 'n', uid: 'u', blockOwnerDeletion: 1 }],
    ],
  ],
  ['ConfigMap', 'metadata.finalizers', [[1], ['a/b'], [null], ['not a finalizer!']]],
  ['ConfigMap', 'metadata.deletionGracePeriodSeconds', ['x', raw('1e400'), 30]],
  ['ConfigMap', 'metadata.deletionTimestamp', ['bad', '2024-13-45T00:00:00Z', '2024-01-01T00:00:00Z']],
  ['ConfigMap', 'metadata.creationTimestamp', ['2024-13-45T00:00:00Z', null]],
  ['ConfigMap', 'metadata.uid', [5, 'not-a-uid']],
  ['ConfigMap', 'metadata.resourceVersion', [5, 'abc']],
  ['ConfigMap', 'metadata.generation', [raw('1e400'), -1, 1.5]],
  ['Pod', 'metadata.annotations', [{ 'kubernetes.io/config.mirror': 'x' }]],
  [
    'Pod',
    'spec.containers.0.resources',
    [
      { requests: { cpu: '1' }, limits: { cpu: '1e-1000000000' } },
      { requests: { cpu: '1e1000000000' }, limits: { cpu: '1' } },
    ],
  ],
  // ConfigMaps and Secrets.
  ['ConfigMap', 'data', [[], { a: 1 }, { a: null }, 'x', { a: '\ud800' }, { 'bad key!': 'x' }, { '': 'x' }]],
  ['ConfigMap', 'binaryData', [{ a: 'not base64!' }, { a: 5 }, { a: null }, { a: 'YQ' }]],
  ['ConfigMap', 'immutable', ['yes']],
  ['Secret', 'data', [{ a: 'not base64!' }, { a: 5 }, { a: null }, [], { a: 'YQ' }, { a: '' }]],
  ['Secret', 'stringData', [{ a: 5 }, { a: null }, 'x']],
  ['Secret', 'type', [5, 'kubernetes.io/tls']],
  ['Secret', 'immutable', ['true']],
];

/** Every hostile body, in a fixed order. */
export function hostileBodies(): HostileBody[] {
  const bodies: HostileBody[] = [];
  for (const [kind, path, values] of CHANGES) {
    for (const value of values) {
      const shown = value === DELETE ? '(removed)' : rawLiterals(JSON.stringify(value));
      bodies.push({ kind, label: `${path} = ${shown}`, body: text(withValue(valid(kind), path, value)) });
    }
  }
  // Pod-template problems in every workload kind, not only Deployments.
  for (const kind of ['ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob']) {
    const spec = POD_SPEC_PATH[kind];
    for (const [path, value] of [
      ['containers.0.resources', { requests: { cpu: 'abc' } }],
      ['containers.0.resources', { requests: { cpu: 1.5 } }],
      ['containers.0.ports', [{ containerPort: 'http' }]],
      ['containers.0.readinessProbe', { httpGet: { port: 1.5 } }],
      ['containers', [null]],
    ] as const) {
      bodies.push({ kind, label: `${spec}.${path} = ${JSON.stringify(value)}`, body: text(withValue(valid(kind), `${spec}.${path}`, value)) });
    }
  }
  return bodies;
}
