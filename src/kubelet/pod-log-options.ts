/**
 * PodLogOptions as kube-apiserver reads them from the query of `GET pods/NAME/log` and validates
 * them (ValidatePodLogOptions, with the PodLogsQuerySplitStreams gate off as in 1.36), and the
 * kubelet query they become (kube's LogLocation).
 */
import { badRequest, invalid, type StatusCause } from '../api/errors.js';
import { queryBool, queryInt64 } from '../api/request-options.js';
import { forbiddenField, goQuote, invalidField } from '../validation/field-errors.js';

/** The options of one log request. */
export interface PodLogOptions {
  /** '' when not given. */
  container: string;
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  insecureSkipTLSVerifyBackend: boolean;
  sinceSeconds?: number;
  /** As the kubelet is sent it: RFC 3339 in UTC, whole seconds. */
  sinceTime?: string;
  tailLines?: number;
  limitBytes?: number;
}

const RFC3339 = '2006-01-02T15:04:05Z07:00';

/** The parts of RFC 3339 in Go's layout order: what each reads, and the layout element it is. */
const ELEMENTS: Array<{ re: RegExp; layout: string; range?: [string, number, number] }> = [
  { re: /^\d{4}/, layout: '2006' },
  { re: /^-/, layout: '-' },
  { re: /^\d{2}/, layout: '01', range: ['month', 1, 12] },
  { re: /^-/, layout: '-' },
  { re: /^\d{2}/, layout: '02', range: ['day', 1, 31] },
  { re: /^T/, layout: 'T' },
  { re: /^\d{2}/, layout: '15', range: ['hour', 0, 23] },
  { re: /^:/, layout: ':' },
  { re: /^\d{2}/, layout: '04', range: ['minute', 0, 59] },
  { re: /^:/, layout: ':' },
  { re: /^\d{2}(\.\d+)?/, layout: '05', range: ['second', 0, 59] },
  { re: /^(Z|[+-]\d{2}:\d{2})/, layout: 'Z07:00' },
];

/**
 * metav1.Time from a query value (Go's time.Parse with RFC 3339), as the kubelet is sent it: UTC,
 * whole seconds. An empty value is Go's zero time. Errors in Go's words.
 */
export function querySinceTime(v: string): string {
  if (v === '') return '0001-01-01T00:00:00Z';
  const prefix = `parsing time ${goQuote(v)}`;
  let rest = v;
  const values: string[] = [];
  for (const e of ELEMENTS) {
    const m = e.re.exec(rest);
    if (m === null) throw badRequest(`${prefix} as ${goQuote(RFC3339)}: cannot parse ${goQuote(rest)} as ${goQuote(e.layout)}`);
    if (e.range !== undefined) {
      const n = Math.floor(Number(m[0]));
      if (n < e.range[1] || n > e.range[2]) throw badRequest(`${prefix}: ${e.range[0]} out of range`);
    }
    values.push(m[0]);
    rest = rest.slice(m[0].length);
  }
  if (rest !== '') throw badRequest(`${prefix}: extra text: ${goQuote(rest)}`);
  const daysInMonth = new Date(Date.UTC(Number(values[0]), Number(values[2]), 0)).getUTCDate();
  if (Number(values[4]) > daysInMonth) throw badRequest(`${prefix}: day out of range`);
  const ms = Date.parse(values.join(''));
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/** The options of a log request's query, validated; kube's 400 for a value that does not convert, its 422 naming the pod otherwise. */
export function podLogOptions(query: URLSearchParams, podName: string): PodLogOptions {
  const sinceTime = query.get('sinceTime');
  const options: PodLogOptions = {
    container: query.get('container') ?? '',
    follow: queryBool(query, 'follow'),
    previous: queryBool(query, 'previous'),
    timestamps: queryBool(query, 'timestamps'),
    insecureSkipTLSVerifyBackend: queryBool(query, 'insecureSkipTLSVerifyBackend'),
    sinceSeconds: queryInt64(query, 'sinceSeconds'),
    tailLines: queryInt64(query, 'tailLines'),
    limitBytes: queryInt64(query, 'limitBytes'),
    sinceTime: sinceTime === null ? undefined : querySinceTime(sinceTime),
  };
  const causes: StatusCause[] = [];
  // The value as Go prints an int64 (exact beyond 2^53, where the number is not).
  const printed = (name: string): { goSyntax: string } => ({ goSyntax: BigInt(query.get(name) ?? '0').toString() });
  if (options.tailLines !== undefined && options.tailLines < 0)
    causes.push(invalidField('tailLines', printed('tailLines'), 'must be greater than or equal to 0'));
  if (options.limitBytes !== undefined && options.limitBytes < 1) causes.push(invalidField('limitBytes', printed('limitBytes'), 'must be greater than 0'));
  if (options.sinceSeconds !== undefined && options.sinceTime !== undefined)
    causes.push(forbiddenField('[]', 'at most one of `sinceTime` or `sinceSeconds` may be specified'));
  else if (options.sinceSeconds !== undefined && options.sinceSeconds < 1)
    causes.push(invalidField('sinceSeconds', printed('sinceSeconds'), 'must be greater than 0'));
  if (query.has('stream')) causes.push(forbiddenField('stream', 'may not be specified'));
  if (causes.length > 0) throw invalid('PodLogOptions', '', podName, causes);
  return options;
}

/** The kubelet's query for these options (kube's LogLocation: only what was set, keys sorted). */
export function kubeletLogParams(options: PodLogOptions): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (options.follow) out.push(['follow', 'true']);
  if (options.previous) out.push(['previous', 'true']);
  if (options.timestamps) out.push(['timestamps', 'true']);
  if (options.sinceSeconds !== undefined) out.push(['sinceSeconds', String(options.sinceSeconds)]);
  if (options.sinceTime !== undefined) out.push(['sinceTime', options.sinceTime]);
  if (options.tailLines !== undefined) out.push(['tailLines', String(options.tailLines)]);
  if (options.limitBytes !== undefined) out.push(['limitBytes', String(options.limitBytes)]);
  return out;
}
