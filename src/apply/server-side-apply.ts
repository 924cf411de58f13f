import { ApiError, badRequest, internalError } from '../api/errors.js';
import { isObject, metadataOf, stringField, type Obj } from '../api/object-util.js';
import { ForbiddenKeyError } from '../codec/json-text.js';
import { readYaml, yamlBodyText, YamlDecodeError } from '../codec/yaml-text.js';
import { ApplyConflictError, applyConfiguration, type ApplyRecord } from '../fieldmanager/apply-configuration.js';
import { applyConflictStatus } from '../fieldmanager/apply-conflict-status.js';
import { ManagedFieldsError } from '../fieldmanager/managed-fields.js';
import { resetFieldsFor } from '../fieldmanager/reset-fields.js';
import { emptyObjectFor, typeFor, versionViewsFor } from '../fieldmanager/track-write.js';
import { toFieldSet, TypedValueError } from '../fieldmanager/typed-value.js';
import { compareObjects } from '../fieldmanager/compare-objects.js';
import type { FieldSet } from '../fieldmanager/field-set.js';
import { goJson } from '../fieldmanager/path-element.js';
import { decodeInto, TypedDecodeError } from '../codec/typed-decode.js';
import { schemaForDefinition } from '../schema/openapi-schema.js';
import { undeclaredFields } from '../fieldmanager/custom-smd-type.js';
import { decodeManagedFields, encodeManagedFields } from '../fieldmanager/managed-fields.js';
import { parentEntriesAfterScale, replicasPath, scaleEntriesOf } from '../fieldmanager/scale-managed-fields.js';
import { smdTypeOf, type SmdType } from '../fieldmanager/smd-type.js';
import { replicasPathsOf } from '../strategy/scale.js';
import { nowTimestamp } from '../api/object-util.js';
import { apiVersionOf, type ResourceInfo } from '../api/resource-info.js';
import type { CustomResourceFacts } from '../catalog/custom-resource-facts.js';
import type { VersionViews } from '../fieldmanager/version-comparison.js';
import { webhookVersionViews } from '../fieldmanager/webhook-version-views.js';
import { SCALE_API_VERSION, SCALE_DEFINITION } from '../api/scale-kind.js';

function gvkString(apiVersion: string, kind: string): string {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  return `${group}/${version}, Kind=${kind}`;
}

/**
 * Reads an `application/apply-patch+yaml` body (YAML or JSON) as kube does, with the keys it
 * repeats (go-yaml's strict wording, for appliedDuplicates): 400 `error decoding
 * YAML: ...` when it does not read as one object (syntax errors in the shared YAML reader's
 * words, which are not always go-yaml's), 400 `invalid object type: <gvk>` when its
 * apiVersion and kind are not the request's, 400 `metadata.managedFields must be nil` when it
 * carries managedFields (even empty).
 */
export function readAppliedConfiguration(
  body: Buffer,
  target: { apiVersion: string; kind: string },
  maxDepth: number,
  /** Decodes a body that is not YAML (application/apply-patch+cbor); it has no duplicate keys to report. */
  decodeOther?: (body: Buffer, maxDepth: number) => unknown,
): { config: Obj; duplicates: string[] } {
  let value: unknown;
  let duplicates: string[] = [];
  try {
    if (decodeOther) value = decodeOther(body, maxDepth);
    else ({ value, duplicates } = readYaml(yamlBodyText(body), { maxDepth }));
  } catch (err) {
    if (err instanceof ForbiddenKeyError) throw badRequest(err.message);
    if (err instanceof YamlDecodeError) throw badRequest(`error decoding YAML: error converting YAML to JSON: ${err.kubeMessage}`);
    throw err;
  }
  if (value === null || value === undefined) value = {};
  if (!isObject(value)) {
    const type = Array.isArray(value) ? 'array' : typeof value === 'boolean' ? 'bool' : typeof value;
    throw badRequest(
      `error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ${type} into Go value of type map[string]interface {}`,
    );
  }
  const apiVersion = typeof value.apiVersion === 'string' ? value.apiVersion : '';
  const kind = typeof value.kind === 'string' ? value.kind : '';
  if (apiVersion !== target.apiVersion || kind !== target.kind) throw badRequest(`invalid object type: ${gvkString(apiVersion, kind)}`);
  const meta = value.metadata;
  if (isObject(meta) && meta.managedFields !== undefined && meta.managedFields !== null) throw badRequest('metadata.managedFields must be nil');
  return { config: value, duplicates };
}

