import { randomUUID } from 'node:crypto';
import { alreadyExists, badRequest } from '../api/errors.js';
import { applyDefaults, prepareForCreate, recordRequester, writeWarnings } from '../strategy/resource-strategy.js';
import { shapeStoredObject } from '../codec/go-shape.js';
import { storageInfoOf } from '../conversion/version-conversion.js';
import { toStorageVersionAsync } from '../conversion/converting-io.js';
import type { ResourceInfo } from '../api/resource-info.js';
import type { CustomResourceFacts } from '../catalog/custom-resource-facts.js';
import { canonicalize, metadataOf, nowTimestamp, objectKey, stringField, type Obj } from '../api/object-util.js';
import type { ResourceTarget } from './server-context.js';
import { admissionRequestOf } from '../api/request-scope.js';
import { withStorage } from './storage-errors.js';
import { generateName, validateCreate } from './validate-object.js';
import { trackCreate } from '../fieldmanager/track-write.js';
import { writeWithKindHooks } from './kind-hooks.js';

/**
 * The shared create path (also used by PUT on types that allow create-on-update). `input` is in the
 * request's version; returns the JSON text of the object in its storage version. With a `manager`,
 * the created object's managedFields record it (src/fieldmanager).
 */
export async function createObject(r: ResourceTarget, input: Obj, dryRun: boolean, manager?: string): Promise<string> {
  const meta = metadataOf(input);
  const sentManagedFields = meta.managedFields;
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
  meta.uid = randomUUID();
  meta.creationTimestamp = nowTimestamp();
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  delete meta.selfLink;
  meta.resourceVersion = '';
  const obj = canonicalize(input, r.info.kind, r.apiVersion);
  // kube's order: defaults as the body is decoded, managedFields, mutating admission, then the
  // strategy's PrepareForCreate, validation and validating admission.
  const facts = r.server.catalog.customResources;
  applyDefaults(r.info, obj, facts);
  shapeStoredObject(obj, r.info);
  if (manager !== undefined) trackCreate({ info: r.info, apiVersion: r.apiVersion, subresource: '', manager, facts }, obj, sentManagedFields);
  // After defaults and managedFields, as kube's BeforeCreate: what defaulting derives from the name
  // (a namespace's name label) is then not the creating manager's for a generated name.
  const objMeta = metadataOf(obj);
  if (stringField(objMeta, 'name') === '' && stringField(objMeta, 'generateName') !== '') {
    // The name goes first, where canonicalize puts it.
    const { name: _empty, ...rest } = objMeta;
    obj.metadata = { name: generateName(stringField(objMeta, 'generateName')), ...rest };
  }
  const name = stringField(metadataOf(obj), 'name');
  const attrs = {
    operation: 'CREATE' as const,
    info: r.info,
    namespace: r.ri.namespace,
    name,
    subresource: '',
    object: obj,
    oldObject: undefined,
    dryRun,
    request: admissionRequestOf(r.scope, 'CREATE'),
  };
  await r.admission.admit(attrs);
  for (const w of prepareForCreate(r.info, obj)) attrs.request.warn(w);
  recordRequester(r.info, obj, attrs.request.user);
  shapeStoredObject(obj, r.info);
  const key = objectKey(r.info.namespaced ? r.ri.namespace : '', name);
  return writeWithKindHooks(r, obj, undefined, dryRun, async () => {
    validateCreate(r, obj);
    for (const w of writeWarnings(r.info, '', obj, undefined)) attrs.request.warn(w);
    await r.admission.validate(attrs);
    if (dryRun) {
      const existing = await withStorage(r, name, () => r.server.storage.get(r.type, key));
      if (existing) throw alreadyExists({ group: r.info.group, resource: r.info.resource }, name);
      const wouldStore = await storedForCreate(facts, r.info, obj);
      delete metadataOf(wouldStore).resourceVersion;
      return JSON.stringify(wouldStore);
    }
    const toStore = await storedForCreate(facts, r.info, obj);
    const stored = await withStorage(r, name, () => r.server.storage.create(r.type, key, toStore));
    return stored.json;
  });
}

/**
 * The object a create stores: `obj` in its storage version. For a kind stored in another version
 * than the request's, the create preparation runs again there, as kube runs it on its internal
 * object: what converted into the status (an autoscaling/v1 HPA's round-trip annotations) is reset.
 */
async function storedForCreate(facts: CustomResourceFacts, info: ResourceInfo, obj: Obj): Promise<Obj> {
  const stored = await toStorageVersionAsync(facts, obj, info);
  const storageInfo = storageInfoOf(info);
  if (storageInfo === undefined) return stored;
  applyDefaults(storageInfo, stored, facts);
  prepareForCreate(storageInfo, stored);
  shapeStoredObject(stored, storageInfo);
  return stored;
}
