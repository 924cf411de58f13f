/**
 * ObjectMeta validation as kube-apiserver 1.36 performs it on create and update (apimachinery's
 * ValidateObjectMetaAccessor / ValidateObjectMetaAccessorUpdate, plus core's finalizer-name rule and
 * the path-segment check of BeforeCreate). Pure: returns field errors, never throws, never mutates.
 */
import type { StatusCause } from '../api/errors.js';
import { forbiddenField, goJson, goStringSlice, invalidField, requiredField, tooLongField, type BadValue } from './field-errors.js';
import { validateName, validatePathSegment, type NameRule } from './name-rules.js';
import { byteLength, isDNS1123Label, isLabelKey, isLabelValue } from './string-formats.js';
import { asObject, stringElements, stringField } from '../api/values.js';

/** Total bytes of annotation keys and values an object may carry. */
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;
/** kube's FieldImmutableErrorMsg. */
export const FIELD_IMMUTABLE = 'field is immutable';

const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);
const MAX_FIELD_MANAGER_LENGTH = 128;
const MAX_SUBRESOURCE_NAME_LENGTH = 256;

export interface ObjectMetaOptions {
  /** Whether the type is namespace-scoped (metadata.namespace required) or cluster-scoped (forbidden). */
  namespaced: boolean;
  /** The type's name rule, from nameRuleFor(). */
  nameRule: NameRule;
  /** Create (name rule, generateName) or update (immutable fields against `old`). */
  isCreate: boolean;
  /** The stored object's metadata, for updates. */
  old?: unknown;
  /** The whole object, for name rules that compare the name with spec fields (CRDs, APIServices). */
  object?: Record<string, unknown>;
  /** On update, reject a missing metadata.resourceVersion ("must be specified for an update"). */
  requireResourceVersion?: boolean;
}

type Meta = Record<string, unknown>;

