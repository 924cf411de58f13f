/**
 * The event printer, shared by core/v1 and events.k8s.io/v1 Events (kube serves both from one
 * store and prints them alike): Last Seen, Type, Reason, Object, Message; wide adds the rest.
 */
import { col, nameColumn } from '../../codec/table-columns.js';
import { nameOf, since } from './format.js';
import type { Obj, TablePrinter } from '../../codec/table-printer.js';
import { objectField, objectFieldOrUndefined, stringField } from '../../api/values.js';
import { finiteNumberFieldOrUndefined } from './values.js';

/** The fields the printer reads, whichever API version the event is served in. */
interface EventView {
  involved: Obj;
  message: string;
  firstTimestamp: unknown;
  lastTimestamp: unknown;
  eventTime: unknown;
  count: number;
  source: Obj;
  series: Obj | undefined;
}

export function viewOf(ev: Obj): EventView {
  if (stringField(ev, 'apiVersion').startsWith('events.k8s.io/') || (ev.involvedObject === undefined && ev.regarding !== undefined)) {
    return {
      involved: objectField(ev, 'regarding'),
      message: stringField(ev, 'note'),
      firstTimestamp: ev.deprecatedFirstTimestamp,
      lastTimestamp: ev.deprecatedLastTimestamp,
      eventTime: ev.eventTime,
      count: finiteNumberFieldOrUndefined(ev, 'deprecatedCount') ?? 0,
      source: objectField(ev, 'deprecatedSource'),
      series: objectFieldOrUndefined(ev, 'series'),
    };
  }
  return {
    involved: objectField(ev, 'involvedObject'),
    message: stringField(ev, 'message'),
    firstTimestamp: ev.firstTimestamp,
    lastTimestamp: ev.lastTimestamp,
    eventTime: ev.eventTime,
    count: finiteNumberFieldOrUndefined(ev, 'count') ?? 0,
    source: objectField(ev, 'source'),
    series: objectFieldOrUndefined(ev, 'series'),
  };
}

export function isSet(ts: unknown): boolean {
  return typeof ts === 'string' && ts !== '';
}

/** kube's `formatEventSource`: "component, host", falling back to the reporting controller/instance. */
export function eventSource(source: Obj, ev: Obj): string {
  const component = stringField(source, 'component') || stringField(ev, 'reportingController') || stringField(ev, 'reportingComponent');
  const instance = stringField(source, 'host') || stringField(ev, 'reportingInstance');
  return instance === '' ? component : `${component}, ${instance}`;
}

/** All ten cells of an event row (exported for tests). */
export function eventCells(ev: Obj, now: number): unknown[] {
  const v = viewOf(ev);
  const first = isSet(v.firstTimestamp) ? since(v.firstTimestamp, now) : since(v.eventTime, now);
  let last = isSet(v.lastTimestamp) ? since(v.lastTimestamp, now) : first;
  let count = v.count;
  if (v.series) {
    last = since(v.series.lastObservedTime, now);
    count = finiteNumberFieldOrUndefined(v.series, 'count') ?? 0;
  } else if (count === 0) {
    count = 1;
  }
  const kind = stringField(v.involved, 'kind').toLowerCase();
  const name = stringField(v.involved, 'name');
  const target = name !== '' ? `${kind}/${name}` : kind;
  return [
    last,
    stringField(ev, 'type'),
    stringField(ev, 'reason'),
    target,
    stringField(v.involved, 'fieldPath'),
    eventSource(v.source, ev),
    v.message.trim(),
    first,
    count,
    nameOf(ev),
  ];
}

export const eventPrinter: TablePrinter = {
  columns: [
    col('Last Seen', 'string', 'The time at which the most recent occurrence of this event was recorded.'),
    col('Type', 'string', 'Type of this event (Normal, Warning).'),
    col('Reason', 'string', "A short, machine understandable string that gives the reason for the transition into the object's current status."),
    col('Object', 'string', 'The object that this event is about.'),
    col('Subobject', 'string', 'The field path of the part of the object the event is about.', 1),
    col('Source', 'string', 'The component reporting this event.', 1),
    col('Message', 'string', 'A human-readable description of the status of this operation.'),
    col('First Seen', 'string', 'The time at which the event was first recorded.', 1),
    col('Count', 'string', 'The number of times this event has occurred.', 1),
    nameColumn(1),
  ],
  row: (ev, now) => ({ cells: eventCells(ev, now) }),
};
