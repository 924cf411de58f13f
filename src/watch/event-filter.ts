import type { Obj } from '../api/object-util.js';
import { servedJsonsFor, untilConverted } from '../conversion/converting-io.js';
import type { ChangeEvent } from '../storage/storage.js';
import type { CustomResourceFacts } from '../catalog/custom-resource-facts.js';
import type { ExactField } from '../rest/selection.js';
import { type WatchEventType } from './event-encoding.js';
import { eventDecodes, parsedObjects } from '../storage/parsed-changes.js';

/** The selectors a watch narrows its events with (a handler's `Selection` fits). */
export interface WatchSelection {
  /** Whether any selector narrows the collection (when false, `matches` is not called). */
  active: boolean;
  matches(obj: Obj): boolean;
  /** An exact-match field term every match satisfies (see Selection.exactField). */
  exactField?: ExactField;
}

/**
 * The values of one exact-match field (by ExactField key) in the last change tested. Every watch
 * of a type is handed each change in turn, so a thousand kubelets' `spec.nodeName=<node>` watches
 * read the change's node names once and each compares one string.
 */
const lastExact: { event: ChangeEvent | undefined; key: string; current: string; previous: string | undefined } = {
  event: undefined,
  key: '',
  current: '',
  previous: undefined,
};

/** Whether `event`'s object, before or after, has `exact.value` in the field (a necessary condition for any delivery). */
function exactFieldMayMatch(exact: ExactField, event: ChangeEvent, current: Obj, previous: Obj | undefined): boolean {
  if (lastExact.event !== event || lastExact.key !== exact.key) {
    lastExact.event = event;
    lastExact.key = exact.key;
    lastExact.current = exact.of(current);
    lastExact.previous = previous !== undefined ? exact.of(previous) : undefined;
  }
  return lastExact.current === exact.value || lastExact.previous === exact.value;
}

/**
 * Which event, if any, a watch delivers for a change: nothing outside `namespace` (when given);
 * with selectors, kube's transitions: an object that starts matching is ADDED, one that stops
 * matching is DELETED, one that matches before and after is MODIFIED, and changes of objects that
 * match neither before nor after are not delivered. The removal of an object whose stored bytes do
 * not decode (an unsafe delete of a corrupt object) is delivered as DELETED whatever the selectors:
 * they cannot be evaluated, and a DELETED for an object a client never saw is harmless where a
 * missed one would leave the object in its cache for good. Other undecodable changes never pass
 * selectors.
 */
export type WatchEventFilter = (event: ChangeEvent) => WatchEventType | undefined | Promise<WatchEventType | undefined>;

/**
 * The filter of a watch over `namespace` (undefined: all namespaces) and `selection`. With
 * `convertTo`, selectors are evaluated on the objects converted to that apiVersion by their CRD's
 * webhook, as `convertTo.facts` name it (the answer is then a promise, rejecting with the webhook's error).
 */
export function watchEventFilter(
  namespace: string | undefined,
  selection: WatchSelection,
  convertTo?: { apiVersion: string; facts: CustomResourceFacts },
): WatchEventFilter {
  const prefix = namespace !== undefined ? `${namespace}/` : '';
  // Field selectors of webhook-converted kinds read the converted objects: no shortcut there.
  const exact = convertTo === undefined ? selection.exactField : undefined;
  return (event) => {
    if (prefix !== '' && !event.key.startsWith(prefix)) return undefined;
    if (event.type === 'DELETED' && !eventDecodes(event)) return 'DELETED';
    if (!selection.active) return event.type;
    const { current, previous } = parsedObjects(event);
    if (current === undefined) return undefined;
    if (exact !== undefined && !exactFieldMayMatch(exact, event, current, previous)) return undefined;
    if (convertTo !== undefined) return convertedTransition(convertTo.facts, event, selection, convertTo.apiVersion, previous !== undefined);
    return transition(event.type, selection.matches(current), previous !== undefined && selection.matches(previous));
  };
}

async function convertedTransition(
  facts: CustomResourceFacts,
  event: ChangeEvent,
  selection: WatchSelection,
  apiVersion: string,
  hasPrevious: boolean,
): Promise<WatchEventType | undefined> {
  const jsons = hasPrevious && event.prevJson !== undefined ? [event.json, event.prevJson] : [event.json];
  const converted = await untilConverted(() => servedJsonsFor(facts, jsons, apiVersion, 'object'));
  const [current, previous] = converted.map((json) => JSON.parse(json) as Obj);
  return transition(event.type, selection.matches(current), previous !== undefined && selection.matches(previous));
}

/** kube's selector transitions for a change whose object matches (`now`) and matched (`before`). */
function transition(type: WatchEventType, now: boolean, before: boolean): WatchEventType | undefined {
  if (type === 'ADDED') return now ? 'ADDED' : undefined;
  if (type === 'DELETED') return before ? 'DELETED' : undefined;
  return now && before ? 'MODIFIED' : now ? 'ADDED' : before ? 'DELETED' : undefined;
}
