import { ApiError, badRequest, conflict, forbidden, invalid, notFound } from '../api/errors.js';
import { isObject, metadataOf, nowTimestamp, objectKey, stringField, type Obj } from '../api/object-util.js';
import { deleteObject, deleteOptionsOf, type DeleteOptions } from './delete.js';
import { type StoredObject } from '../storage/storage.js';
import { makeTarget, type ResourceTarget } from './server-context.js';
import { storageErrorToApi, withStorage } from './storage-errors.js';
import {
  DISRUPTION_ALLOWED,
  PDB_TYPE,
  findCondition,
  intField,
  isPodReady,
  isTerminating,
  labelsOf,
  podPhase,
  selectorMatcher,
  updateDisruptionAllowedCondition,
} from './disruption-budget-rules.js';
import { StorageError } from '../api/storage-error.js';
import { stringElements } from '../api/values.js';

/** Evictions approved but not yet seen by the disruption controller beyond which kube refuses more. */
const MAX_DISRUPTED_POD_SIZE = 2000;

/** kube's EvictionsRetry: attempts of a step that keeps losing compare-and-swap races. */
const EVICTION_ATTEMPTS = 20;

const TOO_MANY = "Cannot evict pod as it would violate the pod's disruption budget.";

/** What the Eviction object asks for, read from its body and the request's create options. */
export interface EvictionInput {
  /** `metadata.name` of the Eviction body ('' when absent). */
  name: string;
  /** The body's `deleteOptions`, if any. */
  deleteOptions: Obj | undefined;
  /** `dryRun` of the create request's query. */
  queryDryRun: string[];
}

/** The 429 kube answers when a PDB forbids the eviction, with one DisruptionBudget cause. */
function tooManyRequests(causeMessage: string, retryAfterSeconds: number): ApiError {
  const details = { causes: [{ reason: 'DisruptionBudget', message: causeMessage }], ...(retryAfterSeconds > 0 ? { retryAfterSeconds } : {}) };
  const headers: Record<string, string> = retryAfterSeconds > 0 ? { 'Retry-After': String(retryAfterSeconds) } : {};
  return new ApiError(429, 'TooManyRequests', TOO_MANY, details, headers);
}

/** kube's createTooManyRequestsError: the PDB's status does not reflect its spec (or a race with readiness). */
function stillProcessing(pdbName: string): ApiError {
  return tooManyRequests(`The disruption budget ${pdbName} is still being processed by the server.`, 10);
}

/** Go's %v of a string slice. */
function goList(values: string[]): string {
  return `[${values.join(' ')}]`;
}

/** kube's propagateDryRun: the query's dryRun fills the Eviction's DeleteOptions; both set must agree. */
function effectiveDeleteOptions(input: EvictionInput): Obj {
  const options: Obj = { ...(input.deleteOptions ?? {}) };
  const bodyDryRun = stringElements(options.dryRun);
  if (bodyDryRun.length === 0) options.dryRun = input.queryDryRun;
  else if (input.queryDryRun.length > 0 && goList(bodyDryRun) !== goList(input.queryDryRun)) {
    throw new ApiError(500, '', `Non-matching dry-run options in request and content: ${goList(input.queryDryRun)} and ${goList(bodyDryRun)}`, {});
  }
  return options;
}

function withResourceVersion(options: DeleteOptions, resourceVersion: string): DeleteOptions {
  return { ...options, preconditions: { ...options.preconditions, resourceVersion } };
}

/** kube's canIgnorePDB: terminal, pending or terminating pods are deleted without consulting PDBs. */
function canIgnorePDB(pod: Obj): boolean {
  const phase = podPhase(pod);
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || isTerminating(pod);
}

/** kube's shouldEnforceResourceVersion: a running pod is deleted only as it was read. */
function shouldEnforceResourceVersion(pod: Obj): boolean {
  const phase = podPhase(pod);
  return !(phase === 'Succeeded' || phase === 'Failed' || isTerminating(pod));
}

function isConflict(err: unknown): boolean {
  return err instanceof ApiError && err.code === 409;
}

/**
 * Sets the pod's DisruptionTarget condition (reason EvictionByEvictionAPI), as kube's eviction does
 * through the pod status store before deleting, then deletes the pod with `options`. A dry run
 * writes nothing. The condition write checks the options' preconditions against the latest pod and
 * moves a resourceVersion precondition to the version it wrote.
 */
