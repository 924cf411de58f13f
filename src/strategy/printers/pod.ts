/**
 * The pod printer: Ready "n/m", the Status reason kubectl users know (Init:1/2, CrashLoopBackOff,
 * Completed, Terminating, ...), Restarts with "(5m ago)", and the wide IP/Node columns. Follows
 * kube-apiserver's printPod, including restartable (sidecar) init containers.
 */
import { ageColumn, col, nameColumn } from '../../codec/table-columns.js';
import { age, parseTime, since } from './format.js';
import type { Obj, PrintedRow, TablePrinter, TableRowCondition } from '../../codec/table-printer.js';
import { booleanField, isObject, objectField, objectFieldOrUndefined, stringField } from '../../api/values.js';
import { finiteNumberField, objs } from './values.js';

export const SUCCEEDED: TableRowCondition[] = [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }];
export const FAILED: TableRowCondition[] = [{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' }];

export function conditionStatus(conditions: Obj[], type: string): string | undefined {
  const c = conditions.find((x) => stringField(x, 'type') === type);
  return c ? stringField(c, 'status') : undefined;
}

/** Latest `lastState.terminated.finishedAt` seen so far (ms), kept in `latest`. */
export function laterFinish(status: Obj, latest: number): number {
  const terminated = objectFieldOrUndefined(objectField(status, 'lastState'), 'terminated');
  const t = terminated ? parseTime(terminated.finishedAt) : undefined;
  return t !== undefined && t > latest ? t : latest;
}

export function terminatedReason(terminated: Obj, prefix: string): string {
  const reason = stringField(terminated, 'reason');
  if (reason !== '') return `${prefix}${reason}`;
  const signal = finiteNumberField(terminated, 'signal');
  return signal !== 0 ? `${prefix}Signal:${signal}` : `${prefix}ExitCode:${finiteNumberField(terminated, 'exitCode')}`;
}

/** The Ready, Status and Restarts cells of a pod (exported for tests). */
export function podStatusCells(pod: Obj, now: number): { ready: string; status: string; restarts: string; conditions?: TableRowCondition[] } {
  const spec = objectField(pod, 'spec');
  const status = objectField(pod, 'status');
  const meta = objectField(pod, 'metadata');
  const podConditions = objs(status, 'conditions');
  const phase = stringField(status, 'phase');
  let reason = stringField(status, 'reason') || phase;
  if (podConditions.some((c) => stringField(c, 'type') === 'PodScheduled' && stringField(c, 'reason') === 'SchedulingGated')) reason = 'SchedulingGated';

  const initContainers = new Map<string, Obj>();
  let total = objs(spec, 'containers').length;
  for (const c of objs(spec, 'initContainers')) {
    initContainers.set(stringField(c, 'name'), c);
    if (stringField(c, 'restartPolicy') === 'Always') total++;
  }
  const restartable = (name: string): boolean => stringField(initContainers.get(name), 'restartPolicy') === 'Always';

  let restarts = 0;
  let sidecarRestarts = 0;
  let ready = 0;
  let lastRestart = Number.NEGATIVE_INFINITY;
  let lastSidecarRestart = Number.NEGATIVE_INFINITY;
  let initializing = false;
  const initStatuses = objs(status, 'initContainerStatuses');
  for (let i = 0; i < initStatuses.length; i++) {
    const cs = initStatuses[i] ?? {};
    const name = stringField(cs, 'name');
    restarts += finiteNumberField(cs, 'restartCount');
    lastRestart = laterFinish(cs, lastRestart);
    if (restartable(name)) {
      sidecarRestarts += finiteNumberField(cs, 'restartCount');
      lastSidecarRestart = laterFinish(cs, lastSidecarRestart);
    }
    const state = objectField(cs, 'state');
    const terminated = objectFieldOrUndefined(state, 'terminated');
    const waiting = objectFieldOrUndefined(state, 'waiting');
    if (terminated && finiteNumberField(terminated, 'exitCode') === 0) continue;
    if (restartable(name) && booleanField(cs, 'started')) {
      if (booleanField(cs, 'ready')) ready++;
      continue;
    }
    if (terminated) reason = terminatedReason(terminated, 'Init:');
    else if (waiting && stringField(waiting, 'reason') !== '' && stringField(waiting, 'reason') !== 'PodInitializing')
      reason = `Init:${stringField(waiting, 'reason')}`;
    else reason = `Init:${i}/${objs(spec, 'initContainers').length}`;
    initializing = true;
    break;
  }

  if (!initializing || conditionStatus(podConditions, 'Initialized') === 'True') {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const statuses = objs(status, 'containerStatuses');
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i] ?? {};
      restarts += finiteNumberField(cs, 'restartCount');
      lastRestart = laterFinish(cs, lastRestart);
      const state = objectField(cs, 'state');
      const terminated = objectFieldOrUndefined(state, 'terminated');
      const waiting = objectFieldOrUndefined(state, 'waiting');
      if (waiting && stringField(waiting, 'reason') !== '') reason = stringField(waiting, 'reason');
      else if (terminated) reason = terminatedReason(terminated, '');
      else if (booleanField(cs, 'ready') && objectFieldOrUndefined(state, 'running')) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      reason = conditionStatus(podConditions, 'Ready') === 'True' ? 'Running' : 'NotReady';
    }
  }

  const deleting = typeof meta.deletionTimestamp === 'string' && meta.deletionTimestamp !== '';
  if (deleting && stringField(status, 'reason') === 'NodeLost') reason = 'Unknown';
  else if (deleting && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';

  let restartsCell = String(restarts);
  if (restarts !== 0 && Number.isFinite(lastRestart)) restartsCell = `${restarts} (${since(new Date(lastRestart).toISOString(), now)} ago)`;

  const out: { ready: string; status: string; restarts: string; conditions?: TableRowCondition[] } = {
    ready: `${ready}/${total}`,
    status: reason,
    restarts: restartsCell,
  };
  if (phase === 'Succeeded') out.conditions = SUCCEEDED;
  else if (phase === 'Failed') out.conditions = FAILED;
  return out;
}

export function readinessGates(spec: Obj, status: Obj): string {
  const gates = objs(spec, 'readinessGates');
  if (gates.length === 0) return '<none>';
  const conditions = objs(status, 'conditions');
  let trueCount = 0;
  for (const g of gates) {
    if (conditionStatus(conditions, stringField(g, 'conditionType')) === 'True') trueCount++;
  }
  return `${trueCount}/${gates.length}`;
}

export function podIP(status: Obj): string {
  const first = objs(status, 'podIPs')[0];
  const ip = (first && stringField(first, 'ip')) || stringField(status, 'podIP');
  return ip || '<none>';
}

export const podPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
    col('Status', 'string', 'The aggregate status of the containers in this pod.'),
    col('Restarts', 'string', 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.'),
    ageColumn(),
    col('IP', 'string', 'IP address allocated to the pod.', 1),
    col('Node', 'string', 'The node the pod is scheduled onto.', 1),
    col('Nominated Node', 'string', 'The node the scheduler nominated for this pod when preempting.', 1),
    col('Readiness Gates', 'string', 'Readiness gates of the pod that report true.', 1),
  ],
  row(pod: Obj, now: number): PrintedRow {
    const spec = objectField(pod, 'spec');
    const status = objectField(pod, 'status');
    const s = podStatusCells(pod, now);
    const row: PrintedRow = {
      cells: [
        isObject(pod.metadata) ? stringField(pod.metadata, 'name') : '',
        s.ready,
        s.status,
        s.restarts,
        age(pod, now),
        podIP(status),
        stringField(spec, 'nodeName') || '<none>',
        stringField(status, 'nominatedNodeName') || '<none>',
        readinessGates(spec, status),
      ],
    };
    if (s.conditions) row.conditions = s.conditions;
    return row;
  },
};
