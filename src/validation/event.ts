/**
 * kube-apiserver 1.36's validation of core v1 Events beyond metadata (legacyValidateEvent, the only
 * check kube runs for writes through /api/v1), checked against test/golden/validation/. An event
 * without `eventTime` (the older recorder style) must name an involved object in its own namespace
 * (or none, in the default namespace). An event with `eventTime` needs reportingComponent (a
 * qualified name), reportingInstance, action and reason, within kube's length limits, and an involved
 * object namespace unless it lives in default or kube-system. Create and update run the same checks:
 * through v1 nothing is immutable. Not checked yet: events.k8s.io Events (full metadata, series and
 * immutability rules), and the event namespace's own format (a request namespace always passes).
 */
import type { StatusCause } from '../api/errors.js';
import { invalidField, requiredField } from './field-errors.js';
import { byteLength, isLabelKey } from './string-formats.js';
import { obj, str, type Obj } from './value-access.js';

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

/** legacyValidateEvent for a request through core v1. */
export function validateEvent(event: Obj): StatusCause[] {
  const namespace = str(obj(event.metadata).namespace);
  const involvedNamespace = str(obj(event.involvedObject).namespace);
  const mismatch = (): StatusCause => invalidField('involvedObject.namespace', involvedNamespace, 'does not match event.namespace');
  const causes: StatusCause[] = [];
  if (str(event.eventTime) === '') {
    if (involvedNamespace === '' ? namespace !== '' && namespace !== 'default' : namespace !== involvedNamespace) causes.push(mismatch());
    return causes;
  }
  if (involvedNamespace === '' && namespace !== 'default' && namespace !== 'kube-system') causes.push(mismatch());
  const component = str(event.reportingComponent);
  if (component === '') causes.push(requiredField('reportingComponent'));
  causes.push(...isLabelKey(component).map((msg) => invalidField('reportingComponent', component, msg)));
  causes.push(...limitedText(str(event.reportingInstance), 'reportingInstance', REPORTING_INSTANCE_LIMIT, true));
  causes.push(...limitedText(str(event.action), 'action', ACTION_LIMIT, true));
  causes.push(...limitedText(str(event.reason), 'reason', REASON_LIMIT, true));
  causes.push(...limitedText(str(event.message), 'message', NOTE_LIMIT, false));
  return causes;
}
