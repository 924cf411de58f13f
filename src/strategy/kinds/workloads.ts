import { validateCronJob, validateJob } from '../../validation/jobs.js';
import { validateDaemonSet, validateDeployment, validateReplicaSet, validateReplicationController, validateStatefulSet } from '../../validation/workloads.js';
import {
  defaultCronJob,
  defaultDaemonSet,
  defaultDeployment,
  defaultJob,
  defaultReplicaSet,
  defaultReplicationController,
  defaultStatefulSet,
} from '../defaults.js';
import { generateJobSelector } from '../job-selector.js';
import type { KindStrategy } from '../kind-strategy.js';
import { jsonEqual, type Obj } from '../../api/object-util.js';
import { podNamePrefixWarnings, podTemplateWarnings, pvcSpecWarnings } from '../pod-warnings.js';
import { objectAt, objectsAt } from '../../api/field-defaults.js';
import { controllerRevisionPrinter, daemonSetPrinter, deploymentPrinter, replicaSetPrinter, statefulSetPrinter } from '../printers/apps.js';
import { cronJobPrinter, jobPrinter } from '../printers/batch.js';
import { replicationControllerPrinter } from '../printers/core.js';
import { jobFieldSelectors, replicationControllerFieldSelectors } from '../field-selectors.js';

/**
 * Workload controllers (apps/v1, batch/v1, ReplicationControllers): spec and status split by the
 * status subresource, generation bumped by spec changes, selectors immutable (in their validation),
 * pod templates defaulted and validated as pods are (pod-defaults.ts, validation/pod-spec.ts).
 */

/** Whether an update changed the spec (kube's strategies bump metadata.generation for it and warn only then). */
const specChanged = (obj: Obj, old: Obj): boolean => (objectAt(obj, 'metadata') ?? {}).generation !== (objectAt(old, 'metadata') ?? {}).generation;

const spec = (obj: Obj): Obj => objectAt(obj, 'spec') ?? {};

/** Deployments, ReplicaSets: the name, then the template on create; the template when the spec changed. */
const templateWarnings = (obj: Obj, old: Obj | undefined): string[] =>
  old === undefined
    ? [...podNamePrefixWarnings(obj), ...podTemplateWarnings('spec.template', spec(obj).template)]
    : specChanged(obj, old)
      ? podTemplateWarnings('spec.template', spec(obj).template)
      : [];

/** StatefulSets: template, claim templates (kube's update path says `.Spec`), negative revisionHistoryLimit. */
function statefulSetWarnings(obj: Obj, old: Obj | undefined): string[] {
  const out = old === undefined || specChanged(obj, old) ? podTemplateWarnings('spec.template', spec(obj).template) : [];
  objectsAt(spec(obj), 'volumeClaimTemplates').forEach((pvc, i) => {
    out.push(...pvcSpecWarnings(`spec.volumeClaimTemplates[${i}]${old === undefined ? '' : '.Spec'}`, objectAt(pvc, 'spec')));
  });
  const limit = spec(obj).revisionHistoryLimit;
  if (typeof limit === 'number' && limit < 0)
    out.push('spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended');
  return out;
}

/** WarningsForJobSpec at `path`: very large indexed jobs, then the template. */
function jobSpecWarnings(path: string, jobSpec: Obj): string[] {
  const out: string[] = [];
  const completions = typeof jobSpec.completions === 'number' ? jobSpec.completions : 0;
  const parallelism = typeof jobSpec.parallelism === 'number' ? jobSpec.parallelism : 0;
  if (jobSpec.completionMode === 'Indexed' && completions > 100_000 && parallelism > 10_000) {
    out.push(
      `${path}: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail`,
    );
  }
  return [...out, ...podTemplateWarnings(`${path}.template`, jobSpec.template)];
}

/**
 * Status writes of workloads keep the request's metadata (kube's status strategies reset only the
 * spec; Deployments also keep their labels): the deployment controller records the revision
 * annotation through deployments/status.
 */