/**
 * What fieldValidation makes of keys the applied YAML repeats, checked after the apply as kube's
 * applyPatcher does: Strict answers 400 in go-yaml's strict words, Warn returns them as warnings,
 * Ignore drops them.
 */
export function appliedDuplicates(duplicates: readonly string[], mode: string): string[] {
  if (duplicates.length === 0 || mode === 'Ignore') return [];
  if (mode === 'Strict') {
    throw badRequest(`error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  ${duplicates.join('\n  ')}`);
  }
  return [...duplicates];
}

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * kube's lastAppliedUpdater: when kubectl applies server-side to an object that carries client-side
 * apply's last-applied annotation, the annotation becomes the applied configuration (without the
 * annotation itself), as Go's JSON encoder writes it, so that a later client-side apply diffs
 * against what was applied last.
 */
function refreshLastApplied(object: Obj, config: Obj): void {
  const annotations = metadataOf(object).annotations;
  if (!isObject(annotations) || typeof annotations[LAST_APPLIED] !== 'string' || annotations[LAST_APPLIED] === '') return;
  const copy = structuredClone(config);
  const meta = copy.metadata;
  if (isObject(meta) && isObject(meta.annotations)) delete meta.annotations[LAST_APPLIED];
  annotations[LAST_APPLIED] = `${goJson(copy)}\n`;
}

/** kube's objectGVKNN: `<namespace>/<name>; <group>/<version>, Kind=<kind>` of the applied object. */
function objectId(config: Obj, apiVersion: string, kind: string): string {
  const meta = metadataOf(config);
  return `${stringField(meta, 'namespace')}/${stringField(meta, 'name')}; ${gvkString(apiVersion, kind)}`;
}

/**
 * Checks the applied configuration against the kind's schema, as kube's typed conversion of the
 * patch does before merging: a value of the wrong type or a field the kind does not declare gets
 * kube's `failed to create typed patch object (...)` message, as a 400 (kube answers 500; Capstan
 * answers bad input with a 4xx). The type errors are worded by Capstan's typed decoder (Go's JSON
 * decoder), not structured-merge-diff.
 */
function checkAppliedTypes(info: ResourceInfo, apiVersion: string, config: Obj, facts: CustomResourceFacts): void {
  let problems: string[];
  if (info.custom === true) problems = undeclaredFields(config, typeFor(info, facts));
  else {
    const schema = info.definition !== '' ? schemaForDefinition(info.definition) : undefined;
    if (schema === undefined) return;
    try {
      problems = decodeInto(structuredClone(config), schema).unknownFields.map((f) => `.${f}: field not declared in schema`);
    } catch (err) {
      if (!(err instanceof TypedDecodeError)) throw err;
      problems = [err.message];
    }
  }
  if (problems.length === 0) return;
  const detail = problems.length === 1 ? (problems[0] ?? '') : `errors:\n${problems.map((p) => `  ${p}`).join('\n')}`;
  throw badRequest(`failed to create typed patch object (${objectId(config, apiVersion, info.kind)}): ${detail}`);
}

/** The inputs of one apply: the served type, the request's version and subresource, the manager. */
export interface ApplyTarget {
  info: ResourceInfo;
  apiVersion: string;
  /** '' for the object itself, `status` for its status subresource. */
  subresource: string;
  manager: string;
  force: boolean;
  /** The serving catalogue's custom resource facts: a custom type's schema and conversion webhook. */
  facts: CustomResourceFacts;
}

