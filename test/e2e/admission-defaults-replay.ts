/**
 * The corpus of the default admission plugins that act on what a client sees without a kubelet:
 * RuntimeClass (overhead and scheduling merged into pods, missing classes and mismatched overheads
 * refused), StorageObjectInUseProtection (finalizers on new claims and volumes), PodTopologyLabels
 * (a node's zone and region labels on pods created on or bound to it), PersistentVolumeClaimResize (expansion needs a bound claim whose StorageClass allows it)
 * and DefaultIngressClass (the newest default class). `replay` sends it through `send` and returns
 * what each step answered, reduced to the fields the plugins decide; the capture script records the
 * reference's answers and test/e2e/admission-defaults.test.ts compares Capstan's with them.
 */
type Obj = Record<string, any>;

export type Send = (method: string, path: string, headers: Record<string, string>, body?: string) => Promise<{ status: number; text: string }>;

export interface ReplayResult {
  name: string;
  status: number;
  reason?: string;
  message?: string;
  fields?: Obj;
}

const JSON_TYPE = { 'content-type': 'application/json' };
const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' };
const CONTAINERS = [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }];

/** The cluster-scoped objects of the corpus, by collection path and name suffix. */
const CLUSTER_OBJECTS: [string, string][] = [
  ['/apis/node.k8s.io/v1/runtimeclasses', 'rc-plain'],
  ['/apis/node.k8s.io/v1/runtimeclasses', 'rc-overhead'],
  ['/apis/node.k8s.io/v1/runtimeclasses', 'rc-sched'],
  ['/apis/storage.k8s.io/v1/storageclasses', 'expand'],
  ['/apis/storage.k8s.io/v1/storageclasses', 'fixed'],
  ['/api/v1/persistentvolumes', 'pv-expand'],
  ['/api/v1/persistentvolumes', 'pv-fixed'],
  ['/apis/networking.k8s.io/v1/ingressclasses', 'ic-old'],
  ['/apis/networking.k8s.io/v1/ingressclasses', 'ic-new'],
  ['/apis/networking.k8s.io/v1/ingressclasses', 'ic-plain'],
  ['/api/v1/nodes', 'node-zoned'],
];
const NAMESPACES = ['rc', 'pvc', 'ing', 'topo'];

/** A message's first line: kube appends a Go struct diff to "spec is immutable" errors, which Capstan words differently. */
function firstLine(message: unknown): string | undefined {
  return typeof message === 'string' ? message.split('\n')[0] : undefined;
}

function parse(text: string): Obj {
  try {
    return JSON.parse(text) as Obj;
  } catch {
    return {};
  }
}

