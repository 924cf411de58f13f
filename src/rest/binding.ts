import { conflict, notFound } from '../api/errors.js';
import { isObject, nowTimestamp, stringField, type Obj } from '../api/object-util.js';
import { guaranteedUpdate, RETRY, type SendingWrite } from './guaranteed-update.js';
import type { StoredObject } from '../storage/storage.js';
import type { ResourceTarget } from './server-context.js';
import { storageErrorToApi } from './storage-errors.js';
import { StorageError } from '../api/storage-error.js';

/**
 * `pods/NAME/binding`: assigns the pod to `node` and marks it `PodScheduled`, in the store's
 * guaranteed-update loop as kube does: a concurrent write to the pod is retried, a concurrent binding
 * finds the node already set (409 naming `pods/binding`). The binding's annotations and labels are
 * copied onto the pod, overwriting its own. A dry run checks and writes nothing.
 */
export async function bindPod(
  target: ResourceTarget,
  name: string,
  node: string,
  dryRun: boolean,
  copied: { labels: Obj; annotations: Obj } = { labels: {}, annotations: {} },
): Promise<void> {
  const qr = { group: target.info.group, resource: target.info.resource };
  const attempt = async (current: StoredObject | undefined, podKey: string, sendingWrite: SendingWrite): Promise<true | typeof RETRY> => {
    if (!current) throw notFound(qr, name);
    const pod = JSON.parse(current.json) as Obj;
    const spec = isObject(pod.spec) ? pod.spec : {};
    const assigned = stringField(spec, 'nodeName');
    if (assigned !== '') {
      throw conflict({ ...qr, resource: `${qr.resource}/binding` }, name, `pod ${name} is already assigned to node "${assigned}"`);
    }
    if (dryRun) return true;
    spec.nodeName = node;
    pod.spec = spec;
    const metadata = isObject(pod.metadata) ? pod.metadata : {};
    if (Object.keys(copied.annotations).length > 0)
      metadata.annotations = sortedKeys({ ...(isObject(metadata.annotations) ? metadata.annotations : {}), ...copied.annotations });
    if (Object.keys(copied.labels).length > 0) metadata.labels = sortedKeys({ ...(isObject(metadata.labels) ? metadata.labels : {}), ...copied.labels });
    pod.metadata = metadata;
    const status = isObject(pod.status) ? pod.status : {};
    const conditions = Array.isArray(status.conditions) ? status.conditions.filter((c) => !(isObject(c) && c.type === 'PodScheduled')) : [];
    conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: nowTimestamp() });
    status.conditions = conditions;
    pod.status = status;
    try {
      sendingWrite();
      await target.server.storage.update(target.type, podKey, pod, current.resourceVersion);
      return true;
    } catch (err) {
      if (err instanceof StorageError && err.code === 'Conflict') return RETRY;
      throw storageErrorToApi(err, target, name);
    }
  };
  // Starts from the list cache's copy where this process keeps one (Redis), saving a read.
  await guaranteedUpdate(target, name, attempt, { startFromCache: true });
}

/** The map with its keys in order, as Go writes a map. */
function sortedKeys(map: Obj): Obj {
  return Object.fromEntries(Object.entries(map).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
}
