/**
 * The Pod Security corpus: namespaces labelled with levels and versions, pods and workloads that
 * break each Pod Security Standards check, and the requests that send them (dry-run creates, so the
 * reference keeps nothing), plus a namespace whose enforce level is raised over existing pods.
 * scripts/capture-pod-security-goldens.mjs replays it on kube-apiserver 1.36 into
 * test/golden/pod-security/reference.json; test/e2e/pod-security.test.ts replays it on Capstan.
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

const PREFIX = 'pod-security.kubernetes.io/';
/** Namespaces (suffix of `psa-`) and their labels. */
export const NAMESPACES: Record<string, Record<string, string>> = {
  restricted: { [`${PREFIX}enforce`]: 'restricted' },
  baseline: { [`${PREFIX}enforce`]: 'baseline', [`${PREFIX}warn`]: 'restricted' },
  'restricted-v1-24': { [`${PREFIX}enforce`]: 'restricted', [`${PREFIX}enforce-version`]: 'v1.24' },
  'baseline-v1-0': { [`${PREFIX}enforce`]: 'baseline', [`${PREFIX}enforce-version`]: 'v1.0' },
  'warn-only': { [`${PREFIX}warn`]: 'restricted', [`${PREFIX}warn-version`]: 'v1.30' },
  'future-version': { [`${PREFIX}enforce`]: 'restricted', [`${PREFIX}enforce-version`]: 'v1.99' },
};

const restrictedContext = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } };
const container = (name: string, extra: Obj = {}): Obj => ({ name, image: 'registry.k8s.io/pause:3.10', ...extra });
const goodContainer = (name: string, context: Obj = {}): Obj => container(name, { securityContext: { ...restrictedContext, ...context } });

