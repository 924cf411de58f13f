/**
 * The pod warnings corpus: Pods and every kind with a pod template, each breaking a few of kube's
 * pod spec warnings (pkg/api/pod/warnings.go: deprecated node labels, annotations and volume plugins,
 * overlapping volume paths, duplicates, fractional byte quantities, seccomp and AppArmor annotations,
 * ports, null selectors, IP forms), created with dry run, then updates of stored objects with and
 * without a template change. scripts/capture-pod-warnings-goldens.mjs replays it on kube-apiserver
 * 1.36 into test/golden/pod-warnings/reference.json; test/e2e/pod-warnings.test.ts replays it on
 * Capstan. Each Go map (node selector keys) holds at most one warned key, as Go's order is random.
 */
import { splitWarnings } from './cr-schema-replay.js';

type Obj = Record<string, any>;
export type Send = (
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
) => Promise<{ status: number; warnings: string[]; text: string }>;

export interface ReplayResult {
  name: string;
  status: number;
  message?: string;
  warnings: string[];
}

/** The corpus's namespace (on the shared reference too). */
export const NAMESPACE = 'admextras-pw';

const json = { 'content-type': 'application/json' };
const mergePatch = { 'content-type': 'application/merge-patch+json' };
const image = 'registry.k8s.io/pause:3.10';
const c = (name: string, extra: Obj = {}): Obj => ({ name, image, ...extra });

