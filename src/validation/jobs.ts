/**
 * kube 1.36's validation of Jobs and CronJobs beyond their metadata (checked against
 * test/golden/validation/): counts non-negative, completion modes, pod failure policies, the pod
 * template (restartPolicy OnFailure or Never), the generated selector and its labels, what a Job
 * update may change, and a CronJob's schedule (its 52-character name limit is a name rule), time zone, concurrency policy and job template.
 */
import type { StatusCause } from '../api/errors.js';
import { jsonEqual } from '../api/object-util.js';
import { cronScheduleError, knownTimeZone } from './cron-schedule.js';
import { duplicateField, goJson, invalidField, notSupportedField, requiredField } from './field-errors.js';
import { labelsValue, selectorConverts, selectorMatches, selectorValue, validateLabelSelector } from './label-selector.js';
import { validatePodTemplateSpec } from './pod-spec.js';
import { isDNS1123Label } from './string-formats.js';
import { nonNegative } from './value-formats.js';
import { asArray, asObject, asString, numberOrUndefined, type Obj, objectOrUndefined } from '../api/values.js';
import { isSet, objects } from './value-access.js';

const FIELD_IMMUTABLE = 'field is immutable';
const FAILURE_ACTIONS = ['Count', 'FailIndex', 'FailJob', 'Ignore'];
const EXIT_CODE_OPERATORS = ['In', 'NotIn'];
const CONDITION_STATUSES = ['False', 'True', 'Unknown'];
const REPLACEMENT_POLICIES = ['Failed', 'TerminatingOrFailed'];
const MAX_PARALLELISM_INDEXED = 100000;

function quotedList(values: readonly string[]): string {
  return `[${values.map((v) => JSON.stringify(v)).join(' ')}]`;
}

function podFailurePolicyCauses(spec: Obj, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const podSpec = asObject(asObject(spec.template).spec);
  const containerNames = new Set([...objects(podSpec.containers), ...objects(podSpec.initContainers)].map((c) => asString(c.name)));
  objects(asObject(spec.podFailurePolicy).rules).forEach((rule, i) => {
    const at = `${field}.rules[${i}]`;
    const action = asString(rule.action);
    if (action === '') causes.push(requiredField(`${at}.action`, `valid values: ${quotedList(FAILURE_ACTIONS)}`));
    else if (action === 'FailIndex') {
      if (!isSet(spec.backoffLimitPerIndex)) causes.push(invalidField(`${at}.action`, action, 'requires the backoffLimitPerIndex to be set'));
    } else if (!FAILURE_ACTIONS.includes(action)) causes.push(notSupportedField(`${at}.action`, action, FAILURE_ACTIONS));
    const onExitCodes = objectOrUndefined(rule.onExitCodes);
    const onConditions = objects(rule.onPodConditions);
    if (onExitCodes !== undefined) {
      const ec = `${at}.onExitCodes`;
      const operator = asString(onExitCodes.operator);
      if (operator === '') causes.push(requiredField(`${ec}.operator`, `valid values: ${quotedList(EXIT_CODE_OPERATORS)}`));
      else if (!EXIT_CODE_OPERATORS.includes(operator)) causes.push(notSupportedField(`${ec}.operator`, operator, EXIT_CODE_OPERATORS));
      if (typeof onExitCodes.containerName === 'string' && !containerNames.has(onExitCodes.containerName)) {
        causes.push(invalidField(`${ec}.containerName`, onExitCodes.containerName, 'must be one of the container or initContainer names in the pod template'));
      }
      const values = asArray(onExitCodes.values).filter((v): v is number => typeof v === 'number');
      if (values.length === 0) causes.push(invalidField(`${ec}.values`, goJson(onExitCodes.values ?? null), 'at least one value is required'));
      const seen = new Set<number>();
      let ordered = true;
      values.forEach((v, j) => {
        if (operator === 'In' && v === 0) causes.push(invalidField(`${ec}.values[${j}]`, v, 'must not be 0 for the In operator'));
        if (seen.has(v)) causes.push(duplicateField(`${ec}.values[${j}]`, v));
        seen.add(v);
        if (j > 0 && (values[j - 1] ?? 0) > v) ordered = false;
      });
      if (!ordered) causes.push(invalidField(`${ec}.values`, goJson(values), 'must be ordered'));
    }
    onConditions.forEach((pattern, j) => {
      const status = asString(pattern.status);
      const sp = `${at}.onPodConditions[${j}].status`;
      if (status === '') causes.push(requiredField(sp, `valid values: ${quotedList(CONDITION_STATUSES)}`));
      else if (!CONDITION_STATUSES.includes(status)) causes.push(notSupportedField(sp, status, CONDITION_STATUSES));
    });
    if (onExitCodes !== undefined && onConditions.length > 0)
      causes.push(invalidField(at, { goSyntax: '' }, 'specifying both OnExitCodes and OnPodConditions is not supported'));
    if (onExitCodes === undefined && onConditions.length === 0)
      causes.push(invalidField(at, { goSyntax: '' }, 'specifying one of OnExitCodes and OnPodConditions is required'));
  });
  return causes;
}

