/**
 * What kube's Job strategy does on create unless `spec.manualSelector` is true: the pod template gets
 * the job-name and controller-uid labels (legacy and `batch.kubernetes.io/` forms, where not already
 * set) and the selector gets `batch.kubernetes.io/controller-uid: <uid>`, so a Job's pods are its own;
 * a Job without labels of its own carries its template's.
 */
import { isObject, metadataOf, stringField, type Obj } from '../api/object-util.js';

function objectIn(parent: Obj, key: string): Obj {
  const v = parent[key];
  if (isObject(v)) return v;
  const created: Obj = {};
  parent[key] = created;
  return created;
}

/** Generates the selector and template labels of a Job being created (its uid must be set). */
export function generateJobSelector(job: Obj): void {
  const spec = objectIn(job, 'spec');
  if (spec.manualSelector === true) return;
  const meta = metadataOf(job);
  const uid = stringField(meta, 'uid');
  const name = stringField(meta, 'name');
  const labels = objectIn(objectIn(objectIn(spec, 'template'), 'metadata'), 'labels');
  for (const [key, value] of [
    ['job-name', name],
    ['batch.kubernetes.io/job-name', name],
    ['controller-uid', uid],
    ['batch.kubernetes.io/controller-uid', uid],
  ] as const) {
    if (labels[key] === undefined) labels[key] = value;
  }
  const matchLabels = objectIn(objectIn(spec, 'selector'), 'matchLabels');
  if (matchLabels['batch.kubernetes.io/controller-uid'] === undefined) matchLabels['batch.kubernetes.io/controller-uid'] = uid;
  // kube defaults the Job again when it reads it back from storage: a Job without labels takes its
  // template's, generated ones included.
  const own = meta.labels;
  if (!isObject(own) || Object.keys(own).length === 0) meta.labels = { ...labels };
}
