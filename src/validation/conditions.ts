/**
 * metav1.Condition lists as kube 1.36 validates them (ValidateConditions): each type a qualified name
 * and not repeated, status True, False or Unknown, observedGeneration not negative, a
 * lastTransitionTime, a reason in CamelCase-like form of at most 1024 bytes, and a message of at most
 * 32768 bytes.
 */
import type { StatusCause } from '../api/errors.js';
import { duplicateField, invalidField, notSupportedField, requiredField, tooLongField } from './field-errors.js';
import { byteLength, isLabelKey, regexError } from './string-formats.js';
import { asNumber, asString } from '../api/values.js';
import { objects } from './value-access.js';

const STATUSES = ['False', 'True', 'Unknown'];
const MAX_REASON_LENGTH = 1024;
const MAX_MESSAGE_LENGTH = 32 * 1024;
const REASON_FMT = '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?';
const REASON_RE = new RegExp(`^${REASON_FMT}$`);
const REASON_ERROR = regexError(
  "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'",
  REASON_FMT,
  'my_name',
  'MY_NAME',
  'MyName',
  'ReasonA,ReasonB',
  'ReasonA:ReasonB',
);

/** ValidateConditions at `field`. */
export function validateConditions(conditions: unknown, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  objects(conditions).forEach((c, i) => {
    const at = `${field}[${i}]`;
    const type = asString(c.type);
    if (seen.has(type)) causes.push(duplicateField(`${at}.type`, type));
    seen.add(type);
    causes.push(...isLabelKey(type).map((msg) => invalidField(`${at}.type`, type, msg)));
    const status = asString(c.status);
    if (!STATUSES.includes(status)) causes.push(notSupportedField(`${at}.status`, status, STATUSES));
    const observed = asNumber(c.observedGeneration);
    if (observed < 0) causes.push(invalidField(`${at}.observedGeneration`, observed, 'must be greater than or equal to zero'));
    if (asString(c.lastTransitionTime) === '') causes.push(requiredField(`${at}.lastTransitionTime`));
    const reason = asString(c.reason);
    if (reason === '') causes.push(requiredField(`${at}.reason`));
    else {
      if (!REASON_RE.test(reason)) causes.push(invalidField(`${at}.reason`, reason, REASON_ERROR));
      if (byteLength(reason) > MAX_REASON_LENGTH) causes.push(tooLongField(`${at}.reason`, MAX_REASON_LENGTH));
    }
    if (byteLength(asString(c.message)) > MAX_MESSAGE_LENGTH) causes.push(tooLongField(`${at}.message`, MAX_MESSAGE_LENGTH));
  });
  return causes;
}