function applyOrThrow(config: Obj, apiVersion: string, kind: string, run: () => Obj): Obj {
  try {
    return run();
  } catch (err) {
    if (err instanceof ApplyConflictError) throw applyConflictStatus(err.conflicts);
    if (err instanceof TypedValueError) throw badRequest(`failed to create typed patch object (${objectId(config, apiVersion, kind)}): ${err.message}`);
    if (err instanceof ManagedFieldsError) throw internalError(new Error(`failed to decode managed fields: ${err.message}`));
    throw err;
  }
}

/**
 * Applies `config` for `t.manager` to `live` (the object in the request's version, or undefined
 * for a create, which applies to the kind's empty object) and returns the object to store with its
 * managedFields. On the `status` subresource the entry records the subresource and leaves out
 * what that write resets (`spec`; the strategy then keeps the stored spec). Throws 409 Conflict
 * with kube's message and causes when fields other managers own would change and `force` is not
 * set; 400 when the configuration cannot be typed (kube: 500).
 */
export function applyToObject(t: ApplyTarget, live: Obj | undefined, config: Obj, versionViews?: VersionViews): Obj {
  const { info, apiVersion, manager, subresource } = t;
  checkAppliedTypes(info, apiVersion, config, t.facts);
  const type = typeFor(info, t.facts);
  const run = (force: boolean): Obj => applyConfiguration(live ?? emptyObjectFor(info), config, applyRecordOf(t, type, force, versionViews)).object;
  return applyOrThrow(config, apiVersion, info.kind, () => {
    let object: Obj;
    try {
      object = run(t.force);
    } catch (err) {
      if (!(err instanceof ApplyConflictError) || manager !== 'kubectl' || live === undefined) throw err;
      // kube's lastAppliedManager: conflicts on fields client-side apply last applied, unchanged
      // since, are forgiven (the apply is forced); only the others are reported.
      const allowed = allowedConflictsFromLastApplied(live, apiVersion, type);
      if (allowed === undefined) throw err;
      const remaining = err.conflicts.filter((c) => !allowed.has(c.path));
      if (remaining.length > 0) throw new ApplyConflictError(remaining);
      object = run(true);
    }
    if (manager === 'kubectl' && subresource === '') refreshLastApplied(object, config);
    return object;
  });
}

/** The record of one apply of `t` (the other versions' views from `versionViews`, else versionViewsFor). */
function applyRecordOf(t: ApplyTarget, type: SmdType, force: boolean, versionViews: VersionViews | undefined): ApplyRecord {
  const { info, subresource } = t;
  return {
    manager: t.manager,
    apiVersion: t.apiVersion,
    type,
    resetFields: resetFieldsFor({ group: info.group, resource: info.resource, hasStatus: 'status' in info.subresources, custom: info.custom }, subresource),
    now: nowTimestamp(),
    force,
    empty: emptyObjectFor(info),
    subresource,
    versionViews: versionViews ?? versionViewsFor(info),
  };
}

/**
 * applyToObject for custom resources whose CRD converts by webhook: managers recorded at another
 * version conflict on, and lose, what the apply changes as seen at their version, the object before
 * and after the apply being converted there by the webhook beforehand (one ConversionReview per
 * version), as kube's field manager converts through the CRD's converter; a converted object with
 * fields its version does not declare is kube's 500. Other kinds, creates and
 * applies that cannot be computed go straight to applyToObject.
 */
export async function applyToObjectConverting(t: ApplyTarget, live: Obj | undefined, config: Obj): Promise<Obj> {
  if (live === undefined || t.info.custom !== true || t.facts.conversionOf(apiVersionOf(t.info.group, t.info.version), t.info.kind) === undefined) {
    return applyToObject(t, live, config);
  }
  let after: Obj;
  try {
    checkAppliedTypes(t.info, t.apiVersion, config, t.facts);
    after = applyConfiguration(
      live,
      config,
      applyRecordOf(t, typeFor(t.info, t.facts), true, () => undefined),
    ).object;
  } catch {
    return applyToObject(t, live, config);
  }
  const views = await webhookVersionViews(t.facts, t.info, live, withoutManagedFields(after), withoutManagedFields(live), true);
  return applyToObject(t, live, config, views);
}

