/**
 * kube-apiserver 1.36's Event validation beyond metadata, checked against test/golden/validation/.
 * Both APIs store the same object and kube picks the rules by the request's API version.
 *
 * Core v1 (legacyValidateEvent, the only check kube runs for writes through /api/v1): an event
 * without `eventTime` (the older recorder style) must name an involved object in its own namespace
 * (or none, in the default namespace). An event with `eventTime` needs reportingComponent (a
 * qualified name), reportingInstance, action and reason, within kube's length limits, and an involved
 * object namespace unless it lives in default or kube-system. Create and update run the same checks:
 * through v1 nothing is immutable. Not checked yet: the event namespace's own format (a request
 * namespace always passes).
 *
 * events.k8s.io/v1 adds: eventTime required, type Normal or Warning, the deprecated* fields unset,
 * a series of at least 2 with a lastObservedTime, and on update every field but the series (and
 * metadata) immutable. Errors name the fields as core's Event names them (involvedObject, message,
 * source, firstTimestamp, lastTimestamp, count), as kube reports them.
 */
import type { StatusCause } from '../api/errors.js';
import { goJson, invalidField, requiredField, type BadValue } from './field-errors.js';
import { FIELD_IMMUTABLE } from './object-meta.js';
import { byteLength, isLabelKey } from './string-formats.js';
import { asNumber, asObject, asString, type Obj, objectOrUndefined } from '../api/values.js';

const REPORTING_INSTANCE_LIMIT = 128;
const ACTION_LIMIT = 128;
const REASON_LIMIT = 128;
const NOTE_LIMIT = 1024;

/** A required text field with a length limit (kube prints "" as the bad value of an over-long one). */
function limitedText(value: string, field: string, limit: number, required: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  if (required && value === '') causes.push(requiredField(field));
  if (byteLength(value) > limit) causes.push(invalidField(field, '', `can have at most ${limit} characters`));
  return causes;
}

/** The internal Event's fields an events.k8s.io/v1 Event carries, under core's names. */
interface CoreView {
  namespace: string;
  involvedObject: Obj;
  eventTime: string;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  message: string;
}

/** legacyValidateEvent: `controllerField` is the name the request's API gives the reporting controller. */
function legacyCauses(event: CoreView, controllerField: string): StatusCause[] {
  const namespace = event.namespace;
  const involvedNamespace = asString(event.involvedObject.namespace);
  const mismatch = (): StatusCause => invalidField('involvedObject.namespace', involvedNamespace, 'does not match event.namespace');
  const causes: StatusCause[] = [];
  if (event.eventTime === '') {
    if (involvedNamespace === '' ? namespace !== '' && namespace !== 'default' : namespace !== involvedNamespace) causes.push(mismatch());
    return causes;
  }
  if (involvedNamespace === '' && namespace !== 'default' && namespace !== 'kube-system') causes.push(mismatch());
  const component = event.reportingController;
  if (component === '') causes.push(requiredField(controllerField));
  causes.push(...isLabelKey(component).map((msg) => invalidField(controllerField, component, msg)));
  causes.push(...limitedText(event.reportingInstance, 'reportingInstance', REPORTING_INSTANCE_LIMIT, true));
  causes.push(...limitedText(event.action, 'action', ACTION_LIMIT, true));
  causes.push(...limitedText(event.reason, 'reason', REASON_LIMIT, true));
  causes.push(...limitedText(event.message, 'message', NOTE_LIMIT, false));
  return causes;
}

/** A core v1 Event as the legacy rules read it. */
function coreView(event: Obj): CoreView {
  return {
    namespace: asString(asObject(event.metadata).namespace),
    involvedObject: asObject(event.involvedObject),
    eventTime: asString(event.eventTime),
    reportingController: asString(event.reportingComponent),
    reportingInstance: asString(event.reportingInstance),
    action: asString(event.action),
    reason: asString(event.reason),
    message: asString(event.message),
  };
}

/** An events.k8s.io/v1 Event under core's field names. */
function eventsView(event: Obj): CoreView {
  return {
    namespace: asString(asObject(event.metadata).namespace),
    involvedObject: asObject(event.regarding),
    eventTime: asString(event.eventTime),
    reportingController: asString(event.reportingController),
    reportingInstance: asString(event.reportingInstance),
    action: asString(event.action),
    reason: asString(event.reason),
    message: asString(event.note),
  };
}

/** legacyValidateEvent for a request through core v1: nothing more, on create and update. */
export function validateCoreEvent(event: Obj): StatusCause[] {
  return legacyCauses(coreView(event), 'reportingComponent');
}

/** validateV1EventSeries. */
function seriesCauses(event: Obj): StatusCause[] {
  const series = objectOrUndefined(event.series);
  if (series === undefined) return [];
  const causes: StatusCause[] = [];
  if (asNumber(series.count) < 2) causes.push(invalidField('series.count', '', 'should be at least 2'));
  if (asString(series.lastObservedTime) === '') causes.push(requiredField('series.lastObservedTime'));
  return causes;
}

