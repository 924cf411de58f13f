import { randomUUID } from 'node:crypto';
import { canonicalize, isObject, jsonEqual, metadataOf, nowTimestamp, objectKey, stringField, type Obj } from '../../api/object-util.js';
import { readSchemaJson } from '../../schema/schema-files.js';
import { type Storage } from '../../storage/storage.js';
import { roleRefOf, rulesOf, subjectsOf, type Subject } from './policy-rule.js';
import { RBAC_TYPES } from './rbac-policy.js';
import { uncoveredRules } from './rule-coverage.js';
import { StorageError } from '../../api/storage-error.js';
import { arrayField } from '../../api/values.js';

/** The annotation that lets the server reconcile a bootstrap object (`"false"` protects an edited one). */
export const AUTO_UPDATE = 'rbac.authorization.kubernetes.io/autoupdate';

/** kube-apiserver 1.36's bootstrap RBAC policy (schema/rbac-bootstrap-policy.json, captured by scripts/capture-rbac-bootstrap.mjs). */
export interface BootstrapPolicy {
  clusterRoles: Obj[];
  clusterRoleBindings: Obj[];
  roles: Obj[];
  roleBindings: Obj[];
}

let cached: BootstrapPolicy | undefined;

/** The bootstrap policy, read once from the project's schema folder. */
export function bootstrapPolicy(): BootstrapPolicy {
  if (cached === undefined) {
    const raw = readSchemaJson('rbac-bootstrap-policy.json');
    const objectsAt = (k: string): Obj[] => arrayField(raw, k).filter(isObject);
    cached = {
      clusterRoles: objectsAt('clusterRoles'),
      clusterRoleBindings: objectsAt('clusterRoleBindings'),
      roles: objectsAt('roles'),
      roleBindings: objectsAt('roleBindings'),
    };
  }
  return cached;
}

function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (isObject(value)) for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** Labels and annotations of `expected` added where `existing` lacks them (existing values win). */
function mergeMetadata(existing: Obj, expected: Obj): boolean {
  const meta = metadataOf(existing);
  const want = metadataOf(expected);
  let changed = false;
  for (const field of ['labels', 'annotations'] as const) {
    const have = stringMap(meta[field]);
    const merged = { ...stringMap(want[field]), ...have };
    if (Object.keys(merged).length !== Object.keys(have).length) {
      meta[field] = merged;
      changed = true;
    }
  }
  return changed;
}

function selectorsOf(role: Obj): unknown[] | undefined {
  return isObject(role.aggregationRule) && Array.isArray(role.aggregationRule.clusterRoleSelectors) ? role.aggregationRule.clusterRoleSelectors : undefined;
}

/** kube's computeReconciledRole (extra permissions kept): the role to write, or undefined when up to date. */
export function reconcileRole(existing: Obj, expected: Obj): Obj | undefined {
  const result = structuredClone(existing);
  let changed = mergeMetadata(result, expected);
  const missing = uncoveredRules(rulesOf(existing), rulesOf(expected));
  if (missing.length > 0) {
    result.rules = [...((Array.isArray(existing.rules) ? existing.rules : []) as unknown[]), ...missing];
    changed = true;
  }
  const want = selectorsOf(expected);
  const have = selectorsOf(existing);
  if (want === undefined && have !== undefined) {
    delete result.aggregationRule;
    changed = true;
  } else if (want !== undefined) {
    const add = want.filter((w) => !(have ?? []).some((h) => jsonEqual(h, w)));
    if (add.length > 0) {
      result.aggregationRule = { clusterRoleSelectors: [...(have ?? []), ...add] };
      changed = true;
    }
  }
  return changed ? result : undefined;
}

function sameSubject(a: Subject, b: Subject): boolean {
  return a.kind === b.kind && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '') && (a.apiGroup ?? '') === (b.apiGroup ?? '');
}

/** kube's computeReconciledRoleBinding (extra subjects kept): 'recreate' when the roleRef differs. */
export function reconcileBinding(existing: Obj, expected: Obj): Obj | 'recreate' | undefined {
  if (!jsonEqual(roleRefOf(existing), roleRefOf(expected))) return 'recreate';
  const result = structuredClone(existing);
  let changed = mergeMetadata(result, expected);
  const have = subjectsOf(existing);
  const expectedRaw = Array.isArray(expected.subjects) ? expected.subjects.filter(isObject) : [];
  const expectedSubjects = subjectsOf(expected);
  const missing = expectedRaw.filter((_, i) => !have.some((h) => sameSubject(h, expectedSubjects[i])));
  if (missing.length > 0) {
    result.subjects = [...((Array.isArray(existing.subjects) ? existing.subjects : []) as unknown[]), ...missing];
    changed = true;
  }
  return changed ? result : undefined;
}

function newObject(boot: Obj): Obj {
  const obj = structuredClone(boot);
  const meta = metadataOf(obj);
  meta.uid = randomUUID();
  meta.creationTimestamp = nowTimestamp();
  return canonicalize(obj, stringField(obj, 'kind'), stringField(obj, 'apiVersion'));
}

function ignoreRace(err: unknown): void {
  if (!(err instanceof StorageError && ['AlreadyExists', 'Conflict', 'NotFound'].includes(err.code))) throw err;
}

async function ensure(storage: Storage, type: string, boots: Obj[], reconcile: (existing: Obj, expected: Obj) => Obj | 'recreate' | undefined): Promise<void> {
  for (const boot of boots) {
    const meta = metadataOf(boot);
    const key = objectKey(stringField(meta, 'namespace'), stringField(meta, 'name'));
    try {
      const stored = await storage.get(type, key);
      if (stored === undefined) {
        await storage.create(type, key, newObject(boot));
        continue;
      }
      const existing = JSON.parse(stored.json) as Obj;
      if (stringMap(metadataOf(existing).annotations)[AUTO_UPDATE] === 'false') continue;
      const next = reconcile(existing, boot);
      if (next === undefined) continue;
      if (next === 'recreate') {
        await storage.delete(type, key, stored.resourceVersion);
        await storage.create(type, key, newObject(boot));
      } else {
        await storage.update(type, key, next, stored.resourceVersion);
      }
    } catch (err) {
      // Another process wrote it first: its result is as good as ours.
      ignoreRace(err);
    }
  }
}

/**
 * kube-apiserver's `rbac/bootstrap-roles` post-start hook: creates every missing object of the
 * bootstrap policy, and reconciles existing ones unless annotated `rbac.authorization.kubernetes.io/
 * autoupdate: "false"` (missing rules, aggregation selectors, subjects, labels and annotations are
 * added; a binding whose roleRef changed is recreated). Safe to run from several processes at once.
 */
export async function ensureBootstrapPolicy(storage: Storage): Promise<void> {
  const policy = bootstrapPolicy();
  await ensure(storage, RBAC_TYPES.clusterRoles, policy.clusterRoles, reconcileRole);
  await ensure(storage, RBAC_TYPES.clusterRoleBindings, policy.clusterRoleBindings, reconcileBinding);
  await ensure(storage, RBAC_TYPES.roles, policy.roles, reconcileRole);
  await ensure(storage, RBAC_TYPES.roleBindings, policy.roleBindings, reconcileBinding);
}
