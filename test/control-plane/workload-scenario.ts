/**
 * What a new user does first with a whole control plane, run with kubectl against any server whose
 * kube-controller-manager, kube-scheduler and kwok nodes are running: a Deployment of 3 becomes
 * Available, a rolling update, an undo, a scale-down, a Job that completes, `kubectl drain` of a
 * node with pods, and the garbage collection of the deleted Deployment's ReplicaSets and Pods.
 * Each step checks what it waited for and is timed; the first failed check throws.
 */
import assert from 'node:assert/strict';
import { kubectlFor, type Kubectl } from '../e2e/kubectl.js';

/** One timed step of the scenario. */
export interface StepTiming {
  step: string;
  ms: number;
}

const IMAGE_A = 'registry.k8s.io/pause:3.10';
const IMAGE_B = 'registry.k8s.io/pause:3.9';
const WAIT = '120s';
const KUBECTL_TIMEOUT_MS = 150_000;

async function timed(steps: StepTiming[], step: string, body: () => Promise<void>): Promise<void> {
  const t0 = performance.now();
  await body();
  steps.push({ step, ms: Math.round(performance.now() - t0) });
}

/** Polls `check` every 100 ms until it returns true, for up to `timeoutMs`; then fails with `what`. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function podsOf(k: Kubectl, ns: string, selector: string): Promise<any[]> {
  const list = await k.json(['get', 'pods', '-n', ns, '-l', selector]);
  return list.items as any[];
}

/**
 * Runs the scenario in a new namespace `ns` (deleted at the end, which waits for the namespace
 * controller) and returns the steps' durations.
 */
export async function runWorkloadScenario(kubeconfig: string, ns: string): Promise<StepTiming[]> {
  const k = kubectlFor(kubeconfig);
  const run = (args: string[]): Promise<string> =>
    k.run(args, { timeoutMs: KUBECTL_TIMEOUT_MS }).then((r) => {
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${String(r.code)}: ${r.stderr}${r.stdout}`);
      return r.stdout;
    });
  const steps: StepTiming[] = [];
  await run(['create', 'namespace', ns]);
  const inNs = (...args: string[]): string[] => [...args, '-n', ns];

  await timed(steps, 'deployment of 3 available', async () => {
    await run(inNs('create', 'deployment', 'web', `--image=${IMAGE_A}`, '--replicas=3'));
    await run(inNs('rollout', 'status', 'deployment/web', `--timeout=${WAIT}`));
  });
  const first = await podsOf(k, ns, 'app=web');
  assert.equal(first.length, 3, 'three pods');
  for (const p of first) {
    assert.ok(p.spec.nodeName, `pod ${p.metadata.name} is scheduled`);
    assert.equal(p.status.phase, 'Running', `pod ${p.metadata.name} runs`);
  }
  // The deployment controller writes core/v1 Events, the scheduler events.k8s.io/v1 ones: both APIs show both.
  for (const api of ['events', 'events.v1.events.k8s.io']) {
    await until(`ScalingReplicaSet and Scheduled ${api}`, async () => {
      const reasons = new Set(((await k.json(inNs('get', api))).items as any[]).map((e) => e.reason as string));
      return reasons.has('ScalingReplicaSet') && reasons.has('Scheduled');
    });
  }

  await timed(steps, 'service endpoints', async () => {
    await run(inNs('expose', 'deployment', 'web', '--port=80'));
    await until('an EndpointSlice with the 3 pods ready', async () => {
      const slices = (await k.json(inNs('get', 'endpointslices', '-l', 'kubernetes.io/service-name=web'))).items as any[];
      const ready = slices.flatMap((s) => (s.endpoints ?? []) as any[]).filter((e) => e.conditions?.ready === true);
      return ready.length === 3 && ready.every((e) => first.some((p) => p.status.podIP === e.addresses[0]));
    });
  });

  await timed(steps, 'rolling update', async () => {
    await run(inNs('set', 'image', 'deployment/web', `pause=${IMAGE_B}`));
    await run(inNs('rollout', 'status', 'deployment/web', `--timeout=${WAIT}`));
  });
  const rsAfterUpdate = (await k.json(inNs('get', 'replicasets', '-l', 'app=web'))).items as any[];
  assert.equal(rsAfterUpdate.length, 2, 'the update made a second ReplicaSet');
  assert.deepEqual(
    rsAfterUpdate.map((rs) => [rs.spec.template.spec.containers[0].image, rs.spec.replicas]).sort(),
    [
      [IMAGE_A, 0],
      [IMAGE_B, 3],
    ],
    'the old ReplicaSet is scaled to 0, the new one to 3',
  );

  await timed(steps, 'undo', async () => {
    await run(inNs('rollout', 'undo', 'deployment/web'));
    await run(inNs('rollout', 'status', 'deployment/web', `--timeout=${WAIT}`));
  });
  const deployment = await k.json(inNs('get', 'deployment', 'web'));
  assert.equal(deployment.spec.template.spec.containers[0].image, IMAGE_A, 'undo restored the first image');
  assert.equal(deployment.metadata.annotations['deployment.kubernetes.io/revision'], '3', 'undo is revision 3');

  await timed(steps, 'scale down to 1', async () => {
    await run(inNs('scale', 'deployment/web', '--replicas=1'));
    await until('one web pod', async () => (await podsOf(k, ns, 'app=web')).length === 1);
  });

  await timed(steps, 'job completes', async () => {
    await run(inNs('create', 'job', 'once', `--image=${IMAGE_A}`));
    await run(inNs('wait', '--for=condition=Complete', 'job/once', `--timeout=${WAIT}`));
  });
  const job = await k.json(inNs('get', 'job', 'once'));
  assert.equal(job.status.succeeded, 1, 'the job succeeded once');

  await timed(steps, 'drain a node', async () => {
    await run(inNs('scale', 'deployment/web', '--replicas=2'));
    await run(inNs('rollout', 'status', 'deployment/web', `--timeout=${WAIT}`));
    const node = (await podsOf(k, ns, 'app=web'))[0].spec.nodeName as string;
    await run(['drain', node, '--ignore-daemonsets', '--delete-emptydir-data', `--timeout=${WAIT}`]);
    await until('two web pods Running, none on the drained node', async () => {
      const pods = (await podsOf(k, ns, 'app=web')).filter((p) => p.metadata.deletionTimestamp === undefined);
      return pods.length === 2 && pods.every((p) => p.spec.nodeName !== node && p.status.phase === 'Running');
    });
    const drained = await k.json(['get', 'node', node]);
    assert.equal(drained.spec.unschedulable, true, 'the drained node is cordoned');
    await run(['uncordon', node]);
  });

  await timed(steps, 'garbage collection of a deleted deployment', async () => {
    await run(inNs('delete', 'deployment', 'web', '--wait=false'));
    await until('no ReplicaSet or Pod of web left', async () => {
      const rs = (await k.json(inNs('get', 'replicasets', '-l', 'app=web'))).items as any[];
      return rs.length === 0 && (await podsOf(k, ns, 'app=web')).length === 0;
    });
  });

  await timed(steps, 'namespace deleted', async () => {
    await run(['delete', 'namespace', ns, `--timeout=${WAIT}`]);
  });
  return steps;
}
