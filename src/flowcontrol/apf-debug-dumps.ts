import type { ApfController, LevelState } from './apf-controller.js';
import { tabwriterText } from './go-tabwriter.js';
import type { FairRequest, QueueSetDump } from './queue-set.js';

/**
 * kube's APF debug dumps (apf_controller_debug.go): `dump_priority_levels` (a row per level),
 * `dump_queues` (a row per queue) and `dump_requests` (a row per waiting or executing request,
 * `includeRequestDetails` adding who asked what), plain-text tables with kube's column headers,
 * cells ending in `,` and aligned by Go's tabwriter. Levels come in name order (kube walks a map).
 */

/** A request's time (ms on the performance clock) as Go's RFC3339Nano in UTC; 0 is Go's zero time. */
function rfc3339Nano(perfMs: number): string {
  if (perfMs === 0) return '0001-01-01T00:00:00Z';
  const wall = performance.timeOrigin + perfMs;
  const whole = Math.floor(wall);
  const subMillisecondNs = Math.min(999_999, Math.round((wall - whole) * 1e6));
  const iso = new Date(whole).toISOString();
  const fraction = `${iso.slice(20, 23)}${String(subMillisecondNs).padStart(6, '0')}`.replace(/0+$/, '');
  return `${iso.slice(0, 19)}${fraction === '' ? '' : `.${fraction}`}Z`;
}

/** `value` in units of 10^-digits, with Go's trailing zeros trimmed. */
function decimal(value: number, digits: number): string {
  const scale = 10 ** digits;
  const int = Math.floor(value / scale);
  const frac = String(value % scale)
    .padStart(digits, '0')
    .replace(/0+$/, '');
  return frac === '' ? String(int) : `${int}.${frac}`;
}

/** A duration in milliseconds as Go's time.Duration.String writes it (`0s`, `5ms`, `1.5s`, `1m0s`). */
export function goDuration(ms: number): string {
  let ns = Math.round(Math.abs(ms) * 1e6);
  if (ns === 0) return '0s';
  let text: string;
  if (ns < 1e3) text = `${ns}ns`;
  else if (ns < 1e6) text = `${decimal(ns, 3)}µs`;
  else if (ns < 1e9) text = `${decimal(ns, 6)}ms`;
  else {
    const h = Math.floor(ns / 3.6e12);
    ns -= h * 3.6e12;
    const m = Math.floor(ns / 6e10);
    ns -= m * 6e10;
    text = `${decimal(ns, 9)}s`;
    if (h > 0 || m > 0) text = `${m}m${text}`;
    if (h > 0) text = `${h}h${text}`;
  }
  return ms < 0 ? `-${text}` : text;
}

/** kube's SeatSeconds.String: eight decimals and `ss`. */
function seatSeconds(value: number): string {
  const scaled = Math.max(0, Math.round(value * 1e8));
  return `${Math.floor(scaled / 1e8)}.${String(scaled % 1e8).padStart(8, '0')}ss`;
}

/** kube's row(): cells joined by `,\t`, i.e. each cell but the last ends with `,`. */
function cells(...values: string[]): string[] {
  return values.map((v, i) => (i < values.length - 1 ? `${v},` : v));
}

function levels(controller: ApfController): { state: LevelState; dump: QueueSetDump }[] {
  return controller.levelStates().map((state) => ({ state, dump: state.queues.dump() }));
}

/** `GET /debug/api_priority_and_fairness/dump_priority_levels`. */
export function dumpPriorityLevels(controller: ApfController): string {
  const rows: string[][] = [
    cells(
      'PriorityLevelName',
      'ActiveQueues',
      'IsIdle',
      'IsQuiescing',
      'WaitingRequests',
      'ExecutingRequests',
      'DispatchedRequests',
      'RejectedRequests',
      'TimedoutRequests',
      'CancelledRequests',
    ),
  ];
  for (const { state, dump } of levels(controller)) {
    rows.push(
      cells(
        state.config.name,
        String(dump.queues.filter((q) => q.waiting.length > 0).length),
        String(state.queues.idle),
        String(state.quiescing),
        String(dump.waiting),
        String(dump.executing),
        String(dump.dispatched),
        String(dump.rejected),
        // kube counts no request as timed out (its time-outs are counted as cancelled).
        '0',
        String(dump.cancelled),
      ),
    );
  }
  return tabwriterText(rows);
}

/** `GET /debug/api_priority_and_fairness/dump_queues`. */
export function dumpQueues(controller: ApfController): string {
  const rows: string[][] = [
    cells(
      'PriorityLevelName',
      'Index',
      'PendingRequests',
      'ExecutingRequests',
      'SeatsInUse',
      'NextDispatchR',
      'InitialSeatsSum',
      'MaxSeatsSum',
      'TotalWorkSum',
    ),
  ];
  for (const { state, dump } of levels(controller)) {
    dump.queues.forEach((q, i) => {
      rows.push(
        cells(
          state.config.name,
          String(i),
          String(q.waiting.length),
          String(q.executingRequests),
          String(q.seatsInUse),
          seatSeconds(q.nextDispatchR),
          String(q.initialSeatsSum),
          String(q.maxSeatsSum),
          seatSeconds(q.totalWorkSum),
        ),
      );
    });
  }
  return tabwriterText(rows);
}

/** `GET /debug/api_priority_and_fairness/dump_requests[?includeRequestDetails=...]`. */
export function dumpRequests(controller: ApfController, includeRequestDetails: boolean): string {
  const header = [
    'PriorityLevelName',
    'FlowSchemaName',
    'QueueIndex',
    'RequestIndexInQueue',
    'FlowDistingsher',
    'ArriveTime',
    'InitialSeats',
    'FinalSeats',
    'AdditionalLatency',
    'StartTime',
  ];
  if (includeRequestDetails) header.push('UserName', 'Verb', 'APIPath', 'Namespace', 'Name', 'APIVersion', 'Resource', 'SubResource');
  const rows: string[][] = [cells(...header)];
  for (const { state, dump } of levels(controller)) {
    const row = (queueIndex: number, indexInQueue: number, r: FairRequest): void => {
      const d = r.digest;
      const values = [
        state.config.name,
        r.flow.flowSchema,
        String(queueIndex),
        String(indexInQueue),
        d?.distinguisher() ?? '',
        rfc3339Nano(r.arrivalTime),
        String(r.estimate.initialSeats),
        String(r.estimate.finalSeats),
        goDuration(r.estimate.additionalLatencyMs),
        rfc3339Nano(r.startTime * 1000),
      ];
      if (includeRequestDetails) {
        const gv = d === undefined ? '' : d.apiGroup === '' ? d.apiVersion : `${d.apiGroup}/${d.apiVersion}`;
        values.push(d?.user ?? '', d?.verb ?? '', d?.path ?? '', d?.namespace ?? '', d?.name ?? '', gv, d?.resource ?? '', d?.subresource ?? '');
      }
      rows.push(cells(...values));
    };
    dump.queues.forEach((q, iq) => {
      q.waiting.forEach((r, ir) => row(iq, ir, r));
      for (const r of q.executing) row(iq, -1, r);
    });
    for (const r of dump.queuelessExecuting) row(-1, -1, r);
  }
  return tabwriterText(rows);
}