/** validateJobSpec: what a Job and a CronJob's job template share. */
function jobSpecCauses(spec: Obj, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const key of ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit', 'ttlSecondsAfterFinished', 'backoffLimitPerIndex']) {
    causes.push(...nonNegative(`${field}.${key}`, numberOrUndefined(spec[key])));
  }
  const maxFailed = numberOrUndefined(spec.maxFailedIndexes);
  if (maxFailed !== undefined) {
    causes.push(...nonNegative(`${field}.maxFailedIndexes`, maxFailed));
    if (!isSet(spec.backoffLimitPerIndex)) causes.push(requiredField(`${field}.backoffLimitPerIndex`, 'when maxFailedIndexes is specified'));
  }
  const mode = spec.completionMode;
  if (typeof mode === 'string') {
    if (mode !== 'NonIndexed' && mode !== 'Indexed') causes.push(notSupportedField(`${field}.completionMode`, mode, ['NonIndexed', 'Indexed']));
    if (mode === 'Indexed') {
      if (!isSet(spec.completions)) causes.push(requiredField(`${field}.completions`, 'when completion mode is Indexed'));
      const parallelism = numberOrUndefined(spec.parallelism);
      if (parallelism !== undefined && parallelism > MAX_PARALLELISM_INDEXED) {
        causes.push(
          invalidField(`${field}.parallelism`, parallelism, `must be less than or equal to ${MAX_PARALLELISM_INDEXED} when completion mode is Indexed`),
        );
      }
    }
  }
  if (mode === undefined || mode === null || mode === 'NonIndexed') {
    const perIndex = numberOrUndefined(spec.backoffLimitPerIndex);
    if (perIndex !== undefined) causes.push(invalidField(`${field}.backoffLimitPerIndex`, perIndex, 'requires indexed completion mode'));
    if (maxFailed !== undefined) causes.push(invalidField(`${field}.maxFailedIndexes`, maxFailed, 'requires indexed completion mode'));
  }
  if (isSet(spec.podFailurePolicy)) causes.push(...podFailurePolicyCauses(spec, `${field}.podFailurePolicy`));
  const replacement = spec.podReplacementPolicy;
  if (typeof replacement === 'string') {
    if (isSet(spec.podFailurePolicy)) {
      if (replacement !== 'Failed') causes.push(notSupportedField(`${field}.podReplacementPolicy`, replacement, ['Failed']));
    } else if (!REPLACEMENT_POLICIES.includes(replacement)) causes.push(notSupportedField(`${field}.podReplacementPolicy`, replacement, REPLACEMENT_POLICIES));
  }
  causes.push(...validatePodTemplateSpec(spec.template, `${field}.template`));
  const restartPolicy = asString(asObject(asObject(spec.template).spec).restartPolicy);
  const rp = `${field}.template.spec.restartPolicy`;
  if (restartPolicy === 'Always' || restartPolicy === '') causes.push(requiredField(rp, 'valid values: "OnFailure", "Never"'));
  else if (restartPolicy !== 'OnFailure' && restartPolicy !== 'Never') causes.push(notSupportedField(rp, restartPolicy, ['OnFailure', 'Never']));
  else if (isSet(spec.podFailurePolicy) && restartPolicy !== 'Never')
    causes.push(invalidField(rp, restartPolicy, 'only "Never" is supported when podFailurePolicy is specified'));
  return causes;
}

/** validateGeneratedSelector: a generated selector selects the Job's uid, and the template carries its labels. */
function generatedSelectorCauses(job: Obj): StatusCause[] {
  const spec = asObject(job.spec);
  if (spec.manualSelector === true || !isSet(spec.selector)) return [];
  const meta = asObject(job.metadata);
  const uid = asString(meta.uid);
  const name = asString(meta.name);
  const causes: StatusCause[] = [];
  const templateLabels = asObject(asObject(asObject(spec.template).metadata).labels);
  const expected: Array<[string, string]> = [
    ['controller-uid', uid],
    ['job-name', name],
    ['batch.kubernetes.io/controller-uid', uid],
    ['batch.kubernetes.io/job-name', name],
  ];
  for (const [key, value] of expected) {
    const actual = templateLabels[key];
    const at = `spec.template.metadata.labels[${key}]`;
    if (typeof actual !== 'string') causes.push(requiredField(at, `must be '${value}'`));
    else if (actual !== value) causes.push(invalidField(at, labelsValue(templateLabels), `must be '${value}'`));
  }
  if (selectorConverts(spec.selector) && !selectorMatches(spec.selector, Object.fromEntries(expected))) {
    causes.push(invalidField('spec.selector', selectorValue(spec.selector), '`selector` not auto-generated'));
  }
  return causes;
}

/** ValidateJobSpec: validateJobSpec plus a valid selector matching the template's labels. */
function fullJobSpecCauses(spec: Obj): StatusCause[] {
  const causes = jobSpecCauses(spec, 'spec');
  if (!isSet(spec.selector)) causes.push(requiredField('spec.selector'));
  else causes.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  const labels = asObject(asObject(spec.template).metadata).labels;
  if (selectorConverts(spec.selector) && !selectorMatches(spec.selector, labels)) {
    causes.push(invalidField('spec.template.metadata.labels', labelsValue(labels), '`selector` does not match template `labels`'));
  }
  return causes;
}

