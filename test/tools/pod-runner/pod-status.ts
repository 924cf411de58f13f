/**
 * Builds a pod's status the way the kubelet reports it, from what the pod runner knows of the
 * pod's containers: phase, the five pod conditions (lastTransitionTime kept while a condition's
 * status is unchanged), host and pod IPs, start time and one containerStatus per container.
 */

 

/** One container as the runner sees it. */
export interface ContainerState {
  name: string;
  image: string;
  imageID: string;
  containerID: string;
  restartCount: number;
  ready: boolean;
  /** When the current process started; undefined while waiting. */
  startedAt?: string;
  /** Set once the process exited and will not be restarted (or before a restart). */
  terminated?: { exitCode: number; startedAt: string; finishedAt: string; reason: string };
  /** Why the container is not running (waiting state). */
  waiting?: { reason: string; message?: string };
  lastTerminated?: { exitCode: number; startedAt: string; finishedAt: string; reason: string };
}

/** What the runner knows of a pod. */
export interface PodState {
  podIP?: string;
  hostIP: string;
  startTime: string;
  containers: ContainerState[];
}

type ConditionStatus = 'True' | 'False';

function condition(pod: any, type: string, status: ConditionStatus, now: string, reason?: string): Record<string, unknown> {
  const previous = (pod.status?.conditions ?? []).find((c: any) => c.type === type);
  const lastTransitionTime = previous && previous.status === status && previous.lastTransitionTime ? previous.lastTransitionTime : now;
  const out: Record<string, unknown> = { type, status, lastProbeTime: null, lastTransitionTime };
  if (reason) out.reason = reason;
  return out;
}

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

function phaseOf(pod: any, containers: ContainerState[]): string {
  if (containers.some((c) => !c.startedAt && !c.terminated)) return 'Pending';
  if (containers.every((c) => c.terminated)) {
    const restart = pod.spec?.restartPolicy ?? 'Always';
    if (restart !== 'Always') return containers.every((c) => c.terminated!.exitCode === 0) ? 'Succeeded' : 'Failed';
  }
  return 'Running';
}

/** The pod's status (for a status update) at time `now` (RFC 3339, seconds). */
export function buildPodStatus(pod: any, state: PodState, now: string): Record<string, unknown> {
  const allReady = state.containers.every((c) => c.ready);
  const notReadyReason = allReady ? undefined : 'ContainersNotReady';
  const sandboxReady = state.podIP !== undefined;
  const status: Record<string, unknown> = {
    phase: phaseOf(pod, state.containers),
    conditions: [
      condition(pod, 'PodReadyToStartContainers', sandboxReady ? 'True' : 'False', now),
      condition(pod, 'Initialized', 'True', now),
      condition(pod, 'Ready', allReady ? 'True' : 'False', now, notReadyReason),
      condition(pod, 'ContainersReady', allReady ? 'True' : 'False', now, notReadyReason),
      condition(pod, 'PodScheduled', 'True', now),
    ],
    hostIP: state.hostIP,
    hostIPs: [{ ip: state.hostIP }],
    startTime: state.startTime,
    containerStatuses: state.containers.map(containerStatus),
  };
  if (state.podIP) {
    status.podIP = state.podIP;
    status.podIPs = [{ ip: state.podIP }];
  }
  if (pod.status?.qosClass) status.qosClass = pod.status.qosClass;
  return status;
}
