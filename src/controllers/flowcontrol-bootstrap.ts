import { randomUUID } from 'node:crypto';
import { canonicalize, isObject, jsonEqual, metadataOf, nowTimestamp, type Obj } from '../api/object-util.js';
import { readSchemaJson } from '../schema/schema-files.js';
import { type Storage } from '../storage/storage.js';
import { StorageError } from '../api/storage-error.js';

/** Storage type of FlowSchemas. */
export const FLOW_SCHEMA_TYPE = 'flowschemas.flowcontrol.apiserver.k8s.io';
/** Storage type of PriorityLevelConfigurations. */
export const PRIORITY_LEVEL_TYPE = 'prioritylevelconfigurations.flowcontrol.apiserver.k8s.io';

const API_VERSION = 'flowcontrol.apiserver.k8s.io/v1';
/** kube's flowcontrolv1.AutoUpdateAnnotationKey. */
const AUTO_UPDATE = 'apf.kubernetes.io/autoupdate-spec';

/** One bootstrap object: its name and (defaulted) spec. */
export interface BootstrapObject {
  name: string;
  spec: Obj;
}

/** kube-apiserver 1.36's APF bootstrap configuration, from `schema/flowcontrol-bootstrap.json`. */
export interface FlowControlBootstrap {
  mandatoryPriorityLevelConfigurations: BootstrapObject[];
  mandatoryFlowSchemas: BootstrapObject[];
  suggestedPriorityLevelConfigurations: BootstrapObject[];
  suggestedFlowSchemas: BootstrapObject[];
}

function objects(data: Obj, field: string): BootstrapObject[] {
  const list = data[field];
  if (!Array.isArray(list)) throw new Error(`schema/flowcontrol-bootstrap.json: ${field} is not a list`);
  return list.map((item) => {
    if (!isObject(item) || typeof item.name !== 'string' || !isObject(item.spec)) throw new Error(`schema/flowcontrol-bootstrap.json: bad entry in ${field}`);
    return { name: item.name, spec: item.spec };
  });
}

let loaded: FlowControlBootstrap | undefined;

/** The bootstrap configuration (read once). Throws when the data file is missing or malformed. */
export function flowControlBootstrap(): FlowControlBootstrap {
  if (loaded === undefined) {
    const data = readSchemaJson('flowcontrol-bootstrap.json');
    if (!isObject(data)) throw new Error('schema/flowcontrol-bootstrap.json is not an object');
    loaded = {
      mandatoryPriorityLevelConfigurations: objects(data, 'mandatoryPriorityLevelConfigurations'),
      mandatoryFlowSchemas: objects(data, 'mandatoryFlowSchemas'),
      suggestedPriorityLevelConfigurations: objects(data, 'suggestedPriorityLevelConfigurations'),
      suggestedFlowSchemas: objects(data, 'suggestedFlowSchemas'),
    };
  }
  return loaded;
}

/** Go's strconv.ParseBool; undefined for anything else. */
function parseBool(value: unknown): boolean | undefined {
  if (typeof value !== 'string') return undefined;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  return undefined;
}

function annotationsOf(obj: Obj): Record<string, unknown> {
  const annotations = metadataOf(obj).annotations;
  return isObject(annotations) ? annotations : {};
}

function newObject(kind: string, boot: BootstrapObject): Obj {
  return canonicalize(
    {
      metadata: {
        name: boot.name,
        uid: randomUUID(),
        generation: 1,
        creationTimestamp: nowTimestamp(),
        annotations: { [AUTO_UPDATE]: 'true' },
      },
      spec: structuredClone(boot.spec),
      status: {},
    },
    kind,
    API_VERSION,
  );
}

/**
 * kube's ReviseIfNeeded: the object to write instead of `current`, or undefined when it is up to
 * date. Mandatory objects always get the bootstrap spec; suggested ones only while their
 * autoupdate-spec annotation says true (or, without a readable annotation, while generation is 1:
 * nobody has edited them). The annotation is made to say what was decided.
 */
