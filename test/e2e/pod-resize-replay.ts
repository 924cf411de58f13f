/**
 * The pod resize corpus: pods bound to Nodes with different allocatable resources, OS labels and
 * declared features, resized through `pods/NAME/resize` (and one updated directly). It exercises
 * kube's resize strategy (only resources and resize policies change; generation bumps),
 * ValidatePodResize's refusals, PodResizeValidator (missing or non-linux node, requests beyond the
 * node's allocatable, with their StatusCause types) and NodeDeclaredFeatureValidator (pod-level
 * and init container resizes need features the node declares). `replay` sends it through `send`
 * and returns each step's answer, reduced to what these decide; the capture script
 * (scripts/capture-node-admission-goldens.mjs) records the reference's answers and
 * test/e2e/pod-resize.test.ts compares Capstan's with them.
 */
type Obj = Record<string, any>;

export type Send = (method: string, path: string, headers: Record<string, string>, body?: string) => Promise<{ status: number; text: string }>;

export interface ResizeResult {
  name: string;
  status: number;
  reason?: string;
  message?: string;
  causes?: Obj[];
  fields?: Obj;
}

const JSON_TYPE = { 'content-type': 'application/json' };
const STRATEGIC = { 'content-type': 'application/strategic-merge-patch+json' };
const JSON_PATCH = { 'content-type': 'application/json-patch+json' };
const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' };

/** The corpus's Nodes: name suffix, labels and status. */
const NODES: [string, Obj, Obj][] = [
  ['rs-small', { 'kubernetes.io/os': 'linux' }, { allocatable: { cpu: '1', memory: '1Gi', pods: '10' }, capacity: { cpu: '1', memory: '1Gi', pods: '10' } }],
  [
    'rs-featured',
    { 'kubernetes.io/os': 'linux' },
    {
      allocatable: { cpu: '4', memory: '8Gi', pods: '10' },
      capacity: { cpu: '4', memory: '8Gi', pods: '10' },
      declaredFeatures: ['InPlacePodLevelResourcesVerticalScaling', 'InPlacePodVerticalScalingInitContainers'],
    },
  ],
  ['rs-win', { 'kubernetes.io/os': 'windows' }, { allocatable: { cpu: '4', memory: '8Gi' } }],
  ['rs-bare', {}, {}],
];

/** The names of the corpus's Nodes under `prefix`. */
export function resizeNodeNames(prefix: string): string[] {
  return NODES.map(([n]) => prefix + n);
}

function parse(text: string): Obj {
  try {
    return JSON.parse(text) as Obj;
  } catch {
    return {};
  }
}

/** `v` with every object's keys sorted: Capstan keeps a client's key order where kube writes Go's field order. */
function sortedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedKeys);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sortedKeys((v as Obj)[k])]),
  );
}

/** What a successful step shows (keys sorted): the generation and what a resize may or may not change. */
function picked(pod: Obj): Obj {
  const resources = (list: unknown): Obj[] =>
    Array.isArray(list) ? list.map((c: Obj) => ({ name: c.name, image: c.image, resources: c.resources, resizePolicy: c.resizePolicy })) : [];
  return sortedKeys({
    generation: pod.metadata?.generation,
    labels: pod.metadata?.labels,
    containers: resources(pod.spec?.containers),
    initContainers: resources(pod.spec?.initContainers),
    podResources: pod.spec?.resources,
    activeDeadlineSeconds: pod.spec?.activeDeadlineSeconds,
    qosClass: pod.status?.qosClass,
  }) as Obj;
}