/** Pod specs (and annotations, name) by case name. */
export const PODS: Record<string, { spec: Obj; annotations?: Obj; name?: string }> = {
  clean: { spec: { containers: [c('c')] } },
  'node-selector': { spec: { nodeSelector: { 'beta.kubernetes.io/arch': 'amd64', 'kubernetes.io/os': 'linux' }, containers: [c('c')] } },
  'node-affinity': {
    spec: {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }] },
              { matchExpressions: [{ key: 'failure-domain.beta.kubernetes.io/zone', operator: 'In', values: ['z1'] }] },
            ],
          },
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 1,
              preference: {
                matchExpressions: [
                  { key: 'node-role.kubernetes.io/master', operator: 'Exists' },
                  { key: 'zone', operator: 'In', values: ['ok', 'not ok', '-x'] },
                ],
              },
            },
          ],
        },
      },
      containers: [c('c')],
    },
  },
  'topology-spread': {
    spec: {
      topologySpreadConstraints: [
        { maxSkew: 1, topologyKey: 'failure-domain.beta.kubernetes.io/region', whenUnsatisfiable: 'DoNotSchedule' },
        { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { a: 'b' } } },
        { maxSkew: 2, topologyKey: 'zone', whenUnsatisfiable: 'ScheduleAnyway' },
      ],
      containers: [c('c')],
    },
  },
  'deprecated-annotations': {
    spec: { containers: [c('c')] },
    annotations: {
      'security.alpha.kubernetes.io/unsafe-sysctls': 'x',
      'scheduler.alpha.kubernetes.io/critical-pod': '',
      'security.alpha.kubernetes.io/sysctls': 'y',
    },
  },
  'volume-plugins-a': {
    spec: {
      volumes: [
        { name: 'git', gitRepo: { repository: 'https://example.com/r.git' } },
        { name: 'photon', photonPersistentDisk: { pdID: 'p' } },
        { name: 'gluster', glusterfs: { endpoints: 'e', path: 'p' } },
        { name: 'ceph', cephfs: { monitors: ['m:6789'] } },
        { name: 'rbd', rbd: { monitors: ['m:6789'], image: 'i' } },
      ],
      containers: [c('c')],
    },
  },
  'volume-plugins-b': {
    spec: {
      volumes: [
        { name: 'scaleio', scaleIO: { gateway: 'g', system: 's', volumeName: 'v', secretRef: { name: 's' } } },
        { name: 'flocker', flocker: { datasetName: 'd' } },
        { name: 'storageos', storageOS: { volumeName: 'v' } },
        { name: 'quobyte', quobyte: { registry: 'r:7861', volume: 'v' } },
      ],
      containers: [c('c')],
    },
  },
  'ephemeral-claim': {
    spec: {
      volumes: [
        {
          name: 'eph',
          ephemeral: {
            volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1500m' }, limits: { storage: '2.5k' } } } },
          },
        },
      ],
      containers: [c('c')],
    },
  },
  'overlapping-paths': {
    spec: {
      volumes: [
        {
          name: 'cm',
          configMap: {
            name: 'cfg',
            items: [
              { key: 'a', path: 'x' },
              { key: 'b', path: 'x/y' },
              { key: 'c', path: 'x/' },
              { key: 'd', path: 'z' },
            ],
          },
        },
        {
          name: 'sec',
          secret: {
            secretName: 'sec',
            items: [
              { key: 'a', path: 'p/q' },
              { key: 'b', path: 'p' },
            ],
          },
        },
        {
          name: 'down',
          downwardAPI: {
            items: [
              { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
              { path: 'labels', fieldRef: { fieldPath: 'metadata.annotations' } },
            ],
          },
        },
        {
          name: 'proj',
          projected: {
            sources: [
              { configMap: { name: 'cfg', items: [{ key: 'a', path: 'token' }] } },
              { secret: { name: 's', items: [{ key: 'k', path: 'token/x' }] } },
              { serviceAccountToken: { path: 'sa/token' } },
              {},
              { downwardAPI: { items: [{ path: 'token/', fieldRef: { fieldPath: 'metadata.name' } }] } },
            ],
          },
        },
      ],
      containers: [c('c')],
    },
  },
  'host-aliases': {
    spec: {
      hostAliases: [
        { ip: '10.0.0.1', hostnames: ['a'] },
        { ip: '10.0.0.1', hostnames: ['b'] },
        { ip: '2001:DB8::1', hostnames: ['c'] },
        { ip: '2001:db8:0:0:0:0:0:2', hostnames: ['d'] },
      ],
      containers: [c('c')],
    },
  },
  'host-alias-mapped': { spec: { hostAliases: [{ ip: '::ffff:10.0.0.1', hostnames: ['a'] }], containers: [c('c')] } },
  'host-alias-leading-zero': { spec: { hostAliases: [{ ip: '010.000.000.001', hostnames: ['a'] }], containers: [c('c')] } },
  'dns-nameservers': {
    spec: { dnsPolicy: 'None', dnsConfig: { nameservers: ['10.0.0.10', '2001:DB8::53', '2001:db8:0::54'] }, containers: [c('c')] },
  },
  'image-pull-secrets': {
    spec: { imagePullSecrets: [{ name: 'a' }, { name: 'b' }, { name: 'a' }, {}, { name: '' }], containers: [c('c')] },
  },
  'seccomp-annotations': {
    spec: {
      initContainers: [c('i')],
      containers: [c('a'), c('b', { securityContext: { seccompProfile: { type: 'RuntimeDefault' } } })],
    },
    annotations: {
      'seccomp.security.alpha.kubernetes.io/pod': 'runtime/default',
      'container.seccomp.security.alpha.kubernetes.io/a': 'runtime/default',
      'container.seccomp.security.alpha.kubernetes.io/b': 'runtime/default',
      'container.seccomp.security.alpha.kubernetes.io/i': 'runtime/default',
    },
  },
  'seccomp-annotation-with-field': {
    spec: { securityContext: { seccompProfile: { type: 'RuntimeDefault' } }, containers: [c('a')] },
    annotations: { 'seccomp.security.alpha.kubernetes.io/pod': 'runtime/default' },
  },
  apparmor: {
    spec: {
      securityContext: { appArmorProfile: { type: 'RuntimeDefault' } },
      containers: [c('a'), c('d', { securityContext: { appArmorProfile: { type: 'Unconfined' } } })],
    },
    annotations: {
      'container.apparmor.security.beta.kubernetes.io/a': 'runtime/default',
      'container.apparmor.security.beta.kubernetes.io/d': 'unconfined',
    },
  },
  'apparmor-no-pod-profile': {
    spec: { containers: [c('a')] },
    annotations: { 'container.apparmor.security.beta.kubernetes.io/a': 'runtime/default' },
  },
  'fractional-resources': {
    spec: {
      initContainers: [c('i', { resources: { requests: { memory: '0.5' } } })],
      containers: [
        c('a', { resources: { limits: { memory: '1.5', 'ephemeral-storage': '1500m' }, requests: { memory: '1.2', 'ephemeral-storage': '1200m' } } }),
        c('b', { resources: { limits: { memory: '1Gi', 'ephemeral-storage': '0.1Ki' } } }),
      ],
    },
  },
  env: {
    spec: {
      containers: [
        c('a', {
          env: [
            { name: 'X', value: 'a' },
            { name: 'X', value: '$(X)b' },
            { name: 'X', value: 'c' },
            { name: 'X', value: '$(X)' },
            { name: 'Y', value: 'y' },
            { name: 'Y', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'Z', value: 'z' },
          ],
        }),
        c('b', { env: [{ name: 'X', value: '1' }] }),
      ],
    },
  },
  ports: {
    spec: {
      initContainers: [c('i', { restartPolicy: 'Always', ports: [{ containerPort: 80, name: 'web' }] })],
      containers: [
        c('a', {
          ports: [
            { containerPort: 80, name: 'web' },
            { containerPort: 81, hostPort: 8081 },
            { containerPort: 82, hostPort: 8082, hostIP: '127.0.0.1' },
            { containerPort: 53, protocol: 'UDP', name: 'dns' },
          ],
        }),
        c('b', {
          ports: [
            { containerPort: 81, hostPort: 8083, name: 'other' },
            { containerPort: 82, hostPort: 8082, hostIP: '127.0.0.2' },
            { containerPort: 53, protocol: 'TCP', name: 'dns' },
            { containerPort: 81, name: 'x81' },
          ],
        }),
      ],
    },
  },
  'host-ip-without-host-port': { spec: { containers: [c('a', { ports: [{ containerPort: 80, hostIP: '10.0.0.1' }] })] } },
  'negative-grace-period': { spec: { terminationGracePeriodSeconds: -5, containers: [c('c')] } },
  'pod-affinity-null-selectors': {
    spec: {
      affinity: {
        podAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone' }, { topologyKey: 'zone', labelSelector: {} }],
          preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: { topologyKey: 'zone' } }],
        },
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone', labelSelector: { matchLabels: { a: 'b' } } }, { topologyKey: 'h' }],
          preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 5, podAffinityTerm: { topologyKey: 'zone' } }],
        },
      },
      containers: [c('c')],
    },
  },
  'name-not-dns-label': { name: 'pw.dotted', spec: { containers: [c('c')] } },
  everything: {
    name: 'pw.everything',
    spec: {
      nodeSelector: { 'failure-domain.beta.kubernetes.io/zone': 'z' },
      terminationGracePeriodSeconds: -1,
      hostAliases: [
        { ip: '10.0.0.1', hostnames: ['a'] },
        { ip: '10.0.0.1', hostnames: ['b'] },
      ],
      imagePullSecrets: [{ name: 'a' }, { name: 'a' }],
      volumes: [{ name: 'git', gitRepo: { repository: 'r' } }],
      containers: [c('a', { env: [{ name: 'X' }, { name: 'X' }], ports: [{ containerPort: 80 }, { containerPort: 80 }] })],
    },
    annotations: { 'scheduler.alpha.kubernetes.io/critical-pod': '', 'container.apparmor.security.beta.kubernetes.io/a': 'unconfined' },
  },
};