function revise(current: Obj, boot: BootstrapObject, mandatory: boolean): Obj | undefined {
  const meta = metadataOf(current);
  const annotation = parseBool(annotationsOf(current)[AUTO_UPDATE]);
  const autoUpdate = mandatory || (annotation ?? meta.generation === 1);
  const updateAnnotation = annotation !== autoUpdate;
  const specChanged = autoUpdate && !jsonEqual(boot.spec, current.spec);
  if (!updateAnnotation && !specChanged) return undefined;
  const revised = structuredClone(current);
  const revisedMeta = metadataOf(revised);
  if (specChanged) {
    revised.spec = structuredClone(boot.spec);
    revisedMeta.generation = (typeof meta.generation === 'number' ? meta.generation : 0) + 1;
  }
  if (updateAnnotation) revisedMeta.annotations = { ...annotationsOf(current), [AUTO_UPDATE]: String(autoUpdate) };
  return revised;
}

async function ensureObjects(storage: Storage, type: string, kind: string, boots: BootstrapObject[], mandatory: boolean): Promise<void> {
  for (const boot of boots) {
    const stored = await storage.get(type, boot.name);
    if (!stored) {
      try {
        await storage.create(type, boot.name, newObject(kind, boot));
      } catch (err) {
        // Another process created it first; the next round checks its spec.
        if (!(err instanceof StorageError && err.code === 'AlreadyExists')) throw err;
      }
      continue;
    }
    const revised = revise(JSON.parse(stored.json) as Obj, boot, mandatory);
    if (revised === undefined) continue;
    try {
      await storage.update(type, boot.name, revised, stored.resourceVersion);
    } catch (err) {
      // Updated or deleted concurrently: the next round looks again, as kube's ensurer does.
      if (!(err instanceof StorageError && (err.code === 'Conflict' || err.code === 'NotFound'))) throw err;
    }
  }
}

/** kube's RemoveUnwantedObjects: deletes objects marked autoupdate-spec=true that the configuration no longer has. */
async function removeUnwanted(storage: Storage, type: string, boots: BootstrapObject[]): Promise<void> {
  const wanted = new Set(boots.map((b) => b.name));
  const listed = await storage.list(type);
  for (const item of listed.items) {
    if (wanted.has(item.key)) continue;
    if (parseBool(annotationsOf(JSON.parse(item.json) as Obj)[AUTO_UPDATE]) !== true) continue;
    try {
      await storage.delete(type, item.key, item.resourceVersion);
    } catch (err) {
      if (!(err instanceof StorageError && (err.code === 'Conflict' || err.code === 'NotFound'))) throw err;
    }
  }
}

/**
 * kube-apiserver's APF bootstrap ensurer (post-start hook `priority-and-fairness-config-producer`):
 * creates every missing mandatory and suggested FlowSchema and PriorityLevelConfiguration with
 * kube's spec and the `apf.kubernetes.io/autoupdate-spec: "true"` annotation; puts back the spec of
 * mandatory objects and of suggested objects still marked for auto-update; deletes auto-updated
 * objects kube no longer ships. Idempotent and safe to run from several processes at once
 * (create-if-absent and compare-and-swap writes; a lost race is left to the next run).
 */
export async function ensureFlowControlConfiguration(storage: Storage): Promise<void> {
  const boot = flowControlBootstrap();
  await ensureObjects(storage, PRIORITY_LEVEL_TYPE, 'PriorityLevelConfiguration', boot.suggestedPriorityLevelConfigurations, false);
  await ensureObjects(storage, FLOW_SCHEMA_TYPE, 'FlowSchema', boot.suggestedFlowSchemas, false);
  await ensureObjects(storage, PRIORITY_LEVEL_TYPE, 'PriorityLevelConfiguration', boot.mandatoryPriorityLevelConfigurations, true);
  await ensureObjects(storage, FLOW_SCHEMA_TYPE, 'FlowSchema', boot.mandatoryFlowSchemas, true);
  await removeUnwanted(storage, FLOW_SCHEMA_TYPE, [...boot.mandatoryFlowSchemas, ...boot.suggestedFlowSchemas]);
  await removeUnwanted(storage, PRIORITY_LEVEL_TYPE, [...boot.mandatoryPriorityLevelConfigurations, ...boot.suggestedPriorityLevelConfigurations]);
}