function withoutManagedFields(obj: Obj): Obj {
  const copy = structuredClone(obj);
  delete metadataOf(copy).managedFields;
  return copy;
}

/**
 * The fields client-side apply's last-applied annotation on `live` sets to the values `live`
 * still has (kube's allowedConflictsFromLastApplied); undefined when there is no annotation, it
 * does not read as an object of `apiVersion`, or it cannot be typed.
 */
function allowedConflictsFromLastApplied(live: Obj, apiVersion: string, type: SmdType): FieldSet | undefined {
  const annotations = metadataOf(live).annotations;
  const text = isObject(annotations) ? annotations[LAST_APPLIED] : undefined;
  if (typeof text !== 'string' || text === '') return undefined;
  let lastApplied: unknown;
  try {
    lastApplied = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(lastApplied) || lastApplied.apiVersion !== apiVersion) return undefined;
  try {
    const liveValue = structuredClone(live);
    delete metadataOf(liveValue).managedFields;
    const cmp = compareObjects(lastApplied, liveValue, type);
    return toFieldSet(lastApplied, type).difference(cmp.modified).difference(cmp.added).difference(cmp.removed);
  } catch (err) {
    if (err instanceof TypedValueError) return undefined;
    throw err;
  }
}

const SCALE_KIND = { group: 'autoscaling', version: 'v1', kind: 'Scale' };
let scaleType: SmdType | undefined;

/**
 * Applies a Scale configuration to `scale` (the parent's Scale view) as kube's scale subresource
 * does: the Scale gets the parent's managers of its replicas path (ScaleHandler.ToSubresource), the
 * apply runs on the Scale (autoscaling/v1, subresource `scale`; conflicts name the Scale's
 * `.spec.replicas`), and the result's managers go back onto the parent's entries (ToParent).
 * Returns the applied Scale and the parent's new managedFields.
 */
export function applyToScale(t: ApplyTarget, parent: Obj, scale: Obj, config: Obj): { scale: Obj; managedFields: unknown } {
  checkAppliedTypes({ ...t.info, custom: false, definition: SCALE_DEFINITION, kind: 'Scale' }, SCALE_API_VERSION, config, t.facts);
  scaleType ??= smdTypeOf(schemaForDefinition(SCALE_DEFINITION));
  const type = scaleType;
  const dotted = replicasPathsOf(t.info, t.apiVersion);
  const paths = new Map([...dotted].map(([v, p]) => [v, replicasPath(p)] as const));
  const parentEntries = metadataOf(parent).managedFields;
  const view = structuredClone(scale);
  const entries = encodeManagedFields(scaleEntriesOf(parentEntries, paths));
  if (entries !== undefined) metadataOf(view).managedFields = entries;
  const applied = applyOrThrow(config, SCALE_API_VERSION, 'Scale', () => {
    const { object } = applyConfiguration(view, config, {
      manager: t.manager,
      apiVersion: SCALE_API_VERSION,
      type,
      resetFields: undefined,
      now: nowTimestamp(),
      force: t.force,
      empty: emptyObjectFor(SCALE_KIND),
      subresource: 'scale',
    });
    return object;
  });
  if (t.info.custom === true) {
    // kube-apiserver 1.36 fails here for custom resources: its field manager converts the applied
    // Scale to the custom resource's version, which the custom resource converter refuses.
    throw new ApiError(
      500,
      '',
      `failed to convert new object (${objectId(config, SCALE_API_VERSION, 'Scale')}) to proper version: request to convert CR to an invalid group/version: ${SCALE_API_VERSION}`,
    );
  }
  const scaleManaged = decodeManagedFields(metadataOf(applied).managedFields);
  return { scale: applied, managedFields: parentEntriesAfterScale(parentEntries, scaleManaged, t.apiVersion, paths) ?? [] };
}
