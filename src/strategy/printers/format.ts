/**
 * Cell formatting shared by the printers, following kube's helpers: HumanDuration ages, label and
 * label-selector strings, container lists, access modes, "N more" lists.
 */
import type { Obj } from '../../codec/table-printer.js';
import { isObject, stringField } from '../../api/values.js';
import { objs, strMap, strs } from './values.js';

/**
 * kube's `duration.HumanDuration`: about two significant figures ("45s", "3m20s", "5h7m", "12d",
 * "2y30d"); tolerates up to one second of clock skew as "0s", "<invalid>" beyond it.
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    const years = Math.trunc(hours / 24 / 365);
    return dy === 0 ? `${years}y` : `${years}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** Milliseconds since the epoch of an RFC 3339 timestamp, or undefined when absent or unparsable. */
export function parseTime(value: unknown): number | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : t;
}

/** kube's `translateTimestampSince`: the age of `timestamp` at `now`, "<unknown>" when unset. */
export function since(timestamp: unknown, now: number): string {
  const t = parseTime(timestamp);
  return t === undefined ? '<unknown>' : humanDuration(now - t);
}

/** The object's age (the "Age" cell). */
export function age(o: Obj, now: number): string {
  return since(isObject(o.metadata) ? o.metadata.creationTimestamp : undefined, now);
}

/** The object's name. */
export function nameOf(o: Obj): string {
  return isObject(o.metadata) ? stringField(o.metadata, 'name') : '';
}

/** kube's `labels.FormatLabels`: sorted `k=v` pairs joined by commas, "<none>" when empty. */
export function formatLabels(labels: Record<string, string>): string {
  const keys = Object.keys(labels).sort();
  if (keys.length === 0) return '<none>';
  return keys.map((k) => `${k}=${labels[k] ?? ''}`).join(',');
}

export const OPERATORS: Record<string, (key: string, values: string[]) => string> = {
  In: (k, v) => `${k} in (${v.join(',')})`,
  NotIn: (k, v) => `${k} notin (${v.join(',')})`,
  Exists: (k) => k,
  DoesNotExist: (k) => `!${k}`,
};

/**
 * `metav1.LabelSelectorAsSelector(sel).String()`: requirements sorted by key, values sorted;
 * "" for a missing or empty selector; undefined when an operator is not valid.
 */
export function labelSelectorString(selector: unknown): string | undefined {
  if (!isObject(selector)) return '';
  const reqs: Array<{ key: string; text: string }> = [];
  for (const [k, v] of Object.entries(strMap(selector, 'matchLabels'))) reqs.push({ key: k, text: `${k}=${v}` });
  for (const e of objs(selector, 'matchExpressions')) {
    const op = OPERATORS[stringField(e, 'operator')];
    if (!op) return undefined;
    const key = stringField(e, 'key');
    reqs.push({ key, text: op(key, [...strs(e, 'values')].sort()) });
  }
  reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return reqs.map((r) => r.text).join(',');
}

/** kube's `metav1.FormatLabelSelector`: "<none>" when it selects everything, "<error>" when invalid. */
export function formatLabelSelector(selector: unknown): string {
  const s = labelSelectorString(selector);
  if (s === undefined) return '<error>';
  return s === '' ? '<none>' : s;
}

/** Names and images of containers, each joined by commas (the wide "Containers"/"Images" cells). */
export function containerCells(podSpec: Obj): [string, string] {
  const containers = objs(podSpec, 'containers');
  return [containers.map((c) => stringField(c, 'name')).join(','), containers.map((c) => stringField(c, 'image')).join(',')];
}

/** kube's `printBoolPtr`: "True"/"False", "<unset>" when absent. */
export function boolPtr(value: unknown): string {
  if (typeof value !== 'boolean') return '<unset>';
  return value ? 'True' : 'False';
}

export const ACCESS_MODES: Array<[string, string]> = [
  ['ReadWriteOnce', 'RWO'],
  ['ReadOnlyMany', 'ROX'],
  ['ReadWriteMany', 'RWX'],
  ['ReadWriteOncePod', 'RWOP'],
];

/** kube's `GetAccessModesAsString`: the abbreviations of the modes present, in a fixed order. */
export function accessModes(modes: unknown[]): string {
  return ACCESS_MODES.filter(([mode]) => modes.includes(mode))
    .map(([, short]) => short)
    .join(',');
}

/** kube's `listWithMoreString`: at most `max` entries, then " + N more...", "<unset>" when empty. */
export function listWithMore(items: string[], max = 3): string {
  if (items.length > max) return `${items.slice(0, max).join(',')} + ${items.length - max} more...`;
  const ret = items.join(',');
  return ret === '' ? '<unset>' : ret;
}

/** The annotation or field holding a PV's or PVC's storage class, annotation first. */
export function storageClassOf(o: Obj, spec: Obj): string {
  const annotations = isObject(o.metadata) ? strMap(o.metadata, 'annotations') : {};
  const beta = annotations['volume.beta.kubernetes.io/storage-class'];
  if (beta !== undefined) return beta;
  return stringField(spec, 'storageClassName');
}