/** Sends the corpus; the namespace and Nodes are named `${prefix}...`. */
export async function replay(send: Send, prefix: string): Promise<ResizeResult[]> {
  const ns = `${prefix}rs`;
  const pods = `/api/v1/namespaces/${ns}/pods`;
  const results: ResizeResult[] = [];
  const must = async (method: string, path: string, body: Obj, headers = JSON_TYPE): Promise<void> => {
    const res = await send(method, path, headers, JSON.stringify(body));
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
  };
  const record = async (name: string, method: string, path: string, body: unknown, headers: Record<string, string>): Promise<void> => {
    const res = await send(method, path, headers, JSON.stringify(body));
    const o = parse(res.text);
    results.push(
      res.status >= 300
        ? { name, status: res.status, reason: o.reason, message: o.message, ...(o.details?.causes ? { causes: o.details.causes } : {}) }
        : { name, status: res.status, fields: picked(o) },
    );
  };
  const resize = (name: string, pod: string, body: unknown, headers = STRATEGIC): Promise<void> =>
    record(name, 'PATCH', `${pods}/${pod}/resize`, body, headers);
  const container = (name: string, resources: Obj): Obj => ({ spec: { containers: [{ name, resources }] } });

  for (const [suffix, labels, status] of NODES) {
    await must('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: prefix + suffix, labels }, status });
  }
  await must('POST', '/apis/node.k8s.io/v1/runtimeclasses', {
    apiVersion: 'node.k8s.io/v1',
    kind: 'RuntimeClass',
    metadata: { name: `${prefix}rs-overhead` },
    handler: 'runc',
    overhead: { podFixed: { cpu: '300m', memory: '100Mi' } },
  });
  await must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  for (let i = 0; (await send('GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`, {})).status !== 200; i++) {
    if (i > 100) throw new Error(`no default ServiceAccount in ${ns}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const pod = (name: string, node: string | undefined, spec: Obj, metadata: Obj = {}): Obj => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'resize' }, ...metadata },
    spec: { ...(node ? { nodeName: prefix + node } : {}), ...spec },
  });
  const burstable = {
    initContainers: [
      { name: 'init', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '100m' } } },
      { name: 'sidecar', image: 'registry.k8s.io/pause:3.10', restartPolicy: 'Always', resources: { requests: { cpu: '100m', memory: '50Mi' } } },
    ],
    containers: [
      {
        name: 'app',
        image: 'registry.k8s.io/pause:3.10',
        resources: { requests: { cpu: '100m', memory: '100Mi' }, limits: { cpu: '200m', memory: '200Mi' } },
      },
    ],
  };
  const simple = { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '100m', memory: '100Mi' } } }] };
  const podLevel = {
    resources: { requests: { cpu: '200m', memory: '200Mi' }, limits: { cpu: '1', memory: '1Gi' } },
    containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
  };
  await must('POST', pods, pod('small', 'rs-small', burstable));
  await must('POST', pods, pod('featured', 'rs-featured', burstable));
  await must('POST', pods, pod('besteffort', 'rs-small', { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] }));
  await must('POST', pods, pod('on-windows-node', 'rs-win', simple));
  await must('POST', pods, pod('windows-os', 'rs-win', { ...simple, os: { name: 'windows' } }));
  await must('POST', pods, pod('bare-node', 'rs-bare', simple));
  await must('POST', pods, pod('missing-node', 'rs-missing', simple));
  await must('POST', pods, pod('unbound', undefined, simple));
  await must('POST', pods, pod('pod-level-small', 'rs-small', podLevel));
  await must('POST', pods, pod('pod-level-featured', 'rs-featured', podLevel));
  await must('POST', pods, pod('mirror', 'rs-small', simple, { annotations: { 'kubernetes.io/config.mirror': 'mirror' } }));
  await must('POST', pods, pod('running', 'rs-small', simple));
  await must('POST', pods, pod('overhead', 'rs-small', { ...simple, runtimeClassName: `${prefix}rs-overhead` }));

  // The resize strategy: only resources change, the generation bumps once per change.
  await resize('resize app cpu', 'small', container('app', { requests: { cpu: '300m' }, limits: { cpu: '400m' } }));
  await resize('resize sends no change', 'small', container('app', { requests: { cpu: '300m' } }));
  await resize('resize ignores image and labels', 'small', {
    metadata: { labels: { app: 'changed', extra: 'x' } },
    spec: { activeDeadlineSeconds: 30, containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.9', resources: { requests: { memory: '150Mi' } } }] },
  });
  await resize('resize policy', 'small', {
    spec: {
      containers: [
        {
          name: 'app',
          resizePolicy: [
            { resourceName: 'cpu', restartPolicy: 'NotRequired' },
            { resourceName: 'memory', restartPolicy: 'RestartContainer' },
          ],
        },
      ],
    },
  });
  await resize('resize a sidecar', 'small', { spec: { initContainers: [{ name: 'sidecar', resources: { requests: { cpu: '200m' } } }] } });
  await resize('resize to exactly the allocatable cpu', 'small', container('app', { requests: { cpu: '800m' }, limits: { cpu: '1' } }));
  await resize('resize beyond the allocatable cpu', 'small', container('app', { requests: { cpu: '850m' }, limits: { cpu: '1' } }));
  await resize('resize beyond the allocatable memory', 'small', container('app', { requests: { memory: '2Gi' }, limits: { memory: '2Gi' } }));
  await resize('resize beyond both', 'small', container('app', { requests: { cpu: '3', memory: '3Gi' }, limits: { cpu: '3', memory: '3Gi' } }));
  await resize('resize an init container on a node without the feature', 'small', {
    spec: { initContainers: [{ name: 'init', resources: { requests: { cpu: '150m' } } }] },
  });
  await resize('resize an init container on a node with the feature', 'featured', {
    spec: { initContainers: [{ name: 'init', resources: { requests: { cpu: '150m' } } }] },
  });
  await resize('resize the featured pod beyond nothing', 'featured', container('app', { requests: { cpu: '1' }, limits: { cpu: '2' } }));

  // The pod's overhead counts: 700m of cpu requested and 300m of overhead fit the node's 1, 750m do not.
  await resize('resize within the allocatable with the overhead', 'overhead', container('app', { requests: { cpu: '700m' } }));
  await resize('resize beyond the allocatable with the overhead', 'overhead', container('app', { requests: { cpu: '750m' } }));

  // ValidatePodResize.
  await resize('remove a request', 'small', container('app', { requests: { cpu: null } }));
  await resize('remove a limit', 'small', container('app', { limits: { memory: null } }));
  await resize('change another resource', 'small', container('app', { requests: { 'ephemeral-storage': '1Gi' } }));
  await resize('change the QoS class', 'besteffort', container('app', { requests: { cpu: '100m' } }));
  await resize('rename a container', 'small', [{ op: 'replace', path: '/spec/containers/0/name', value: 'renamed' }], JSON_PATCH);
  await resize(
    'add a container',
    'small',
    [{ op: 'add', path: '/spec/containers/-', value: { name: 'more', image: 'registry.k8s.io/pause:3.10' } }],
    JSON_PATCH,
  );
  await resize('a windows pod', 'windows-os', container('app', { requests: { cpu: '200m' } }));
  await resize('a static pod', 'mirror', container('app', { requests: { cpu: '200m' } }));
  await resize('non-sidecar init container with RestartContainer', 'featured', {
    spec: {
      initContainers: [{ name: 'init', resources: { requests: { cpu: '120m' } }, resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'RestartContainer' }] }],
    },
  });

  // PodResizeValidator on other nodes.
  await resize('a pod on a windows node', 'on-windows-node', container('app', { requests: { cpu: '200m' } }));
  await resize('a pod on a node without allocatable', 'bare-node', container('app', { requests: { cpu: '200m' } }));
  await resize('a pod on a missing node', 'missing-node', container('app', { requests: { cpu: '200m' } }));
  await resize('an unbound pod', 'unbound', container('app', { requests: { cpu: '200m' } }));

  // Pod-level resources.
  await resize('pod-level resize on a node without the feature', 'pod-level-small', { spec: { resources: { requests: { cpu: '300m' } } } });
  await resize('pod-level resize on a node with the feature', 'pod-level-featured', { spec: { resources: { requests: { cpu: '300m' } } } });
  await resize('pod-level resize beyond the allocatable', 'pod-level-featured', { spec: { resources: { requests: { cpu: '5' }, limits: { cpu: '5' } } } });
  await resize('pod-level resources removed', 'pod-level-featured', [{ op: 'remove', path: '/spec/resources' }], JSON_PATCH);
  await resize('pod-level request removed', 'pod-level-featured', { spec: { resources: { requests: { memory: null } } } });
  await resize('pod-level other resource', 'pod-level-featured', {
    spec: { resources: { requests: { 'hugepages-2Mi': '2Mi' }, limits: { 'hugepages-2Mi': '2Mi' } } },
  });

  // A running container whose status reports no resources: its node cannot resize.
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  await must(
    'PATCH',
    `${pods}/running/status`,
    {
      status: {
        phase: 'Running',
        containerStatuses: [
          { name: 'app', image: 'registry.k8s.io/pause:3.10', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: now } } },
        ],
      },
    },
    MERGE_PATCH,
  );
  await resize('a running pod without status resources', 'running', container('app', { requests: { cpu: '200m' } }));

  // The pod itself: a spec change bumps the generation and needs no node feature.
  await record('update the pod itself', 'PATCH', `${pods}/small`, { spec: { activeDeadlineSeconds: 100 } }, STRATEGIC);
  return results;
}

/** Deletes the corpus's namespace, RuntimeClass and Nodes. */
export async function cleanUp(send: Send, prefix: string): Promise<void> {
  await send('DELETE', `/api/v1/namespaces/${prefix}rs`, {});
  await send('DELETE', `/apis/node.k8s.io/v1/runtimeclasses/${prefix}rs-overhead`, {});
  for (const name of resizeNodeNames(prefix)) await send('DELETE', `/api/v1/nodes/${name}`, {});
}
