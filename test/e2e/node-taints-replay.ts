/**
 * The node taint corpus: Nodes created with various conditions, `spec.unschedulable` and taints of
 * their own, then some of them changed. TaintNodesByCondition gives every new Node the `not-ready`
 * NoSchedule taint; the node lifecycle controller then adds the NoSchedule taints the node's
 * conditions call for and removes the stale ones. `replay` sends the corpus through `send` and
 * returns the taints each create answered and the NoSchedule taints each node settles on (NoExecute
 * taints, which kube's heartbeat monitoring adds and Capstan does not, are left out; `timeAdded` is
 * reduced to whether it is set). The capture script records the reference's answers and
 * test/e2e/node-taints.test.ts compares Capstan's with them.
 */
type Obj = Record<string, any>;

export type Send = (method: string, path: string, headers: Record<string, string>, body?: string) => Promise<{ status: number; text: string }>;

export interface TaintResult {
  name: string;
  status: number;
  taints?: Obj[];
}

const JSON_TYPE = { 'content-type': 'application/json' };
const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' };

const condition = (type: string, status: string): Obj => ({
  type,
  status,
  reason: 'Corpus',
  message: 'set by the corpus',
  lastHeartbeatTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
  lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
});

/** The corpus's nodes: name suffix, spec and status. */
const NODES: [string, Obj, Obj | undefined][] = [
  ['no-status', {}, undefined],
  ['ready', {}, { conditions: [condition('Ready', 'True')] }],
  ['not-ready', {}, { conditions: [condition('Ready', 'False')] }],
  ['unknown', {}, { conditions: [condition('Ready', 'Unknown')] }],
  [
    'pressure',
    {},
    {
      conditions: [
        condition('Ready', 'True'),
        condition('MemoryPressure', 'True'),
        condition('DiskPressure', 'True'),
        condition('PIDPressure', 'True'),
        condition('NetworkUnavailable', 'True'),
      ],
    },
  ],
  ['no-pressure', {}, { conditions: [condition('Ready', 'True'), condition('MemoryPressure', 'False'), condition('DiskPressure', 'Unknown')] }],
  ['cordoned', { unschedulable: true }, { conditions: [condition('Ready', 'True')] }],
  [
    'own-taints',
    {
      taints: [
        { key: 'example.com/dedicated', value: 'corpus', effect: 'NoSchedule' },
        { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' },
        { key: 'node.kubernetes.io/memory-pressure', effect: 'PreferNoSchedule' },
      ],
    },
    { conditions: [condition('Ready', 'True')] },
  ],
  ['pre-tainted', { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] }, { conditions: [condition('Ready', 'False')] }],
  [
    'stale',
    {
      taints: [
        { key: 'node.kubernetes.io/disk-pressure', effect: 'NoSchedule' },
        { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' },
      ],
    },
    { conditions: [condition('Ready', 'True')] },
  ],
];

/** The names of the corpus's nodes under `prefix` (for clean-up). */
export function nodeNames(prefix: string): string[] {
  return [...NODES.map(([n]) => `${prefix}${n}`), `${prefix}sentinel`];
}

function parse(text: string): Obj {
  try {
    return JSON.parse(text) as Obj;
  } catch {
    return {};
  }
}

/** The taints as recorded: `timeAdded` reduced to `true` when set. */
function shown(taints: unknown): Obj[] {
  return (Array.isArray(taints) ? (taints as Obj[]) : []).map((t) => ({ ...t, ...(t.timeAdded !== undefined ? { timeAdded: true } : {}) }));
}

/** The node's NoSchedule taints as recorded. */
function noSchedule(node: Obj): Obj[] {
  return shown(node.spec?.taints).filter((t) => t.effect === 'NoSchedule');
}

/**
 * Waits until `settled` holds for the node (polling), or `timeoutMs` passes; returns the node last read.
 * The capture waits a fixed second after its sentinel node instead (`settled` always false).
 */
async function readNode(send: Send, name: string, settled: (node: Obj) => boolean, timeoutMs: number): Promise<Obj> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const node = parse((await send('GET', `/api/v1/nodes/${name}`, {})).text);
    if (settled(node) || Date.now() > deadline) return node;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Sends the corpus; nodes are named `${prefix}...`. `expected` (the golden, when replaying against
 * Capstan) lets each read stop as soon as the node shows the recorded taints; without it (capture)
 * each read waits `settleMs`.
 */
export async function replay(send: Send, prefix: string, expected?: TaintResult[], settleMs = 1500): Promise<TaintResult[]> {
  const results: TaintResult[] = [];
  const create = async (suffix: string, spec: Obj, status: Obj | undefined): Promise<void> => {
    const body = { apiVersion: 'v1', kind: 'Node', metadata: { name: prefix + suffix }, spec, ...(status ? { status } : {}) };
    const res = await send('POST', '/api/v1/nodes', JSON_TYPE, JSON.stringify(body));
    const o = parse(res.text);
    results.push({ name: `create ${suffix}`, status: res.status, taints: shown(o.spec?.taints) });
  };
  const settle = async (step: string, suffix: string): Promise<void> => {
    const name = `settled ${step} ${suffix}`;
    const want = expected?.find((r) => r.name === name)?.taints;
    const node = await readNode(
      send,
      prefix + suffix,
      (n) => want !== undefined && JSON.stringify(noSchedule(n)) === JSON.stringify(want),
      want === undefined ? settleMs : 20_000,
    );
    results.push({ name, status: 200, taints: noSchedule(node) });
  };
  for (const [suffix, spec, status] of NODES) await create(suffix, spec, status);
  // The sentinel, created last, loses its not-ready taint once the controller has caught up.
  await create('sentinel', {}, { conditions: [condition('Ready', 'True')] });
  await readNode(send, `${prefix}sentinel`, (n) => noSchedule(n).length === 0, 20_000);
  for (const [suffix] of NODES) await settle('after create', suffix);

  // Changes: a ready node goes NotReady, a cordoned one is uncordoned, the pressure clears, a node is
  // cordoned. (A node without conditions is left alone: kube's heartbeat monitoring marks it Unknown
  // once its startup grace period is over, which Capstan does not do.)
  const patch = async (path: string, body: Obj): Promise<void> => {
    const res = await send('PATCH', path, MERGE_PATCH, JSON.stringify(body));
    if (res.status >= 300) throw new Error(`PATCH ${path}: ${res.status} ${res.text}`);
  };
  await patch(`/api/v1/nodes/${prefix}ready/status`, { status: { conditions: [condition('Ready', 'False')] } });
  await patch(`/api/v1/nodes/${prefix}cordoned`, { spec: { unschedulable: null } });
  await patch(`/api/v1/nodes/${prefix}pressure/status`, { status: { conditions: [condition('Ready', 'True')] } });
  await patch(`/api/v1/nodes/${prefix}no-pressure`, { spec: { unschedulable: true } });
  for (const suffix of ['ready', 'cordoned', 'pressure', 'no-pressure']) await settle('after change', suffix);
  return results;
}

/** Deletes the corpus's nodes. */
export async function cleanUp(send: Send, prefix: string): Promise<void> {
  for (const name of nodeNames(prefix)) await send('DELETE', `/api/v1/nodes/${name}`, {});
}
