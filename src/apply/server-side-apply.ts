import { badRequest, internalError } from '../api/errors.js';
import { isObject, metadataOf, stringField, type Obj } from '../api/object-util.js';
import { ForbiddenKeyError } from '../codec/json-text.js';
import { readYaml, yamlBodyText, YamlDecodeError } from '../codec/yaml-text.js';
import { ApplyConflictError, applyConfiguration } from '../fieldmanager/apply-configuration.js';
import { applyConflictStatus } from '../fieldmanager/apply-conflict-status.js';
import { ManagedFieldsError } from '../fieldmanager/managed-fields.js';
import { resetFieldsFor } from '../fieldmanager/reset-fields.js';
import { emptyObjectFor, typeFor } from '../fieldmanager/track-write.js';
import { TypedValueError } from '../fieldmanager/typed-value.js';
import { goJson } from '../fieldmanager/path-element.js';
import { decodeInto, TypedDecodeError } from '../codec/typed-decode.js';
import { schemaForDefinition } from '../schema/openapi-schema.js';
import { nowTimestamp } from '../api/object-util.js';
import type { ResourceInfo } from '../registry/resource-types.js';

/** The applied configuration of a server-side apply request, checked as kube's applyPatcher checks it. */
export interface AppliedConfiguration {
  object: Obj;
  manager: string;
  force: boolean;
}

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
    if (err instanceof YamlDecodeError) throw badRequest(`error decoding YAML: error converting YAML to JSON: yaml: ${err.message}`);
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
function checkAppliedTypes(info: ResourceInfo, apiVersion: string, config: Obj): void {
  const schema = info.definition !== '' ? schemaForDefinition(info.definition) : undefined;
  if (schema === undefined) return;
  let problems: string[];
  try {
    problems = decodeInto(structuredClone(config), schema).unknownFields.map((f) => `.${f}: field not declared in schema`);
  } catch (err) {
    if (!(err instanceof TypedDecodeError)) throw err;
    problems = [err.message];
  }
  if (problems.length === 0) return;
  const detail = problems.length === 1 ? (problems[0] ?? '') : `errors:\n${problems.map((p) => `  ${p}`).join('\n')}`;
  throw badRequest(`failed to create typed patch object (${objectId(config, apiVersion, info.kind)}): ${detail}`);
}

/**
 * Applies `config` for `manager` to `live` (the object in the request's version, or undefined for
 * a create, which applies to the kind's empty object) and returns the object to store with its
 * managedFields. Throws 409 Conflict with kube's message and causes when fields other managers own
 * would change and `force` is not set; 400 when the configuration cannot be typed (kube: 500).
 */
export function applyToObject(info: ResourceInfo, apiVersion: string, live: Obj | undefined, config: Obj, manager: string, force: boolean): Obj {
  checkAppliedTypes(info, apiVersion, config);
  const base = live ?? emptyObjectFor(info);
  try {
    const { object } = applyConfiguration(base, config, {
      manager,
      apiVersion,
      type: typeFor(info),
      resetFields: resetFieldsFor({ group: info.group, resource: info.resource, hasStatus: 'status' in info.subresources }, ''),
      now: nowTimestamp(),
      force,
      empty: emptyObjectFor(info),
    });
    if (manager === 'kubectl') refreshLastApplied(object, config);
    return object;
  } catch (err) {
    if (err instanceof ApplyConflictError) throw applyConflictStatus(err.conflicts);
    if (err instanceof TypedValueError) throw badRequest(`failed to create typed patch object (${objectId(config, apiVersion, info.kind)}): ${err.message}`);
    if (err instanceof ManagedFieldsError) throw internalError(new Error(`failed to decode managed fields: ${err.message}`));
    throw err;
  }
}