/** Pod specs used as templates in every kind with one. */
const TEMPLATE_CASES = ['clean', 'everything', 'apparmor', 'apparmor-no-pod-profile', 'seccomp-annotations', 'env', 'ephemeral-claim'];

const labels = { app: 'pw' };
const template = (podCase: string): Obj => {
  const p = PODS[podCase];
  return { metadata: { labels, ...(p.annotations ? { annotations: p.annotations } : {}) }, spec: { ...p.spec } };
};
const jobTemplate = (podCase: string): Obj => {
  const t = template(podCase);
  return { ...t, spec: { ...t.spec, restartPolicy: 'Never' } };
};

/** Kinds with a pod template: their collection path (NS replaced) and a body around a template. */
export const WORKLOADS: Record<string, { path: string; body: (name: string, podCase: string) => Obj }> = {
  Deployment: {
    path: 'apis/apps/v1/namespaces/NS/deployments',
    body: (name, p) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name },
      spec: { replicas: 0, selector: { matchLabels: labels }, template: template(p) },
    }),
  },
  ReplicaSet: {
    path: 'apis/apps/v1/namespaces/NS/replicasets',
    body: (name, p) => ({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name },
      spec: { replicas: 0, selector: { matchLabels: labels }, template: template(p) },
    }),
  },
  StatefulSet: {
    path: 'apis/apps/v1/namespaces/NS/statefulsets',
    body: (name, p) => ({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name },
      spec: {
        replicas: 0,
        serviceName: 'pw',
        selector: { matchLabels: labels },
        template: template(p),
        volumeClaimTemplates: [
          { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
          { metadata: { name: 'frac' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '0.5' }, limits: { storage: '1.5' } } } },
        ],
      },
    }),
  },
  DaemonSet: {
    path: 'apis/apps/v1/namespaces/NS/daemonsets',
    body: (name, p) => {
      const t = template(p);
      return {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name },
        spec: { selector: { matchLabels: labels }, template: { ...t, spec: { ...t.spec, nodeSelector: { ...t.spec.nodeSelector, 'pw-no-such-node': 'x' } } } },
      };
    },
  },
  Job: {
    path: 'apis/batch/v1/namespaces/NS/jobs',
    body: (name, p) => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name }, spec: { suspend: true, template: jobTemplate(p) } }),
  },
  CronJob: {
    path: 'apis/batch/v1/namespaces/NS/cronjobs',
    body: (name, p) => ({
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name },
      spec: { schedule: '0 0 * * *', suspend: true, jobTemplate: { spec: { template: jobTemplate(p) } } },
    }),
  },
  ReplicationController: {
    path: 'api/v1/namespaces/NS/replicationcontrollers',
    body: (name, p) => ({
      apiVersion: 'v1',
      kind: 'ReplicationController',
      metadata: { name },
      spec: { replicas: 0, selector: labels, template: template(p) },
    }),
  },
  PodTemplate: {
    path: 'api/v1/namespaces/NS/podtemplates',
    body: (name, p) => ({ apiVersion: 'v1', kind: 'PodTemplate', metadata: { name }, template: template(p) }),
  },
};