/** ValidateEventCreate's checks for events.k8s.io/v1 (metadata is checked generically). */
function eventsCreateCauses(event: Obj): StatusCause[] {
  const causes = [...legacyCauses(eventsView(event), 'reportingController'), ...seriesCauses(event)];
  if (asString(event.eventTime) === '') causes.push(requiredField('eventTime'));
  const type = asString(event.type);
  if (type !== 'Normal' && type !== 'Warning') causes.push(invalidField('type', '', `has invalid value: ${type}`));
  if (asString(event.deprecatedFirstTimestamp) !== '') causes.push(invalidField('firstTimestamp', '', 'needs to be unset'));
  if (asString(event.deprecatedLastTimestamp) !== '') causes.push(invalidField('lastTimestamp', '', 'needs to be unset'));
  if (asNumber(event.deprecatedCount) !== 0) causes.push(invalidField('count', '', 'needs to be unset'));
  const source = asObject(event.deprecatedSource);
  if (asString(source.component) !== '' || asString(source.host) !== '') causes.push(invalidField('source', '', 'needs to be unset'));
  return causes;
}

/** The internal ObjectReference as Go's JSON prints it (no JSON tags: Go field names); null when absent. */
function referenceValue(v: unknown): Obj | null {
  const ref = objectOrUndefined(v);
  if (ref === undefined) return null;
  return {
    Kind: asString(ref.kind),
    Namespace: asString(ref.namespace),
    Name: asString(ref.name),
    UID: asString(ref.uid),
    APIVersion: asString(ref.apiVersion),
    ResourceVersion: asString(ref.resourceVersion),
    FieldPath: asString(ref.fieldPath),
  };
}

/** A metav1.Time as its JSON prints it (RFC 3339 in UTC, whole seconds; null when unset). */
function timeValue(v: unknown): string | null {
  const t = asString(v);
  if (t === '') return null;
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? t : `${d.toISOString().slice(0, 19)}Z`;
}

/** A metav1.MicroTime as its JSON prints it (UTC, six fractional digits; null when unset). */
function microTimeValue(v: unknown): string | null {
  const t = asString(v);
  if (t === '') return null;
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return t;
  const fraction = (/\.(\d+)/.exec(t)?.[1] ?? '').slice(0, 6).padEnd(6, '0');
  return `${d.toISOString().slice(0, 19)}.${fraction}Z`;
}

/** ValidateEventUpdate's checks for events.k8s.io/v1: the create rules that still apply, and immutability. */
function eventsUpdateCauses(event: Obj, old: Obj): StatusCause[] {
  const causes = legacyCauses(eventsView(event), 'reportingController');
  const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
  const seriesOf = (e: Obj): unknown => {
    const s = objectOrUndefined(e.series);
    return s === undefined ? null : [asNumber(s.count), microTimeValue(s.lastObservedTime)];
  };
  if (!same(seriesOf(event), seriesOf(old))) causes.push(...seriesCauses(event));
  const immutable = (field: string, pick: (e: Obj) => unknown, print: (v: unknown) => BadValue): void => {
    const next = pick(event);
    if (!same(next, pick(old))) causes.push(invalidField(field, print(next), FIELD_IMMUTABLE));
  };
  const asJson = (v: unknown): BadValue => goJson(v);
  const asText = (v: unknown): BadValue => asString(v);
  const asTime = (v: unknown): BadValue => goJson(v);
  immutable('involvedObject', (e) => referenceValue(e.regarding) ?? referenceValue({}), asJson);
  immutable('reason', (e) => asString(e.reason), asText);
  immutable('message', (e) => asString(e.note), asText);
  immutable('source', (e) => ({ Component: asString(asObject(e.deprecatedSource).component), Host: asString(asObject(e.deprecatedSource).host) }), asJson);
  immutable('firstTimestamp', (e) => timeValue(e.deprecatedFirstTimestamp), asTime);
  immutable('lastTimestamp', (e) => timeValue(e.deprecatedLastTimestamp), asTime);
  immutable(
    'count',
    (e) => asNumber(e.deprecatedCount),
    (v) => asNumber(v),
  );
  // kube checks the reason twice.
  immutable('reason', (e) => asString(e.reason), asText);
  immutable('type', (e) => asString(e.type), asText);
  immutable('eventTime', (e) => microTimeValue(e.eventTime), asTime);
  immutable('action', (e) => asString(e.action), asText);
  immutable('related', (e) => referenceValue(e.related), asJson);
  immutable('reportingController', (e) => asString(e.reportingController), asText);
  immutable('reportingInstance', (e) => asString(e.reportingInstance), asText);
  return causes;
}

/** ValidateEventCreate / ValidateEventUpdate for an events.k8s.io/v1 request (`old` set on update). */
export function validateEventsEvent(event: Obj, old?: Obj): StatusCause[] {
  return old === undefined ? eventsCreateCauses(event) : eventsUpdateCauses(event, old);
}
