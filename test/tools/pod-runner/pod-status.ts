/**
 * Builds a pod's status the way the kubelet reports it, from what the pod runner knows of the
 * pod's containers: phase (Pending until every init container completed; Failed when one failed
 * and will not be restarted; terminal once the pod was stopped for its deletion), the five pod conditions (lastTransitionTime kept while a condition's
 * status is unchanged; Initialized and Ready name the containers holding them back, as the
 * kubelet's messages do; the other conditions, PodScheduled among them, kept as their writers left them), host and pod IPs, start time and one status per init container and
 * container (a terminated one with its termination message); observedGeneration (of the status and
 * the kubelet's conditions) is the pod generation the runner last saw.
 */

 

/** One container as the runner sees it. */
export interface ContainerState {
  name: string;
  image: string;
  imageID: string;
  containerID: string;
  restartCount: number;
  ready: boolean;
  /** An init container with restartPolicy Always (a sidecar): initialised once running. */
  sidecar?: boolean;
  /** When the current process started; undefined while waiting. */
  startedAt?: string;
  /** Set once the process exited and will not be restarted (or before a restart). */
  terminated?: Terminated;
  /** Why the container is not running (waiting state). */
  waiting?: { reason: string; message?: string };
  lastTerminated?: Terminated;
}

/** A container's end, as state.terminated reports it. */
export interface Terminated {
  exitCode: number;
  startedAt: string;
  finishedAt: string;
  reason: string;
  message?: string;
}

/** What the runner knows of a pod. */
export interface PodState {
  podIP?: string;
  hostIP: string;
  startTime: string;
  initContainers?: ContainerState[];
  containers: ContainerState[];
  /** The pod's metadata.generation this status is for (status.observedGeneration). */
  generation?: number;
  /** Set when the runner failed the pod itself (DeadlineExceeded): phase Failed with this reason and message. */
  failure?: { reason: string; message: string };
  /** The pod was stopped for its deletion: Succeeded when every container ended with 0, else Failed, whatever its restartPolicy. */
  terminal?: boolean;
}

type ConditionStatus = 'True' | 'False';

function condition(pod: any, type: string, status: ConditionStatus, now: string, reason?: string, message?: string, generation?: number): Record<string, unknown> {
  const previous = (pod.status?.conditions ?? []).find((c: any) => c.type === type);
  const lastTransitionTime = previous && previous.status === status && previous.lastTransitionTime ? previous.lastTransitionTime : now;
  const out: Record<string, unknown> = { type, ...(generation !== undefined ? { observedGeneration: generation } : {}), status, lastProbeTime: null, lastTransitionTime };
  if (reason) out.reason = reason;
  if (message) out.message = message;
  return out;
}

/** The pod conditions the kubelet (the runner) owns. */
const KUBELET_CONDITIONS = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady'];

/** Whether an init container has completed (exited 0 and will not run again), or a sidecar runs. */
const initDone = (c: ContainerState): boolean => (c.sidecar ? Boolean(c.startedAt) : c.terminated?.exitCode === 0);

function containerStatus(c: ContainerState): Record<string, unknown> {
  let state: Record<string, unknown>;
  if (c.terminated) state = { terminated: { ...c.terminated, containerID: c.containerID } };
  else if (c.startedAt) state = { running: { startedAt: c.startedAt } };
  else state = { waiting: c.waiting ?? { reason: 'ContainerCreating' } };
  return {
    name: c.name,
    state,
    lastState: c.lastTerminated ? { terminated: { ...c.lastTerminated, containerID: c.containerID } } : {},
    ready: c.ready,
    restartCount: c.restartCount,
    image: c.image,
    imageID: c.startedAt || c.terminated ? c.imageID : '',
    ...(c.startedAt || c.terminated ? { containerID: c.containerID } : {}),
    started: Boolean(c.startedAt) && !c.terminated,
  };
}

function phaseOf(pod: any, containers: ContainerState[], inits: ContainerState[]): string {
  if (inits.some((c) => c.terminated && c.terminated.exitCode !== 0)) return 'Failed';
  if (!inits.every(initDone)) return 'Pending';
  if (containers.some((c) => !c.startedAt && !c.terminated)) return 'Pending';
  if (containers.every((c) => c.terminated)) {
    const restart = pod.spec?.restartPolicy ?? 'Always';
    if (restart !== 'Always') return containers.every((c) => c.terminated!.exitCode === 0) ? 'Succeeded' : 'Failed';
  }
  return 'Running';
}

/** The pod's status (for a status update) at time `now` (RFC 3339, seconds). */
export function buildPodStatus(pod: any, state: PodState, now: string): Record<string, unknown> {
  const inits = state.initContainers ?? [];
  const unready = state.containers.filter((c) => !c.ready).map((c) => c.name);
  const allReady = unready.length === 0;
  const notReadyReason = allReady ? undefined : 'ContainersNotReady';
  const notReadyMessage = allReady ? undefined : `containers with unready status: [${unready.join(' ')}]`;
  const uninitialised = inits.filter((c) => !initDone(c)).map((c) => c.name);
  const initialised = uninitialised.length === 0;
  const sandboxReady = state.podIP !== undefined;
  const phase = state.failure
    ? 'Failed'
    : state.terminal
      ? state.containers.every((c) => c.terminated?.exitCode === 0)
        ? 'Succeeded'
        : 'Failed'
      : phaseOf(pod, state.containers, inits);
  const g = state.generation;
  // A pod whose containers all completed is not ready for that reason alone (the kubelet's PodCompleted).
  const [readyReason, readyMessage] = phase === 'Succeeded' ? ['PodCompleted', undefined] : [notReadyReason, notReadyMessage];
  const status: Record<string, unknown> = {
    phase,
    conditions: [
      condition(pod, 'PodReadyToStartContainers', sandboxReady ? 'True' : 'False', now, undefined, undefined, g),
      initialised
        ? condition(pod, 'Initialized', 'True', now, undefined, undefined, g)
        : condition(pod, 'Initialized', 'False', now, 'ContainersNotInitialized', `containers with incomplete status: [${uninitialised.join(' ')}]`, g),
      condition(pod, 'Ready', allReady ? 'True' : 'False', now, readyReason, readyMessage, g),
      condition(pod, 'ContainersReady', allReady ? 'True' : 'False', now, readyReason, readyMessage, g),
      // PodScheduled is the scheduler's (with its observedGeneration), others (DisruptionTarget) their writers': kept as they are.
      ...((pod.status?.conditions ?? []) as any[]).filter((c) => !KUBELET_CONDITIONS.includes(c.type)),
      ...((pod.status?.conditions ?? []) as any[]).some((c) => c.type === 'PodScheduled') ? [] : [condition(pod, 'PodScheduled', 'True', now)],
    ],
    hostIP: state.hostIP,
    hostIPs: [{ ip: state.hostIP }],
    startTime: state.startTime,
    containerStatuses: state.containers.map(containerStatus),
  };
  if (inits.length > 0) status.initContainerStatuses = inits.map(containerStatus);
  if (state.podIP) {
    status.podIP = state.podIP;
    status.podIPs = [{ ip: state.podIP }];
  }
  if (pod.status?.qosClass) status.qosClass = pod.status.qosClass;
  if (g !== undefined) status.observedGeneration = g;
  if (state.failure) Object.assign(status, state.failure);
  return status;
}