export const deployments: KindStrategy = {
  podTemplatePath: ['spec', 'template'],
  statusResetFields: [['metadata', 'labels']],
  printer: deploymentPrinter,
  defaults: defaultDeployment,
  validate: validateDeployment,
  warnings: templateWarnings,
  statusUpdatesMetadata: 'all-but-labels',
};
export const replicaSets: KindStrategy = {
  podTemplatePath: ['spec', 'template'],
  printer: replicaSetPrinter,
  defaults: defaultReplicaSet,
  validate: validateReplicaSet,
  warnings: templateWarnings,
  statusUpdatesMetadata: 'all',
};
export const statefulSets: KindStrategy = {
  podTemplatePath: ['spec', 'template'],
  printer: statefulSetPrinter,
  defaults: defaultStatefulSet,
  validate: validateStatefulSet,
  warnings: statefulSetWarnings,
  statusUpdatesMetadata: 'all',
};
export const daemonSets: KindStrategy = {
  podTemplatePath: ['spec', 'template'],
  printer: daemonSetPrinter,
  defaults: defaultDaemonSet,
  statusUpdatesMetadata: 'all',
  validate: validateDaemonSet,
  // kube warns on update when the template generation moved, i.e. the template changed.
  warnings: (obj, old) =>
    old === undefined || !jsonEqual(spec(obj).template, spec(old).template) ? podTemplateWarnings('spec.template', spec(obj).template) : [],
};
export const replicationControllers: KindStrategy = {
  podTemplatePath: ['spec', 'template'],
  // kube keeps orphaning as the v1 default, for backward compatibility.
  garbageCollectionPolicy: () => 'OrphanDependents',
  printer: replicationControllerPrinter,
  fieldSelectors: replicationControllerFieldSelectors,
  defaults: defaultReplicationController,
  scaleSelectorIsMap: true,
  statusUpdatesMetadata: 'all',
  validate: (obj) => validateReplicationController(obj),
  // kube's update warnings are computed on the old template (its arguments are swapped).
  warnings: (obj, old) =>
    old === undefined
      ? [...podNamePrefixWarnings(obj), ...podTemplateWarnings('spec.template', spec(obj).template)]
      : specChanged(obj, old)
        ? podTemplateWarnings('spec.template', spec(old).template)
        : [],
};

/** Jobs: a selector and the matching template labels are generated on create unless manualSelector (job-selector.ts). */
export const jobs: KindStrategy = {
  podTemplatePath: ['spec', 'template'],
  // kube keeps orphaning as the batch/v1 default, for backward compatibility.
  garbageCollectionPolicy: (version) => (version === 'v1' ? 'OrphanDependents' : undefined),
  printer: jobPrinter,
  fieldSelectors: jobFieldSelectors,
  defaults: defaultJob,
  statusUpdatesMetadata: 'all',
  validate: validateJob,
  prepareForCreate: generateJobSelector,
  warnings: (obj, old) =>
    old === undefined
      ? [...podNamePrefixWarnings(obj), ...jobSpecWarnings('spec', spec(obj))]
      : specChanged(obj, old)
        ? jobSpecWarnings('spec', spec(obj))
        : [],
};

const jobTemplateSpec = (obj: Obj): Obj => objectAt(objectAt(spec(obj), 'jobTemplate') ?? {}, 'spec') ?? {};

export const cronJobs: KindStrategy = {
  podTemplatePath: ['spec', 'jobTemplate', 'spec', 'template'],
  garbageCollectionPolicy: (version) => (version === 'v1beta1' ? 'OrphanDependents' : undefined),
  printer: cronJobPrinter,
  defaults: defaultCronJob,
  statusUpdatesMetadata: 'all',
  validate: validateCronJob,
  warnings: (obj, old) => {
    if (old === undefined) return [...podNamePrefixWarnings(obj), ...jobSpecWarnings('spec.jobTemplate.spec', jobTemplateSpec(obj))];
    const out = specChanged(obj, old) ? jobSpecWarnings('spec.jobTemplate.spec', jobTemplateSpec(obj)) : [];
    const schedule = spec(obj).schedule;
    if (typeof schedule === 'string' && schedule.includes('TZ')) {
      out.push(
        'cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details',
      );
    }
    return out;
  },
};
export const controllerRevisions: KindStrategy = { printer: controllerRevisionPrinter };

/** This file's kinds by `group/resource` (the core group is empty). */
export const WORKLOADS_KINDS: Readonly<Record<string, KindStrategy>> = {
  '/replicationcontrollers': replicationControllers,
  'apps/deployments': deployments,
  'apps/replicasets': replicaSets,
  'apps/statefulsets': statefulSets,
  'apps/daemonsets': daemonSets,
  'batch/jobs': jobs,
  'batch/cronjobs': cronJobs,
  'apps/controllerrevisions': controllerRevisions,
};
