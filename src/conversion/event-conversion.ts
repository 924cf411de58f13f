import type { Obj } from '../api/object-util.js';
import { cloneJson } from '../codec/json-value.js';
/**
 * Event conversion between core/v1 (the storage version: kube keeps both APIs' events in the one
 * core `events` store) and events.k8s.io/v1, with kube's field mapping
 * (pkg/apis/events/v1/conversion.go): regarding <-> involvedObject, note <-> message,
 * deprecatedSource <-> source, deprecatedFirstTimestamp/deprecatedLastTimestamp/deprecatedCount <->
 * firstTimestamp/lastTimestamp/count, reportingController <-> reportingComponent; every other field
 * (eventTime, series, action, reason, related, reportingInstance, type) keeps its name. Nothing is
 * lost either way. Fields come out in the target Go type's order, with the times Go always writes
 * (null when unset); inputs are not modified.
 */

/** core/v1 field -> events.k8s.io/v1 field, in core/v1's Go field order. */
const CORE_FIELDS: ReadonlyArray<readonly [string, string]> = [
  ['involvedObject', 'regarding'],
  ['reason', 'reason'],
  ['message', 'note'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
  ['type', 'type'],
  ['eventTime', 'eventTime'],
  ['series', 'series'],
  ['action', 'action'],
  ['related', 'related'],
  ['reportingComponent', 'reportingController'],
  ['reportingInstance', 'reportingInstance'],
];

/** events.k8s.io/v1's Go field order. */
const EVENTS_ORDER = [
  'eventTime',
  'series',
  'reportingController',
  'reportingInstance',
  'action',
  'reason',
  'regarding',
  'related',
  'note',
  'type',
  'deprecatedSource',
  'deprecatedFirstTimestamp',
  'deprecatedLastTimestamp',
  'deprecatedCount',
];

const CORE_TO_EVENTS = new Map(CORE_FIELDS);
const EVENTS_TO_CORE = new Map(CORE_FIELDS.map(([core, events]) => [events, core]));

const CORE_ORDER = CORE_FIELDS.map(([core]) => core);
const CORE_TO_CORE = new Map(CORE_ORDER.map((f) => [f, f]));

/**
 * Time fields Go always writes (struct-typed `metav1.Time`/`MicroTime`, not pointers): a zero time
 * marshals as null, so kube shows `"eventTime": null` on an event that has none.
 */
const CORE_TIMES = ['firstTimestamp', 'lastTimestamp', 'eventTime'];
const EVENTS_TIMES = ['eventTime', 'deprecatedFirstTimestamp', 'deprecatedLastTimestamp'];

/**
 * Copies the fields of `from` named in `order` (after renaming with `rename`) in that order; the
 * `times` that are unset come out as null.
 */
function renamed(from: Obj, apiVersion: string, rename: ReadonlyMap<string, string>, order: readonly string[], times: readonly string[]): Obj {
  const fields: Obj = {};
  for (const key of times) fields[key] = null;
  for (const [key, value] of Object.entries(from)) {
    const target = rename.get(key);
    if (target !== undefined && value !== undefined) fields[target] = cloneJson(value);
  }
  const out: Obj = { kind: 'Event', apiVersion, metadata: cloneJson(from.metadata ?? {}) };
  for (const key of order) if (key in fields) out[key] = fields[key];
  return out;
}

/** A core/v1 Event as an events.k8s.io/v1 Event. */
export function coreEventToEventsV1(event: Obj): Obj {
  return renamed(event, 'events.k8s.io/v1', CORE_TO_EVENTS, EVENTS_ORDER, EVENTS_TIMES);
}

/** An events.k8s.io/v1 Event as a core/v1 Event. */
export function eventsV1ToCoreEvent(event: Obj): Obj {
  return renamed(event, 'v1', EVENTS_TO_CORE, CORE_ORDER, CORE_TIMES);
}

/** A core/v1 Event as kube stores and serves it: Go's field order, unset times as null. */
export function coreEventAsStored(event: Obj): Obj {
  return renamed(event, 'v1', CORE_TO_CORE, CORE_ORDER, CORE_TIMES);
}