async function result(name: string, response: ReturnType<Send>): Promise<ReplayResult> {
  const r = await response;
  const out: ReplayResult = { name, status: r.status, warnings: r.warnings };
  if (r.status >= 400) {
    try {
      out.message = (JSON.parse(r.text) as Obj).message;
    } catch {
      out.message = r.text;
    }
  }
  return out;
}

const podBody = (name: string, p: { spec: Obj; annotations?: Obj; name?: string }): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: p.name ?? name, ...(p.annotations ? { annotations: p.annotations } : {}) },
  spec: p.spec,
});

/** Sends the corpus in namespace `ns` (created here, deleted by cleanUp). */
export async function replay(send: Send, ns: string): Promise<ReplayResult[]> {
  const results: ReplayResult[] = [];
  results.push(
    await result('namespace', send('POST', '/api/v1/namespaces', json, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }))),
  );
  for (let i = 0; (await send('GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`, {})).status !== 200; i++) {
    if (i > 600) throw new Error(`no default ServiceAccount in ${ns}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  for (const [name, p] of Object.entries(PODS)) {
    results.push(await result(`pod ${name}`, send('POST', `/api/v1/namespaces/${ns}/pods?dryRun=All`, json, JSON.stringify(podBody(`pw-${name}`, p)))));
  }
  for (const [kind, w] of Object.entries(WORKLOADS)) {
    const path = `/${w.path.replace('NS', ns)}`;
    for (const p of TEMPLATE_CASES) {
      results.push(await result(`${kind} of ${p}`, send('POST', `${path}?dryRun=All`, json, JSON.stringify(w.body(`pw-${p}`, p)))));
    }
    results.push(await result(`${kind} named with a dot`, send('POST', `${path}?dryRun=All`, json, JSON.stringify(w.body('pw.dotted', 'clean')))));
  }
  // Updates of stored objects: metadata only (no template warnings), then a template change.
  for (const [kind, w] of Object.entries(WORKLOADS)) {
    const path = `/${w.path.replace('NS', ns)}`;
    const name = `upd-${kind.toLowerCase()}`;
    results.push(await result(`${kind} stored with warnings`, send('POST', path, json, JSON.stringify(w.body(name, 'everything')))));
    results.push(
      await result(`${kind} labels changed`, send('PATCH', `${path}/${name}`, mergePatch, JSON.stringify({ metadata: { labels: { touched: 'yes' } } }))),
    );
    const templatePatch =
      kind === 'PodTemplate'
        ? { template: { metadata: { labels: { rev: '2' } } } }
        : kind === 'CronJob'
          ? { spec: { jobTemplate: { spec: { template: { metadata: { labels: { rev: '2' } } } } } } }
          : { spec: { template: { metadata: { labels: { rev: '2' } } } } };
    results.push(await result(`${kind} template changed`, send('PATCH', `${path}/${name}`, mergePatch, JSON.stringify(templatePatch))));
    const cleaned = kind === 'PodTemplate' ? { template: { spec: { nodeSelector: null } } } : { spec: { template: { spec: { nodeSelector: null } } } };
    if (kind !== 'CronJob' && kind !== 'Job') {
      results.push(await result(`${kind} template node selector removed`, send('PATCH', `${path}/${name}`, mergePatch, JSON.stringify(cleaned))));
    }
  }
  results.push(
    await result(
      'Deployment scaled',
      send('PATCH', `/apis/apps/v1/namespaces/${ns}/deployments/upd-deployment/scale`, mergePatch, JSON.stringify({ spec: { replicas: 0 } })),
    ),
  );
  results.push(
    await result(
      'StatefulSet revisionHistoryLimit negative',
      send('PATCH', `/apis/apps/v1/namespaces/${ns}/statefulsets/upd-statefulset`, mergePatch, JSON.stringify({ spec: { revisionHistoryLimit: -1 } })),
    ),
  );
  results.push(
    await result(
      'CronJob schedule with TZ',
      send('PATCH', `/apis/batch/v1/namespaces/${ns}/cronjobs/upd-cronjob`, mergePatch, JSON.stringify({ spec: { schedule: 'TZ=UTC 0 0 * * *' } })),
    ),
  );
  // Pods: warned on create only.
  results.push(
    await result(
      'pod stored with warnings',
      send('POST', `/api/v1/namespaces/${ns}/pods`, json, JSON.stringify(podBody('upd-pod', { ...PODS.everything, name: 'upd-pod' }))),
    ),
  );
  results.push(
    await result(
      'pod labels changed',
      send('PATCH', `/api/v1/namespaces/${ns}/pods/upd-pod`, mergePatch, JSON.stringify({ metadata: { labels: { touched: 'yes' } } })),
    ),
  );
  const ips = { podIP: '2001:DB8::1', podIPs: [{ ip: '2001:DB8::1' }], hostIP: '2001:db8:0::2', hostIPs: [{ ip: '2001:db8:0::2' }] };
  results.push(
    await result(
      'pod status with non-canonical IPs',
      send('PATCH', `/api/v1/namespaces/${ns}/pods/upd-pod/status`, mergePatch, JSON.stringify({ status: ips })),
    ),
  );
  return results;
}

export async function cleanUp(send: Send, ns: string): Promise<void> {
  await send('DELETE', `/api/v1/namespaces/${ns}`, {});
}

export { splitWarnings };
