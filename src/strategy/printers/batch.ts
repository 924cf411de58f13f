/**
 * Printers of batch/v1 jobs (Status, Completions, Duration) and cron jobs (Schedule, Timezone,
 * Suspend, Active, Last Schedule).
 */
import { ageColumn, col, nameColumn, templateColumns } from '../../codec/table-columns.js';
import { age, boolPtr, containerCells, formatLabelSelector, humanDuration, nameOf, parseTime, since } from './format.js';
import type { Obj, TablePrinter } from '../../codec/table-printer.js';
import { arrayField, objectField, stringField, stringFieldOrUndefined } from '../../api/values.js';
import { finiteNumberField, finiteNumberFieldOrUndefined, objs, path } from './values.js';

/** kube's `hasJobCondition`: the first condition of `type` has status True. */
export function hasCondition(status: Obj, type: string): boolean {
  const c = objs(status, 'conditions').find((x) => stringField(x, 'type') === type);
  return c !== undefined && stringField(c, 'status') === 'True';
}

/** The Status, Completions and Duration cells of a job (exported for tests). */
export function jobCells(job: Obj, now: number): { status: string; completions: string; duration: string } {
  const spec = objectField(job, 'spec');
  const status = objectField(job, 'status');
  const succeeded = finiteNumberField(status, 'succeeded');
  const completionsSpec = finiteNumberFieldOrUndefined(spec, 'completions');
  const parallelism = finiteNumberFieldOrUndefined(spec, 'parallelism') ?? 0;
  let completions: string;
  if (completionsSpec !== undefined) completions = `${succeeded}/${completionsSpec}`;
  else if (parallelism > 1) completions = `${succeeded}/1 of ${parallelism}`;
  else completions = `${succeeded}/1`;

  const start = parseTime(status.startTime);
  const completion = parseTime(status.completionTime);
  let duration = '';
  if (start !== undefined) duration = humanDuration((completion ?? now) - start);

  let state = 'Running';
  if (hasCondition(status, 'Complete')) state = 'Complete';
  else if (hasCondition(status, 'Failed')) state = 'Failed';
  else if (stringFieldOrUndefined(objectField(job, 'metadata'), 'deletionTimestamp')) state = 'Terminating';
  else if (hasCondition(status, 'Suspended')) state = 'Suspended';
  else if (hasCondition(status, 'FailureTarget')) state = 'FailureTarget';
  return { status: state, completions, duration };
}

export const jobPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Status', 'string', 'Status of the job.'),
    col('Completions', 'string', 'The number of pods which reached phase Succeeded.'),
    col('Duration', 'string', 'Time required to complete the job.'),
    ageColumn(),
    ...templateColumns(true),
  ],
  row(job, now) {
    const spec = objectField(job, 'spec');
    const c = jobCells(job, now);
    const [names, images] = containerCells(path(spec, 'template', 'spec'));
    return { cells: [nameOf(job), c.status, c.completions, c.duration, age(job, now), names, images, formatLabelSelector(spec.selector)] };
  },
};

export const cronJobPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Schedule', 'string', 'The schedule in Cron format.'),
    col('Timezone', 'string', 'The time zone name for the given schedule.'),
    col('Suspend', 'boolean', 'Whether subsequent executions are suspended.'),
    col('Active', 'integer', 'Number of currently running jobs.'),
    col('Last Schedule', 'string', 'When the job was last successfully scheduled.'),
    ageColumn(),
    ...templateColumns(true),
  ],
  row(cj, now) {
    const spec = objectField(cj, 'spec');
    const status = objectField(cj, 'status');
    const jobSpec = path(spec, 'jobTemplate', 'spec');
    const [names, images] = containerCells(path(jobSpec, 'template', 'spec'));
    const last = parseTime(status.lastScheduleTime) === undefined ? '<none>' : since(status.lastScheduleTime, now);
    return {
      cells: [
        nameOf(cj),
        stringField(spec, 'schedule'),
        stringFieldOrUndefined(spec, 'timeZone') ?? '<none>',
        boolPtr(spec.suspend),
        arrayField(status, 'active').length,
        last,
        age(cj, now),
        names,
        images,
        formatLabelSelector(jobSpec.selector),
      ],
    };
  },
};