function immutable(field: string, next: unknown, old: unknown): StatusCause[] {
  return jsonEqual(next ?? null, old ?? null) ? [] : [invalidField(field, goJson(next ?? null), FIELD_IMMUTABLE)];
}

export function validateJob(job: Obj, old?: Obj): StatusCause[] {
  const spec = asObject(job.spec);
  const causes = [...(old === undefined ? generatedSelectorCauses(job) : []), ...fullJobSpecCauses(spec)];
  const completions = numberOrUndefined(spec.completions);
  const name = asString(asObject(job.metadata).name);
  if (old === undefined && spec.completionMode === 'Indexed' && completions !== undefined && completions > 0) {
    const hostname = `${name}-${completions - 1}`;
    if (isDNS1123Label(hostname).length > 0)
      causes.push(invalidField('metadata.name', name, `will not able to create pod with invalid DNS label: ${hostname}`));
  }
  if (old === undefined) return causes;
  const oldSpec = asObject(old.spec);
  if (spec.completionMode !== 'Indexed') causes.push(...immutable('spec.completions', spec.completions, oldSpec.completions));
  else if (
    !jsonEqual(spec.completions ?? null, oldSpec.completions ?? null) &&
    completions !== undefined &&
    completions !== numberOrUndefined(spec.parallelism)
  ) {
    causes.push(invalidField('spec.completions', completions, 'can only be modified in tandem with spec.parallelism'));
  }
  causes.push(...immutable('spec.selector', spec.selector, oldSpec.selector));
  if (oldSpec.suspend !== true) causes.push(...immutable('spec.template', spec.template, oldSpec.template));
  for (const key of ['completionMode', 'podFailurePolicy', 'backoffLimitPerIndex', 'managedBy', 'successPolicy']) {
    causes.push(...immutable(`spec.${key}`, spec[key], oldSpec[key]));
  }
  return causes;
}

export function validateCronJob(cj: Obj, old?: Obj): StatusCause[] {
  const spec = asObject(cj.spec);
  const oldSpec = old === undefined ? undefined : asObject(old.spec);
  const causes: StatusCause[] = [];
  const schedule = asString(spec.schedule);
  if (schedule === '') causes.push(requiredField('spec.schedule'));
  else {
    const error = cronScheduleError(schedule);
    if (error !== undefined) causes.push(invalidField('spec.schedule', schedule, error));
    const allowTZ = oldSpec !== undefined && asString(oldSpec.schedule).includes('TZ');
    if (allowTZ && schedule.includes('TZ') && isSet(spec.timeZone))
      causes.push(invalidField('spec.schedule', schedule, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'));
    else if (!allowTZ && schedule.includes('TZ'))
      causes.push(invalidField('spec.schedule', schedule, 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'));
  }
  causes.push(...nonNegative('spec.startingDeadlineSeconds', numberOrUndefined(spec.startingDeadlineSeconds)));
  if (typeof spec.timeZone === 'string' && (oldSpec === undefined || oldSpec.timeZone !== spec.timeZone)) causes.push(...timeZoneCauses(spec.timeZone));
  const policy = asString(spec.concurrencyPolicy);
  if (policy === '') causes.push(requiredField('spec.concurrencyPolicy'));
  else if (!['Allow', 'Forbid', 'Replace'].includes(policy)) causes.push(notSupportedField('spec.concurrencyPolicy', policy, ['Allow', 'Forbid', 'Replace']));
  const jobSpec = asObject(asObject(spec.jobTemplate).spec);
  causes.push(...jobSpecCauses(jobSpec, 'spec.jobTemplate.spec'));
  if (isSet(jobSpec.selector))
    causes.push(invalidField('spec.jobTemplate.spec.selector', selectorValue(jobSpec.selector), '`selector` will be auto-generated'));
  if (jobSpec.manualSelector === true) causes.push(notSupportedField('spec.jobTemplate.spec.manualSelector', true, ['nil', 'false']));
  causes.push(...nonNegative('spec.successfulJobsHistoryLimit', numberOrUndefined(spec.successfulJobsHistoryLimit)));
  causes.push(...nonNegative('spec.failedJobsHistoryLimit', numberOrUndefined(spec.failedJobsHistoryLimit)));
  return causes;
}

function timeZoneCauses(zone: string): StatusCause[] {
  const field = 'spec.timeZone';
  if (zone === '') return [invalidField(field, zone, 'timeZone must be nil or non-empty string')];
  for (const part of zone.split('/')) {
    if (part === '.' || part === '..' || part.startsWith('-') || !/^[A-Za-z.\-_0-9+]{1,14}$/.test(part)) {
      return [invalidField(field, zone, `unknown time zone ${zone}`)];
    }
  }
  const causes: StatusCause[] = [];
  if (zone.toLowerCase() === 'local')
    causes.push(invalidField(field, zone, 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones'));
  if (!knownTimeZone(zone)) causes.push(invalidField(field, zone, `unknown time zone ${zone}`));
  return causes;
}