async function addConditionAndDeletePod(pods: ResourceTarget, name: string, options: DeleteOptions): Promise<void> {
  if (!options.dryRun) {
    const key = objectKey(pods.ri.namespace, name);
    let written: StoredObject | undefined;
    for (let i = 0; written === undefined; i++) {
      if (i >= EVICTION_ATTEMPTS) throw conflict({ group: '', resource: 'pods' }, name, 'too many concurrent updates, please retry');
      const stored = await withStorage(pods, name, () => pods.server.storage.get(pods.type, key));
      if (!stored) throw notFound({ group: '', resource: 'pods' }, name);
      const pod = JSON.parse(stored.json) as Obj;
      const uid = options.preconditions?.uid;
      if (uid !== undefined && uid !== '' && uid !== metadataOf(pod).uid) {
        throw conflict(
          { group: '', resource: 'Pod' },
          name,
          `the UID in the precondition (${uid}) does not match the UID in record (${String(metadataOf(pod).uid)}). The object might have been deleted and then recreated`,
        );
      }
      const rv = options.preconditions?.resourceVersion;
      if (rv !== undefined && rv !== '' && rv !== stored.resourceVersion) {
        throw conflict(
          { group: '', resource: 'Pod' },
          name,
          `the ResourceVersion in the precondition (${rv}) does not match the ResourceVersion in record (${stored.resourceVersion}). The object might have been modified`,
        );
      }
      setDisruptionTarget(pod);
      try {
        written = await pods.server.storage.update(pods.type, key, pod, stored.resourceVersion);
      } catch (err) {
        if (!(err instanceof StorageError && err.code === 'Conflict')) throw storageErrorToApi(err, pods, name);
      }
    }
    if (options.preconditions?.resourceVersion !== undefined) options = withResourceVersion(options, written.resourceVersion);
  }
  await deleteObject(pods, name, options);
}

/** kube's UpdatePodCondition with DisruptionTarget True: the transition time stays when the status does. */
function setDisruptionTarget(pod: Obj): void {
  const status = isObject(pod.status) ? pod.status : {};
  const conditions: unknown[] = Array.isArray(status.conditions) ? [...(status.conditions as unknown[])] : [];
  const index = conditions.findIndex((c) => isObject(c) && c.type === 'DisruptionTarget');
  const old = index >= 0 && isObject(conditions[index]) ? conditions[index] : undefined;
  const kept = old !== undefined && old.status === 'True' && typeof old.lastTransitionTime === 'string' ? old.lastTransitionTime : nowTimestamp();
  const condition: Obj = {
    type: 'DisruptionTarget',
    status: 'True',
    lastProbeTime: null,
    lastTransitionTime: kept,
    reason: 'EvictionByEvictionAPI',
    message: 'Eviction API: evicting',
  };
  if (index >= 0) conditions[index] = condition;
  else conditions.push(condition);
  status.conditions = conditions;
  pod.status = status;
}

/** The PDBs of the pod's namespace whose selector matches the pod's labels. */
async function matchingBudgets(pods: ResourceTarget, pod: Obj): Promise<StoredObject[]> {
  const labels = labelsOf(pod);
  const listed = await withStorage(pods, '', () => pods.server.storage.list(PDB_TYPE, { namespace: pods.ri.namespace }));
  return listed.items.filter((item) => {
    const pdb = JSON.parse(item.json) as Obj;
    return selectorMatcher(isObject(pdb.spec) ? pdb.spec.selector : undefined)(labels);
  });
}

/**
 * kube's checkAndDecrement: refuses (429, or 403 for a corrupt status) unless the PDB allows a
 * disruption, then decrements `disruptionsAllowed` and records the pod in `disruptedPods` with a
 * compare-and-swap write of the PDB. Answers false when that write lost a race (read again).
 */
