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

/**
 * Workload controllers (apps/v1, batch/v1, ReplicationControllers): spec and status split by the
 * status subresource, generation bumped by spec changes, selectors immutable (in their validation),
 * pod templates defaulted and validated as pods are (pod-defaults.ts, validation/pod-spec.ts).
 */

export const deployments: KindStrategy = { defaults: defaultDeployment, validate: validateDeployment };
export const replicaSets: KindStrategy = { defaults: defaultReplicaSet, validate: validateReplicaSet };
export const statefulSets: KindStrategy = { defaults: defaultStatefulSet, validate: validateStatefulSet };
export const daemonSets: KindStrategy = { defaults: defaultDaemonSet, validate: validateDaemonSet };
export const replicationControllers: KindStrategy = { defaults: defaultReplicationController, validate: (obj) => validateReplicationController(obj) };

/** Jobs: a selector and the matching template labels are generated on create unless manualSelector (job-selector.ts). */
export const jobs: KindStrategy = { defaults: defaultJob, validate: validateJob, prepareForCreate: generateJobSelector };

export const cronJobs: KindStrategy = { defaults: defaultCronJob, validate: validateCronJob };
