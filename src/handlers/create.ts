import { randomUUID } from 'node:crypto';
import { alreadyExists, badRequest, methodNotAllowed } from '../api/errors.js';
import { writeObject } from '../codec/response-writer.js';
import { prepareForCreate } from '../strategy/resource-strategy.js';
import { shapeStoredObject } from '../codec/go-shape.js';
import { withStorage, writeOptionsOf, type ResourceRequest, outputFor, scaleKind } from './context.js';
import { decodeObject } from './decode-object.js';
import { canonicalize, metadataOf, nowTimestamp, objectKey, stringField, type Obj } from './object-util.js';
import { generateName, validateCreate } from './validate-object.js';
import { withServiceAllocation } from '../services/service-allocation.js';

/**
 * POST to a collection: decodes, fills system metadata, runs admission and validation, and stores
 * the object if its name is free (409 AlreadyExists otherwise). Answers 201 with the stored object.
 */
export async function handleCreate(r: ResourceRequest): Promise<void> {
  if (r.ri.name !== '') throw methodNotAllowed();
  const format = outputFor(r, 'object', ...scaleKind(r));
  const dryRun = writeOptionsOf(r).dryRun;
  const obj = await decodeObject(r);
  const created = await createObject(r, obj, dryRun);
  writeObject(r.res, 201, created, format);
}

/** The shared create path (also used by PUT on types that allow create-on-update). Returns JSON text. */
export async function createObject(r: ResourceRequest, input: Obj, dryRun: boolean): Promise<string> {
  const meta = metadataOf(input);
  const ns = stringField(meta, 'namespace');
  if (r.info.namespaced) {
    if (ns !== '' && ns !== r.ri.namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    meta.namespace = r.ri.namespace;
  } else if (ns !== '') {
    // kube clears the namespace of cluster-scoped objects.
    delete meta.namespace;
  }
  if (stringField(meta, 'name') === '' && stringField(meta, 'generateName') !== '') {
    meta.name = generateName(stringField(meta, 'generateName'));
  }
  meta.uid = randomUUID();
  meta.creationTimestamp = nowTimestamp();
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  delete meta.selfLink;
  meta.resourceVersion = '';
  const obj = canonicalize(input, r.info.kind, r.apiVersion);
  prepareForCreate(r.info, obj);
  shapeStoredObject(obj, r.info);
  const name = stringField(metadataOf(obj), 'name');
  const attrs = {
    operation: 'CREATE' as const, info: r.info, namespace: r.ri.namespace, name, subresource: '', object: obj, oldObject: undefined, dryRun,
  };
  await r.services.admission.admit(attrs);
  const key = objectKey(r.info.namespaced ? r.ri.namespace : '', name);
  return withServiceAllocation(r, obj, undefined, dryRun, async () => {
    validateCreate(r, obj);
    await r.services.admission.validate(attrs);
    if (dryRun) {
      const existing = await withStorage(r, name, () => r.services.storage.get(r.type, key));
      if (existing) throw alreadyExists({ group: r.info.group, resource: r.info.resource }, name);
      delete metadataOf(obj).resourceVersion;
      return JSON.stringify(obj);
    }
    const stored = await withStorage(r, name, () => r.services.storage.create(r.type, key, obj));
    return stored.json;
  });
}