async function checkAndDecrement(pdbTarget: ResourceTarget, stored: StoredObject, podName: string, dryRun: boolean): Promise<boolean> {
  const pdb = JSON.parse(stored.json) as Obj;
  const meta = metadataOf(pdb);
  const name = stringField(meta, 'name');
  const status = isObject(pdb.status) ? pdb.status : {};
  const qr = { group: 'policy', resource: 'poddisruptionbudget' };
  if (intField(status, 'observedGeneration') < intField(meta, 'generation')) throw stillProcessing(name);
  const allowed = intField(status, 'disruptionsAllowed');
  if (allowed < 0) throw forbidden(qr, name, 'pdb disruptions allowed is negative');
  const disrupted = isObject(status.disruptedPods) ? status.disruptedPods : {};
  if (Object.keys(disrupted).length > MAX_DISRUPTED_POD_SIZE) {
    throw forbidden(qr, name, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
  }
  if (allowed === 0) throw tooManyRequests(refusalReason(name, status), 0);
  status.disruptionsAllowed = allowed - 1;
  if (allowed - 1 === 0) updateDisruptionAllowedCondition(status);
  if (dryRun) return true;
  status.disruptedPods = { ...disrupted, [podName]: nowTimestamp() };
  pdb.status = status;
  try {
    await pdbTarget.server.storage.update(PDB_TYPE, stored.key, pdb, stored.resourceVersion);
    return true;
  } catch (err) {
    if (err instanceof StorageError && err.code === 'Conflict') return false;
    throw storageErrorToApi(err, pdbTarget, name);
  }
}

/** The DisruptionBudget cause of a refused eviction, in kube's order of checks. */
function refusalReason(name: string, status: Obj): string {
  const condition = findCondition(status.conditions, DISRUPTION_ALLOWED);
  const message = condition !== undefined ? stringField(condition, 'message') : '';
  const refused = condition !== undefined && condition.status === 'False' && message !== '';
  if (refused && condition.reason === 'SyncFailed') {
    return `The disruption budget ${name} does not allow evicting pods currently because it failed sync: ${message}`;
  }
  const current = intField(status, 'currentHealthy');
  const desired = intField(status, 'desiredHealthy');
  if (current <= desired) return `The disruption budget ${name} needs ${desired} healthy pods and has ${current} currently`;
  if (refused) return `The disruption budget ${name} does not allow evicting pods currently (${stringField(condition, 'reason')}): ${message}`;
  return `The disruption budget ${name} does not allow evicting pods currently`;
}

/**
 * POST pods/NAME/eviction as kube's EvictionREST handles it: pods that are pending, finished or
 * already terminating are deleted without consulting PodDisruptionBudgets; otherwise the one PDB
 * matching the pod (more than one: 500) must allow a disruption, which is consumed (disruptionsAllowed
 * decremented, the pod recorded in disruptedPods) before the pod gets the DisruptionTarget condition
 * and is deleted with the Eviction's DeleteOptions. Unready pods pass without consuming the budget
 * when the PDB's unhealthyPodEvictionPolicy is AlwaysAllow, or (IfHealthyBudget, the default) when the
 * application is healthy enough. A dry run checks everything and writes nothing.
 * Resolves when the pod was evicted; throws the ApiError kube answers otherwise.
 */
export async function evictPod(pods: ResourceTarget, name: string, input: EvictionInput): Promise<void> {
  if (input.name !== name) throw badRequest('name in URL does not match name in Eviction object');
  if (input.deleteOptions?.ignoreStoreReadErrorWithClusterBreakingPotential === true) {
    throw invalid('Eviction', 'policy', name, [
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: true: can not be set for pod eviction, try after removing the option',
        field: 'deleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential',
      },
    ]);
  }
  const original = deleteOptionsOf(effectiveDeleteOptions(input));
  const rvUnset = original.preconditions?.resourceVersion === undefined;
  const podKey = objectKey(pods.ri.namespace, name);

  // Pods whose PDBs do not matter are deleted directly; a lost race re-reads the pod (unless the
  // client pinned a resourceVersion, which no retry can satisfy).
  let pod: Obj;
  let podVersion: string;
  for (let attempt = 1; ; attempt++) {
    const stored = await withStorage(pods, name, () => pods.server.storage.get(pods.type, podKey));
    if (!stored) throw notFound({ group: '', resource: 'pods' }, name);
    pod = JSON.parse(stored.json) as Obj;
    podVersion = stored.resourceVersion;
    if (!canIgnorePDB(pod)) break;
    const options = shouldEnforceResourceVersion(pod) && rvUnset ? withResourceVersion(original, podVersion) : original;
    try {
      await addConditionAndDeletePod(pods, name, options);
      return;
    } catch (err) {
      if (!(isConflict(err) && rvUnset && attempt < EVICTION_ATTEMPTS)) throw err;
    }
  }

  const pdbInfo = pods.server.catalog.get('policy', 'v1', 'poddisruptionbudgets');
  const budgets = pdbInfo === undefined ? [] : await matchingBudgets(pods, pod);
  if (budgets.length > 1) {
    throw new ApiError(500, '', 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.', {});
  }
  let pinToRead = false;
  let pdbName = '';
  if (budgets.length === 1 && pdbInfo !== undefined) {
    let stored: StoredObject | undefined = budgets[0];
    const pdb = JSON.parse(stored.json) as Obj;
    pdbName = stringField(metadataOf(pdb), 'name');
    const spec = isObject(pdb.spec) ? pdb.spec : {};
    const status = isObject(pdb.status) ? pdb.status : {};
    if (!isPodReady(pod)) {
      // An unready pod does not count as healthy: deleting it disrupts nothing the budget protects.
      const desired = intField(status, 'desiredHealthy');
      if (spec.unhealthyPodEvictionPolicy === 'AlwaysAllow' || (intField(status, 'currentHealthy') >= desired && desired > 0)) pinToRead = true;
    }
    if (!pinToRead) {
      const pdbTarget = makeTarget(pods.server, pdbInfo, pods.ri.namespace, pdbName);
      for (let attempt = 1; ; attempt++) {
        if (stored === undefined) throw notFound({ group: 'policy', resource: 'poddisruptionbudgets' }, pdbName);
        if (await checkAndDecrement(pdbTarget, stored, name, original.dryRun)) break;
        if (attempt >= EVICTION_ATTEMPTS) {
          throw new ApiError(
            504,
            'Timeout',
            `Timeout: couldn't update PodDisruptionBudget "${pdbName}" due to conflicts`,
            { retryAfterSeconds: 10 },
            { 'Retry-After': '10' },
          );
        }
        stored = await withStorage(pdbTarget, pdbName, () => pdbTarget.server.storage.get(PDB_TYPE, objectKey(pods.ri.namespace, pdbName)));
      }
    }
  }

  // The pod must not have become ready since its health was judged: pin the version read.
  const options = pinToRead ? withResourceVersion(original, podVersion) : original;
  try {
    await addConditionAndDeletePod(pods, name, options);
  } catch (err) {
    if (isConflict(err) && pinToRead && rvUnset) throw stillProcessing(pdbName);
    throw err;
  }
}