/** Pod specs by case name: each breaks one or a few checks (or none). */
export const PODS: Record<string, { spec: Obj; annotations?: Obj }> = {
  plain: { spec: { containers: [container('c')] } },
  'restricted-ok': { spec: { containers: [goodContainer('c')] } },
  'restricted-pod-level': {
    spec: {
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'Localhost', localhostProfile: 'p.json' } },
      containers: [container('c', { securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } } })],
    },
  },
  'host-namespaces': { spec: { hostNetwork: true, hostPID: true, hostIPC: true, containers: [goodContainer('c')] } },
  privileged: {
    spec: {
      initContainers: [goodContainer('i', { privileged: true, allowPrivilegeEscalation: true })],
      containers: [goodContainer('a', { privileged: true, allowPrivilegeEscalation: undefined }), goodContainer('b', { privileged: false })],
    },
  },
  capabilities: {
    spec: {
      containers: [
        goodContainer('a', { capabilities: { add: ['NET_RAW', 'SYS_ADMIN', 'CHOWN'], drop: ['ALL'] } }),
        goodContainer('b', { capabilities: { add: ['NET_ADMIN'] } }),
      ],
    },
  },
  'host-path': {
    spec: {
      volumes: [
        { name: 'h', hostPath: { path: '/etc' } },
        { name: 'n', nfs: { server: 'x', path: '/' } },
        { name: 'e', emptyDir: {} },
      ],
      containers: [goodContainer('c')],
    },
  },
  'host-ports': {
    spec: {
      containers: [goodContainer('a', {}), goodContainer('b')].map((c, i) => ({
        ...c,
        ports: [
          { containerPort: 80 + 2 * i, hostPort: i === 0 ? 8080 : 90 },
          { containerPort: 81 + 2 * i, hostPort: 0 },
        ],
      })),
    },
  },
  'probe-host': {
    spec: {
      containers: [
        {
          ...goodContainer('c'),
          livenessProbe: { httpGet: { host: 'evil.example.com', port: 80 } },
          lifecycle: { preStop: { tcpSocket: { host: '10.0.0.1', port: 22 } } },
        },
      ],
    },
  },
  'proc-mount': { spec: { hostUsers: false, containers: [goodContainer('c', { procMount: 'Unmasked' })] } },
  'proc-mount-host-users': { spec: { containers: [goodContainer('c', { procMount: 'Unmasked' })] } },
  selinux: {
    spec: {
      securityContext: { seLinuxOptions: { type: 'spc_t', user: 'root' } },
      containers: [goodContainer('c', { seLinuxOptions: { role: 'r', type: 'container_engine_t' } })],
    },
  },
  'seccomp-unconfined': {
    spec: { securityContext: { seccompProfile: { type: 'Unconfined' } }, containers: [goodContainer('c', { seccompProfile: { type: 'Unconfined' } })] },
  },
  'seccomp-missing': {
    spec: { containers: [container('c', { securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true } })] },
  },
  sysctls: {
    spec: {
      securityContext: {
        sysctls: [
          { name: 'net.ipv4.tcp_rmem', value: '4096 87380 6291456' },
          { name: 'kernel.msgmax', value: '65536' },
        ],
      },
      containers: [goodContainer('c')],
    },
  },
  'run-as-root': { spec: { securityContext: { runAsUser: 0, runAsNonRoot: false }, containers: [goodContainer('c', { runAsUser: 0, runAsNonRoot: false })] } },
  'user-namespace-root': {
    spec: {
      hostUsers: false,
      securityContext: { runAsUser: 0 },
      containers: [
        container('c', { securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } } }),
      ],
    },
  },
  windows: { spec: { os: { name: 'windows' }, securityContext: { runAsNonRoot: true }, containers: [container('c')] } },
  'windows-host-process': {
    spec: {
      os: { name: 'windows' },
      hostNetwork: true,
      securityContext: { runAsNonRoot: true, windowsOptions: { hostProcess: true } },
      containers: [container('c', { securityContext: { windowsOptions: { hostProcess: true } } })],
    },
  },
  apparmor: {
    spec: {
      securityContext: { appArmorProfile: { type: 'Unconfined' } },
      containers: [goodContainer('a', { appArmorProfile: { type: 'Unconfined' } }), goodContainer('b')],
    },
    annotations: { 'container.apparmor.security.beta.kubernetes.io/b': 'unconfined' },
  },
  'seccomp-annotations': {
    spec: { containers: [goodContainer('c')] },
    annotations: { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined', 'container.seccomp.security.alpha.kubernetes.io/c': 'localhost/profile.json' },
  },
  'everything-baseline': {
    spec: {
      hostPID: true,
      volumes: [{ name: 'h', hostPath: { path: '/' } }],
      initContainers: [container('init', { securityContext: { privileged: true } })],
      containers: [container('main', { securityContext: { capabilities: { add: ['SYS_ADMIN'] } }, ports: [{ containerPort: 80, hostPort: 80 }] })],
    },
  },
};

const WORKLOADS: Record<string, { path: string; body: (template: Obj) => Obj }> = {
  deployment: {
    path: 'apis/apps/v1/namespaces/NS/deployments',
    body: (template) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { selector: { matchLabels: { app: 'x' } }, template } }),
  },
  cronjob: {
    path: 'apis/batch/v1/namespaces/NS/cronjobs',
    body: (template) => ({
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'cj' },
      spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { ...template, spec: { ...template.spec, restartPolicy: 'Never' } } } } },
    }),
  },
};

const json = { 'content-type': 'application/json' };
const namespacePath = '/api/v1/namespaces';
const podBody = (name: string, p: { spec: Obj; annotations?: Obj }): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...(p.annotations ? { annotations: p.annotations } : {}) },
  spec: p.spec,
});

async function result(name: string, reply: Promise<{ status: number; warnings: string[]; text: string }>): Promise<ReplayResult> {
  const { status, warnings, text } = await reply;
  const body = JSON.parse(text) as Obj;
  return { name, status, ...(status >= 300 ? { message: body.message } : {}), warnings };
}

