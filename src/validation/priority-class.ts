import type { StatusCause } from '../api/errors.js';
import { forbiddenField, invalidField, notSupportedField, requiredField } from './field-errors.js';
import type { Obj } from '../api/object-util.js';

/**
 * kube-apiserver 1.36's PriorityClass validation beyond metadata (checked against
 * test/golden/validation/): names with the `system-` prefix are reserved for the two system classes
 * as defined, user classes stay at or under 1,000,000,000, the preemption policy is one of two, and
 * an update changes neither value nor preemption policy.
 */

const HIGHEST_USER_PRIORITY = 1_000_000_000;
const SYSTEM_CLASSES: Record<string, { value: number; globalDefault: boolean }> = {
  'system-node-critical': { value: 2_000_001_000, globalDefault: false },
  'system-cluster-critical': { value: 2_000_000_000, globalDefault: false },
};

/** Why a `system-` name is refused (IsKnownSystemPriorityClass), or undefined when it is a system class as defined. */
function systemClassProblem(name: string, value: number, globalDefault: boolean): string | undefined {
  const known = SYSTEM_CLASSES[name];
  if (known === undefined) return `${name} is not a known system priority class`;
  if (known.value !== value) return `value of ${name} PriorityClass must be ${known.value}`;
  if (known.globalDefault !== globalDefault) return `globalDefault of ${name} PriorityClass must be ${known.globalDefault}`;
  return undefined;
}

export function validatePriorityClass(pc: Obj, old?: Obj): StatusCause[] {
  const causes: StatusCause[] = [];
  const value = typeof pc.value === 'number' ? pc.value : 0;
  if (old !== undefined) {
    const oldValue = typeof old.value === 'number' ? old.value : 0;
    if (value !== oldValue) causes.push(forbiddenField('value', 'may not be changed in an update.'));
    if ((pc.preemptionPolicy ?? null) !== (old.preemptionPolicy ?? null)) {
      causes.push(invalidField('preemptionPolicy', typeof pc.preemptionPolicy === 'string' ? pc.preemptionPolicy : null, 'field is immutable'));
    }
    return causes;
  }
  const meta = typeof pc.metadata === 'object' && pc.metadata !== null ? (pc.metadata as Obj) : {};
  const name = typeof meta.name === 'string' ? meta.name : '';
  if (name.startsWith('system-')) {
    const problem = systemClassProblem(name, value, pc.globalDefault === true);
    if (problem !== undefined) {
      causes.push(forbiddenField('metadata.name', `priority class names with 'system-' prefix are reserved for system use only. error: ${problem}`));
    }
  } else if (value > HIGHEST_USER_PRIORITY) {
    causes.push(forbiddenField('value', `maximum allowed value of a user defined priority is ${HIGHEST_USER_PRIORITY}`));
  }
  const policy = pc.preemptionPolicy;
  if (typeof policy === 'string') {
    if (policy === '') causes.push(requiredField('preemptionPolicy'));
    else if (policy !== 'PreemptLowerPriority' && policy !== 'Never')
      causes.push(notSupportedField('preemptionPolicy', policy, ['PreemptLowerPriority', 'Never']));
  }
  return causes;
}