/** Sends the corpus; namespaces and cluster objects are named `${prefix}...`. */
export async function replay(send: Send, prefix: string): Promise<ReplayResult[]> {
  const results: ReplayResult[] = [];
  const must = async (method: string, path: string, body: Obj, headers = JSON_TYPE): Promise<void> => {
    const res = await send(method, path, headers, JSON.stringify(body));
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
  };
  const record = async (name: string, method: string, path: string, body: Obj | undefined, pick: (o: Obj) => Obj, headers = JSON_TYPE): Promise<void> => {
    const res = await send(method, path, headers, body === undefined ? undefined : JSON.stringify(body));
    const o = parse(res.text);
    results.push(
      res.status >= 300 ? { name, status: res.status, reason: o.reason, message: firstLine(o.message) } : { name, status: res.status, fields: pick(o) },
    );
  };
  const waitForAccount = async (ns: string): Promise<void> => {
    for (let i = 0; (await send('GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`, {})).status !== 200; i++) {
      if (i > 100) throw new Error(`no default ServiceAccount in ${ns}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  for (const ns of NAMESPACES) await must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: prefix + ns } });

  // RuntimeClass
  const rc = (name: string, extra: Obj): Obj => ({
    apiVersion: 'node.k8s.io/v1',
    kind: 'RuntimeClass',
    metadata: { name: prefix + name },
    handler: 'runc',
    ...extra,
  });
  await must('POST', '/apis/node.k8s.io/v1/runtimeclasses', rc('rc-plain', {}));
  await must('POST', '/apis/node.k8s.io/v1/runtimeclasses', rc('rc-overhead', { overhead: { podFixed: { cpu: '250m', memory: '120Mi' } } }));
  await must(
    'POST',
    '/apis/node.k8s.io/v1/runtimeclasses',
    rc('rc-sched', {
      scheduling: {
        nodeSelector: { 'plugins-pool': 'a' },
        tolerations: [
          { key: 'plugins-t', operator: 'Exists', effect: 'NoSchedule' },
          { key: 'plugins-u', operator: 'Equal', value: 'v', effect: 'NoExecute', tolerationSeconds: 60 },
        ],
      },
    }),
  );
  await waitForAccount(prefix + 'rc');
  const pods = `/api/v1/namespaces/${prefix}rc/pods`;
  const podFields = (o: Obj): Obj => ({ overhead: o.spec?.overhead, nodeSelector: o.spec?.nodeSelector, tolerations: o.spec?.tolerations });
  const pod = (name: string, spec: Obj): Obj => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: CONTAINERS, ...spec } });
  const podCases: [string, Obj][] = [
    ['missing-class', { runtimeClassName: `${prefix}rc-none` }],
    ['plain-class', { runtimeClassName: `${prefix}rc-plain` }],
    ['overhead-from-class', { runtimeClassName: `${prefix}rc-overhead` }],
    ['overhead-matching', { runtimeClassName: `${prefix}rc-overhead`, overhead: { cpu: '0.25', memory: '120Mi' } }],
    ['overhead-mismatch', { runtimeClassName: `${prefix}rc-overhead`, overhead: { cpu: '1' } }],
    ['overhead-class-without', { runtimeClassName: `${prefix}rc-plain`, overhead: { cpu: '1' } }],
    ['overhead-no-class', { overhead: { cpu: '1' } }],
    [
      'scheduling-merged',
      {
        runtimeClassName: `${prefix}rc-sched`,
        nodeSelector: { zone: 'x' },
        tolerations: [
          { key: 'plugins-u', operator: 'Equal', value: 'v', effect: 'NoExecute', tolerationSeconds: 30 },
          { key: 'other', operator: 'Exists' },
        ],
      },
    ],
    ['scheduling-same-value', { runtimeClassName: `${prefix}rc-sched`, nodeSelector: { 'plugins-pool': 'a' } }],
    ['scheduling-conflict', { runtimeClassName: `${prefix}rc-sched`, nodeSelector: { 'plugins-pool': 'b' } }],
    ['scheduling-wildcard-toleration', { runtimeClassName: `${prefix}rc-sched`, tolerations: [{ operator: 'Exists' }] }],
  ];
  for (const [name, spec] of podCases) await record(`pod ${name}`, 'POST', pods, pod(name, spec), podFields);

  // PersistentVolumeClaimResize
  const sc = (name: string, extra: Obj): Obj => ({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: prefix + name },
    provisioner: 'example.com/plugins',
    ...extra,
  });
  await must('POST', '/apis/storage.k8s.io/v1/storageclasses', sc('expand', { allowVolumeExpansion: true }));
  await must('POST', '/apis/storage.k8s.io/v1/storageclasses', sc('fixed', {}));
  const claims = `/api/v1/namespaces/${prefix}pvc/persistentvolumeclaims`;
  const pv = (name: string, className: string, claimName: string): Obj => ({
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: prefix + name },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName: prefix + className,
      hostPath: { path: `/tmp/${prefix}${name}` },
      claimRef: { namespace: `${prefix}pvc`, name: claimName },
    },
  });
  const pvc = (name: string, className: string, volumeName?: string): Obj => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: prefix + className, volumeName },
  });
  // StorageObjectInUseProtection: new volumes and claims carry their protection finalizer.
  const finalizerFields = (o: Obj): Obj => ({ finalizers: o.metadata?.finalizers });
  await record('volume created', 'POST', '/api/v1/persistentvolumes', pv('pv-expand', 'expand', 'exp'), finalizerFields);
  await must('POST', '/api/v1/persistentvolumes', pv('pv-fixed', 'fixed', 'fix'));
  await record('claim created', 'POST', claims, pvc('exp', 'expand', `${prefix}pv-expand`), finalizerFields);
  await must('POST', claims, pvc('fix', 'fixed', `${prefix}pv-fixed`));
  const withFinalizer = pvc('pending', 'expand');
  withFinalizer.metadata.finalizers = ['kubernetes.io/pvc-protection', 'example.com/plugins'];
  await record('claim created with the finalizer', 'POST', claims, withFinalizer, finalizerFields);
  await must('PATCH', `${claims}/pending`, { metadata: { finalizers: ['kubernetes.io/pvc-protection'] } }, MERGE_PATCH);
  // The volumes are pre-bound, so the reference's volume controller binds them too.
  const bound = { status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } } };
  for (const name of ['exp', 'fix']) await must('PATCH', `${claims}/${name}/status`, bound, MERGE_PATCH);
  const grow = (size: string): Obj => ({ spec: { resources: { requests: { storage: size } } } });
  const claimFields = (o: Obj): Obj => ({ requests: o.spec?.resources?.requests });
  await record('claim bound, class allows expansion', 'PATCH', `${claims}/exp`, grow('2Gi'), claimFields, MERGE_PATCH);
  await record('claim bound, class without expansion', 'PATCH', `${claims}/fix`, grow('2Gi'), claimFields, MERGE_PATCH);
  await record('claim pending', 'PATCH', `${claims}/pending`, grow('2Gi'), claimFields, MERGE_PATCH);

  // DefaultIngressClass: the default classes live only for these few requests.
  const ic = (name: string, isDefault: boolean): Obj => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'IngressClass',
    metadata: { name: prefix + name, annotations: isDefault ? { 'ingressclass.kubernetes.io/is-default-class': 'true' } : {} },
    spec: { controller: 'example.com/plugins' },
  });
  const ingresses = `/apis/networking.k8s.io/v1/namespaces/${prefix}ing/ingresses`;
  const ingress = (name: string, spec: Obj, annotations: Obj = {}): Obj => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, annotations },
    spec: { defaultBackend: { service: { name: 's', port: { number: 80 } } }, ...spec },
  });
  const ingressFields = (o: Obj): Obj => ({ ingressClassName: o.spec?.ingressClassName });
  await waitForAccount(prefix + 'ing');
  await must('POST', '/apis/networking.k8s.io/v1/ingressclasses', ic('ic-plain', false));
  await must('POST', '/apis/networking.k8s.io/v1/ingressclasses', ic('ic-old', true));
  await must('POST', '/apis/networking.k8s.io/v1/ingressclasses', ic('ic-new', true));
  try {
    await record('ingress without class', 'POST', ingresses, ingress('none', {}), ingressFields);
    await record('ingress with class', 'POST', ingresses, ingress('named', { ingressClassName: `${prefix}ic-plain` }), ingressFields);
    await record('ingress with legacy annotation', 'POST', ingresses, ingress('legacy', {}, { 'kubernetes.io/ingress.class': 'nginx' }), ingressFields);
  } finally {
    await send('DELETE', `/apis/networking.k8s.io/v1/ingressclasses/${prefix}ic-new`, {});
    await send('DELETE', `/apis/networking.k8s.io/v1/ingressclasses/${prefix}ic-old`, {});
  }
  await record('ingress without class, no default', 'POST', ingresses, ingress('after', {}), ingressFields);

  // PodTopologyLabels: a node's zone and region labels reach the pods created on or bound to it.
  await must('POST', '/api/v1/nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: `${prefix}node-zoned`, labels: { 'topology.kubernetes.io/zone': 'z1', 'topology.kubernetes.io/region': 'r1', 'plugins-other': 'x' } },
  });
  await waitForAccount(prefix + 'topo');
  const topoPods = `/api/v1/namespaces/${prefix}topo/pods`;
  const metaFields = (o: Obj): Obj => ({ labels: o.metadata?.labels, annotations: o.metadata?.annotations, nodeName: o.spec?.nodeName });
  const labelled = (name: string, spec: Obj): Obj => ({ ...pod(name, spec), metadata: { name, labels: { app: 'a', 'topology.kubernetes.io/zone': 'mine' } } });
  await record('pod created on a zoned node', 'POST', topoPods, labelled('on-node', { nodeName: `${prefix}node-zoned` }), metaFields);
  await record('pod created on a missing node', 'POST', topoPods, labelled('on-missing', { nodeName: `${prefix}node-none` }), metaFields);
  await must('POST', topoPods, labelled('bound', {}));
  const binding = (target: Obj): Obj => ({
    apiVersion: 'v1',
    kind: 'Binding',
    metadata: { name: 'bound', labels: { 'from-binding': 'yes' }, annotations: { 'plugins/note': 'n' } },
    target,
  });
  await record('binding to a zoned node', 'POST', `${topoPods}/bound/binding`, binding({ kind: 'Node', name: `${prefix}node-zoned` }), (o) => ({
    status: o.status,
  }));
  await record('pod after its binding', 'GET', `${topoPods}/bound`, undefined, metaFields);
  return results;
}

/** Deletes the corpus's namespaces and cluster-scoped objects. */
export async function cleanUp(send: Send, prefix: string): Promise<void> {
  for (const ns of NAMESPACES) await send('DELETE', `/api/v1/namespaces/${prefix}${ns}`, {});
  for (const [path, name] of CLUSTER_OBJECTS) await send('DELETE', `${path}/${prefix}${name}`, {});
}