/** Creates the corpus's namespaces (waiting for their `default` ServiceAccount) and replays every case. */
export async function replay(send: Send, namespacePrefix: string): Promise<ReplayResult[]> {
  const results: ReplayResult[] = [];
  const nsName = (suffix: string): string => `${namespacePrefix}${suffix}`;
  const waitForAccount = async (ns: string): Promise<void> => {
    for (let i = 0; (await send('GET', `${namespacePath}/${ns}/serviceaccounts/default`, {})).status !== 200; i++) {
      if (i > 600) throw new Error(`no default ServiceAccount in ${ns}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  for (const [suffix, labels] of Object.entries(NAMESPACES)) {
    const created = await send(
      'POST',
      namespacePath,
      json,
      JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: nsName(suffix), labels } }),
    );
    results.push(await result(`namespace ${suffix}`, Promise.resolve(created)));
    await waitForAccount(nsName(suffix));
  }
  for (const suffix of Object.keys(NAMESPACES)) {
    for (const [podName, pod] of Object.entries(PODS)) {
      const path = `${namespacePath}/${nsName(suffix)}/pods?dryRun=All`;
      results.push(await result(`pod ${podName} in ${suffix}`, send('POST', path, json, JSON.stringify(podBody(podName, pod)))));
    }
    for (const [kind, workload] of Object.entries(WORKLOADS)) {
      for (const podName of ['plain', 'everything-baseline']) {
        const template = { metadata: { labels: { app: 'x' } }, spec: PODS[podName]?.spec };
        const path = `/${workload.path.replace('NS', nsName(suffix))}?dryRun=All`;
        results.push(await result(`${kind} of ${podName} in ${suffix}`, send('POST', path, json, JSON.stringify(workload.body(template)))));
      }
    }
  }
  const invalidLabels = { [`${PREFIX}enforce`]: 'strict', [`${PREFIX}audit-version`]: 'v2.0', [`${PREFIX}warn`]: 'baseline' };
  const refused = send(
    'POST',
    `${namespacePath}?dryRun=All`,
    json,
    JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: nsName('invalid'), labels: invalidLabels } }),
  );
  results.push(await result('namespace with invalid labels', refused));

  // Raising the enforce level over existing pods warns about them, grouped by their violations.
  const raised = nsName('raised');
  results.push(
    await result('namespace raised', send('POST', namespacePath, json, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: raised } }))),
  );
  await waitForAccount(raised);
  for (const [podName, copies] of [
    ['plain', 3],
    ['privileged', 2],
    ['restricted-ok', 1],
    ['host-namespaces', 1],
  ] as const) {
    for (let i = 0; i < copies; i++) {
      const created = await send('POST', `${namespacePath}/${raised}/pods`, json, JSON.stringify(podBody(`${podName}-${i}`, PODS[podName])));
      if (created.status !== 201) throw new Error(`pod not created: ${created.text}`);
    }
  }
  for (const level of ['baseline', 'restricted', 'privileged']) {
    const patch = JSON.stringify({ metadata: { labels: { [`${PREFIX}enforce`]: level } } });
    results.push(
      await result(`raise enforce to ${level}`, send('PATCH', `${namespacePath}/${raised}`, { 'content-type': 'application/merge-patch+json' }, patch)),
    );
  }
  // An update of an existing pod that changes no image is not checked again.
  const relabel = JSON.stringify({ metadata: { labels: { touched: 'yes' } } });
  results.push(
    await result(
      'label a violating pod',
      send('PATCH', `${namespacePath}/${raised}/pods/privileged-0`, { 'content-type': 'application/merge-patch+json' }, relabel),
    ),
  );
  const reimage = JSON.stringify({ spec: { containers: [{ name: 'a', image: 'registry.k8s.io/pause:3.9' }] } });
  results.push(
    await result(
      'change the image of a violating pod',
      send('PATCH', `${namespacePath}/${raised}/pods/privileged-0`, { 'content-type': 'application/strategic-merge-patch+json' }, reimage),
    ),
  );
  return results;
}

/** Deletes the corpus's namespaces. */
export async function cleanUp(send: Send, namespacePrefix: string): Promise<void> {
  for (const suffix of [...Object.keys(NAMESPACES), 'raised']) await send('DELETE', `${namespacePath}/${namespacePrefix}${suffix}`, {});
}

export { splitWarnings };