function stringMap(v: unknown): Array<[string, string]> {
  const entries: Array<[string, string]> = [];
  for (const [k, val] of Object.entries(asObject(v))) {
    if (typeof val === 'string') entries.push([k, val]);
  }
  // Go iterates maps in random order; sorting keeps the reported order stable.
  return entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** v1validation.ValidateLabels: keys are label keys, values label values; all errors at `fieldPath`. */
export function validateLabels(labels: unknown, fieldPath = 'metadata.labels'): StatusCause[] {
  const errs: StatusCause[] = [];
  for (const [k, v] of stringMap(labels)) {
    for (const msg of isLabelKey(k)) errs.push(invalidField(fieldPath, k, msg));
    for (const msg of isLabelValue(v)) errs.push(invalidField(fieldPath, v, msg));
  }
  return errs;
}

/** ValidateAnnotations: keys are label keys (case-insensitive); keys plus values at most 256 KiB. */
export function validateAnnotations(annotations: unknown, fieldPath = 'metadata.annotations'): StatusCause[] {
  const errs: StatusCause[] = [];
  let total = 0;
  for (const [k, v] of stringMap(annotations)) {
    for (const msg of isLabelKey(k.toLowerCase())) errs.push(invalidField(fieldPath, k, msg));
    total += byteLength(k) + byteLength(v);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push(tooLongField(fieldPath, TOTAL_ANNOTATION_SIZE_LIMIT));
  return errs;
}

/**
 * ValidateFinalizers: each a qualified name, not both "orphan" and "foregroundDeletion"; with
 * `standardFinalizers`, a name without '/' must be one of kube's standard finalizers.
 */
export function validateFinalizers(finalizers: unknown, standardFinalizers: boolean, fieldPath = 'metadata.finalizers'): StatusCause[] {
  const list = stringElements(finalizers);
  const errs: StatusCause[] = [];
  for (const f of list) {
    for (const msg of isLabelKey(f)) errs.push(invalidField(fieldPath, f, msg));
  }
  if (list.includes('orphan') && list.includes('foregroundDeletion')) {
    errs.push(invalidField(fieldPath, goJson(list), 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  if (standardFinalizers) {
    list.forEach((f, i) => {
      if (!f.includes('/') && !STANDARD_FINALIZERS.has(f)) {
        errs.push(invalidField(`${fieldPath}[${i}]`, f, 'name is neither a standard finalizer name nor is it fully qualified'));
      }
    });
  }
  return errs;
}

function parseApiVersion(apiVersion: string): { group: string; version: string } | undefined {
  if (apiVersion === '' || apiVersion === '/') return { group: '', version: '' };
  const slashes = apiVersion.split('/').length - 1;
  if (slashes === 0) return { group: '', version: apiVersion };
  if (slashes === 1) {
    const [group = '', version = ''] = apiVersion.split('/');
    return { group, version };
  }
  return undefined;
}

/** An owner reference as json.Marshal writes a metav1.OwnerReference (json tags, pointers omitted when nil). */
function ownerReferenceJson(ref: Meta): Record<string, unknown> {
  const out: Record<string, unknown> = {
    apiVersion: stringField(ref, 'apiVersion'),
    kind: stringField(ref, 'kind'),
    name: stringField(ref, 'name'),
    uid: stringField(ref, 'uid'),
  };
  if (typeof ref['controller'] === 'boolean') out.controller = ref['controller'];
  if (typeof ref['blockOwnerDeletion'] === 'boolean') out.blockOwnerDeletion = ref['blockOwnerDeletion'];
  return out;
}

/** ValidateOwnerReferences: apiVersion has a version, kind/name/uid non-empty, at most one controller, no Event owners. */
export function validateOwnerReferences(ownerReferences: unknown, fieldPath = 'metadata.ownerReferences'): StatusCause[] {
  const errs: StatusCause[] = [];
  const refs = Array.isArray(ownerReferences) ? ownerReferences.map(asObject) : [];
  let firstController = '';
  for (const ref of refs) {
    const apiVersion = stringField(ref, 'apiVersion');
    const kind = stringField(ref, 'kind');
    const gv = parseApiVersion(apiVersion);
    const version = gv?.version ?? '';
    if (version === '') errs.push(invalidField(`${fieldPath}.apiVersion`, apiVersion, 'version must not be empty'));
    if (kind === '') errs.push(invalidField(`${fieldPath}.kind`, kind, 'must not be empty'));
    if (stringField(ref, 'name') === '') errs.push(invalidField(`${fieldPath}.name`, '', 'must not be empty'));
    if (stringField(ref, 'uid') === '') errs.push(invalidField(`${fieldPath}.uid`, '', 'must not be empty'));
    if (gv !== undefined && gv.group === '' && version === 'v1' && kind === 'Event') {
      errs.push(invalidField(fieldPath, goJson(ownerReferenceJson(ref)), '/v1, Kind=Event is disallowed from being an owner'));
    }
    if (ref['controller'] === true) {
      const current = `${kind}/${stringField(ref, 'name')}`;
      if (firstController !== '') {
        errs.push(
          invalidField(
            fieldPath,
            goJson(refs.map(ownerReferenceJson)),
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
      } else {
        firstController = current;
      }
    }
  }
  return errs;
}

/** ValidateManagedFields: operation Apply/Update, fieldsType FieldsV1, printable manager, short subresource. */
export function validateManagedFields(managedFields: unknown, fieldPath = 'metadata.managedFields'): StatusCause[] {
  const errs: StatusCause[] = [];
  const entries = Array.isArray(managedFields) ? managedFields.map(asObject) : [];
  entries.forEach((entry, i) => {
    const path = `${fieldPath}[${i}]`;
    const operation = stringField(entry, 'operation');
    if (operation !== 'Apply' && operation !== 'Update') {
      errs.push(invalidField(`${path}.operation`, operation, 'must be `Apply` or `Update`'));
    }
    const fieldsType = stringField(entry, 'fieldsType');
    if (fieldsType !== '' && fieldsType !== 'FieldsV1') {
      errs.push(invalidField(`${path}.fieldsType`, fieldsType, 'must be `FieldsV1`'));
    }
    const manager = stringField(entry, 'manager');
    if (byteLength(manager) > MAX_FIELD_MANAGER_LENGTH) errs.push(tooLongField(`${path}.manager`, MAX_FIELD_MANAGER_LENGTH));
    if (/[\u0000-\u001f\u007f-\u009f]/.test(manager)) {
      errs.push(invalidField(`${path}.manager`, manager, 'must only contain printable characters'));
    }
    if (byteLength(stringField(entry, 'subresource')) > MAX_SUBRESOURCE_NAME_LENGTH) {
      errs.push(tooLongField(`${path}.subresource`, MAX_SUBRESOURCE_NAME_LENGTH));
    }
  });
  return errs;
}

/** Metadata checks shared by create and update (kube's validateObjectMetaAccessorWithOptsCommon). */
function validateCommon(meta: Meta, opts: ObjectMetaOptions): StatusCause[] {
  const errs: StatusCause[] = [];
  const namespace = stringField(meta, 'namespace');
  if (opts.namespaced) {
    if (namespace === '') errs.push(requiredField('metadata.namespace'));
    else for (const msg of isDNS1123Label(namespace)) errs.push(invalidField('metadata.namespace', namespace, msg));
  } else if (namespace !== '') {
    errs.push(forbiddenField('metadata.namespace', 'not allowed on this type'));
  }
  const generation = meta['generation'];
  if (typeof generation === 'number' && generation < 0) {
    errs.push(invalidField('metadata.generation', generation, 'must be greater than or equal to 0'));
  }
  errs.push(...validateLabels(meta['labels']));
  errs.push(...validateAnnotations(meta['annotations']));
  errs.push(...validateOwnerReferences(meta['ownerReferences']));
  errs.push(...validateFinalizers(meta['finalizers'], false));
  errs.push(...validateManagedFields(meta['managedFields']));
  return errs;
}

function nameErrors(meta: Meta, check: (name: string, prefix: boolean) => string[]): StatusCause[] {
  const errs: StatusCause[] = [];
  const generateName = stringField(meta, 'generateName');
  const name = stringField(meta, 'name');
  if (generateName !== '') {
    for (const msg of check(generateName, true)) errs.push(invalidField('metadata.generateName', generateName, msg));
  }
  if (name === '') errs.push(requiredField('metadata.name', 'name or generateName is required'));
  else for (const msg of check(name, false)) errs.push(invalidField('metadata.name', name, msg));
  return errs;
}

function kubeFinalizerErrors(meta: Meta): StatusCause[] {
  const errs: StatusCause[] = [];
  stringElements(meta['finalizers']).forEach((f, i) => {
    if (!f.includes('/') && !STANDARD_FINALIZERS.has(f)) {
      errs.push(invalidField(`metadata.finalizers[${i}]`, f, 'name is neither a standard finalizer name nor is it fully qualified'));
    }
  });
  return errs;
}

/** Go's time.Time String() for an RFC 3339 timestamp, as kube prints an immutable timestamp. */
function goTime(v: unknown): BadValue {
  if (typeof v !== 'string' || v === '') return v === undefined || v === null ? null : JSON.stringify(v);
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) return v;
  const iso = d.toISOString();
  const frac = iso.slice(20, 23).replace(/0+$/, '');
  return { goSyntax: `${iso.slice(0, 10)} ${iso.slice(11, 19)}${frac ? `.${frac}` : ''} +0000 UTC` };
}

function sameValue(a: unknown, b: unknown): boolean {
  const norm = (v: unknown): unknown => (v === undefined || v === '' ? null : v);
  return JSON.stringify(norm(a)) === JSON.stringify(norm(b));
}

function updateErrors(meta: Meta, old: Meta, opts: ObjectMetaOptions): StatusCause[] {
  const errs: StatusCause[] = [];
  if (old['deletionTimestamp'] !== undefined && old['deletionTimestamp'] !== null) {
    const before = new Set(stringElements(old['finalizers']));
    const extra = [...new Set(stringElements(meta['finalizers']).filter((f) => !before.has(f)))].sort();
    if (extra.length > 0) {
      errs.push(
        forbiddenField(
          'metadata.finalizers',
          `no new finalizers can be added if the object is being deleted, found new finalizers ${goStringSlice(extra).goSyntax}`,
        ),
      );
    }
  }
  if (opts.requireResourceVersion === true && stringField(meta, 'resourceVersion') === '') {
    errs.push(invalidField('metadata.resourceVersion', '', 'must be specified for an update'));
  }
  const generation = typeof meta['generation'] === 'number' ? meta['generation'] : 0;
  const oldGeneration = typeof old['generation'] === 'number' ? old['generation'] : 0;
  if (generation < oldGeneration) errs.push(invalidField('metadata.generation', generation, 'must not be decremented'));
  for (const key of ['name', 'namespace', 'uid'] as const) {
    if (stringField(meta, key) !== stringField(old, key)) errs.push(invalidField(`metadata.${key}`, stringField(meta, key), FIELD_IMMUTABLE));
  }
  for (const key of ['creationTimestamp', 'deletionTimestamp'] as const) {
    if (!sameValue(meta[key], old[key])) errs.push(invalidField(`metadata.${key}`, goTime(meta[key]), FIELD_IMMUTABLE));
  }
  const grace = meta['deletionGracePeriodSeconds'];
  if (!sameValue(grace, old['deletionGracePeriodSeconds'])) {
    errs.push(invalidField('metadata.deletionGracePeriodSeconds', typeof grace === 'number' ? grace : null, FIELD_IMMUTABLE));
  }
  return errs;
}

/**
 * Validates an object's metadata as kube-apiserver does. On create (generateName already turned
 * into a name): the type's name rule on name and generateName; if that finds nothing, the
 * path-segment check every type gets; then namespace, labels, annotations, owner references,
 * finalizers and managed fields. On update: the same common checks plus the immutability of name,
 * namespace, uid, creationTimestamp, deletionTimestamp and deletionGracePeriodSeconds against
 * `opts.old`. Returns one cause per problem, in kube's order; empty when valid.
 */
export function validateObjectMeta(metaInput: unknown, opts: ObjectMetaOptions): StatusCause[] {
  const meta = asObject(metaInput);
  const errs: StatusCause[] = [];
  if (opts.isCreate) {
    const byRule = nameErrors(meta, (n, p) => validateName(opts.nameRule.kind, n, p, opts.object));
    // kube runs the generic path-segment check only when the type's own validation passed.
    errs.push(...(byRule.length > 0 ? byRule : nameErrors(meta, validatePathSegment)));
  } else {
    const name = stringField(meta, 'name');
    if (name === '') errs.push(requiredField('metadata.name', 'name or generateName is required'));
    else for (const msg of validatePathSegment(name, false)) errs.push(invalidField('metadata.name', name, msg));
  }
  errs.push(...validateCommon(meta, opts));
  if (!opts.isCreate) errs.push(...updateErrors(meta, asObject(opts.old), opts));
  if (opts.nameRule.standardFinalizers) errs.push(...kubeFinalizerErrors(meta));
  return errs;
}

/** Which of core's metadata validators a kind's own update validation runs (beyond the registry's generic ones). */
export interface UpdateMetaPasses {
  /** core ValidateObjectMeta on the new object (the type's name rule, the common checks, standard finalizers). */
  objectMeta: boolean;
  /** core ValidateObjectMetaUpdate (immutable fields, labels and the like, standard finalizers). */
  objectMetaUpdate: boolean;
}

/**
 * The metadata causes kube reports more than once on update, beyond those validateObjectMeta
 * returns: the registry's generic update check repeats labels, annotations, owner references and
 * managed fields, and each core metadata validator the kind's update runs repeats its own checks
 * (kube keeps the duplicates in `details.causes`). Only the multiplicity matters to clients that read
 * causes as a set; the message deduplicates them.
 */
export function repeatedUpdateCauses(metaInput: unknown, opts: ObjectMetaOptions, passes: UpdateMetaPasses): StatusCause[] {
  const meta = asObject(metaInput);
  const shared = (): StatusCause[] => [
    ...validateLabels(meta['labels']),
    ...validateAnnotations(meta['annotations']),
    ...validateOwnerReferences(meta['ownerReferences']),
    ...validateManagedFields(meta['managedFields']),
  ];
  const errs = shared();
  let standardFinalizerPasses = opts.nameRule.standardFinalizers ? -1 : 0;
  if (passes.objectMetaUpdate) {
    errs.push(...updateErrors(meta, asObject(opts.old), { ...opts, requireResourceVersion: false }), ...shared());
    standardFinalizerPasses += 1;
  }
  if (passes.objectMeta) {
    errs.push(...nameErrors(meta, (n, p) => validateName(opts.nameRule.kind, n, p, opts.object)), ...validateCommon(meta, opts));
    standardFinalizerPasses += 1;
  }
  for (let i = 0; i < standardFinalizerPasses; i++) errs.push(...kubeFinalizerErrors(meta));
  return errs;
}
