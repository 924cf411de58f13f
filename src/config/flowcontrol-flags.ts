import type { FlagSpec, FlowControlConfig } from './server-config.js';
import { parseDuration } from './duration.js';

/** kube's strconv.Atoi message, then its negative-value refusal. */
function inflight(name: string, v: string): number {
  if (!/^[-+]?\d+$/.test(v)) throw new Error(`invalid argument "${v}" for "--${name}" flag: strconv.ParseInt: parsing "${v}": invalid syntax`);
  const n = Number(v);
  if (n < 0) throw new Error(`--${name} can not be negative value`);
  return n;
}

/** A Go duration; kube refuses a negative one after parsing it. */
function requestTimeout(v: string): number {
  const negative = v.startsWith('-');
  let ms: number;
  try {
    ms = parseDuration(negative ? v.slice(1) : v);
  } catch (err) {
    throw new Error(`invalid argument "${v}" for "--request-timeout" flag: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  if (negative && ms > 0) throw new Error('--request-timeout can not be negative value');
  return ms;
}

/** The flow control flags, with kube-apiserver's names, defaults, help and refusals. */
export const FLOW_CONTROL_FLAGS: FlagSpec[] = [
  {
    name: 'max-requests-inflight',
    group: 'flowcontrol',
    default: '400',
    help:
      "This and --max-mutating-requests-inflight are summed to determine the server's total concurrency limit (which must be positive) if " +
      '--enable-priority-and-fairness is true. Otherwise, this flag limits the maximum number of non-mutating requests in flight, or a zero value disables the limit completely. With --workers N each worker gets 1/N of it (rounded up).',
    apply: (c, v) => {
      c.maxRequestsInflight = inflight('max-requests-inflight', v);
    },
  },
  {
    name: 'max-mutating-requests-inflight',
    group: 'flowcontrol',
    default: '200',
    help:
      "This and --max-requests-inflight are summed to determine the server's total concurrency limit (which must be positive) if " +
      '--enable-priority-and-fairness is true. Otherwise, this flag limits the maximum number of mutating requests in flight, or a zero value disables the limit completely. With --workers N each worker gets 1/N of it (rounded up).',
    apply: (c, v) => {
      c.maxMutatingRequestsInflight = inflight('max-mutating-requests-inflight', v);
    },
  },
  {
    name: 'request-timeout',
    group: 'flowcontrol',
    default: '1m0s',
    help: 'An optional field indicating the duration a handler must keep a request open before timing it out. This is the default request timeout for requests but may be overridden by flags such as --min-request-timeout for specific types of requests.',
    apply: (c, v) => {
      c.requestTimeoutMs = requestTimeout(v);
    },
  },
  {
    name: 'enable-priority-and-fairness',
    group: 'flowcontrol',
    default: 'true',
    help: 'If true, replace the max-in-flight handler with an enhanced one that queues and dispatches with priority and fairness',
    apply: (c, v) => {
      if (v !== 'true' && v !== 'false') throw new Error(`invalid argument "${v}" for "--enable-priority-and-fairness" flag: must be true or false`);
      c.enablePriorityAndFairness = v === 'true';
    },
  },
];

/** kube's refusal of APF without a positive concurrency limit (undefined when the configuration is usable). */
export function flowControlConfigProblem(c: FlowControlConfig): string | undefined {
  if (!c.enablePriorityAndFairness || c.maxRequestsInflight + c.maxMutatingRequestsInflight > 0) return undefined;
  return `invalid configuration: MaxRequestsInFlight=${c.maxRequestsInflight} and MaxMutatingRequestsInFlight=${c.maxMutatingRequestsInflight}; they must add up to something positive`;
}
