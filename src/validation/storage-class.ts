import type { StatusCause } from '../api/errors.js';
import { duplicateField, goJson, invalidField, notSupportedField, requiredField, tooLongField } from './field-errors.js';
import { isLabelKey } from './string-formats.js';
import type { Obj } from '../api/object-util.js';
import { asString } from '../api/values.js';

/**
 * kube-apiserver 1.36's StorageClass validation beyond metadata (checked against
 * test/golden/validation/): a qualified provisioner name (checked in lower case), at most 512
 * parameters and 256 KiB of them, no empty parameter key, the reclaim policy and binding mode enums,
 * and on update none of parameters, provisioner, reclaim policy or binding mode may change.
 * `allowedTopologies` terms are checked as kube checks them (label keys, values required and unique, one
 * expression per key, no two equal terms).
 */

const MAX_PARAMETERS = 512;
const MAX_PARAMETER_BYTES = 256 * 1024;

function stringMap(v: unknown): Record<string, string> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, string>) : {};
}

/** A map as Go's json.Marshal writes it: keys sorted. */
function sortedMap(map: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.keys(map)
      .sort()
      .map((k) => [k, map[k] ?? '']),
  );
}

function immutable(field: string, next: unknown, old: unknown, value: Parameters<typeof invalidField>[1]): StatusCause[] {
  return JSON.stringify(next) === JSON.stringify(old) ? [] : [invalidField(field, value, 'field is immutable')];
}

export function validateStorageClass(sc: Obj, old?: Obj): StatusCause[] {
  const causes: StatusCause[] = [];
  const parameters = stringMap(sc.parameters);
  if (old !== undefined) {
    const oldParameters = stringMap(old.parameters);
    causes.push(...immutable('parameters', sortedMap(parameters), sortedMap(oldParameters), goJson(sortedMap(parameters))));
    causes.push(...immutable('provisioner', asString(sc.provisioner), asString(old.provisioner), asString(sc.provisioner)));
    causes.push(...immutable('reclaimPolicy', sc.reclaimPolicy ?? null, old.reclaimPolicy ?? null, goJson(sc.reclaimPolicy ?? null)));
    causes.push(...immutable('volumeBindingMode', sc.volumeBindingMode ?? null, old.volumeBindingMode ?? null, goJson(sc.volumeBindingMode ?? null)));
    return causes;
  }
  const provisioner = asString(sc.provisioner);
  if (provisioner === '') causes.push(requiredField('provisioner'));
  else for (const msg of isLabelKey(provisioner.toLowerCase())) causes.push(invalidField('provisioner', provisioner.toLowerCase(), msg));
  const keys = Object.keys(parameters);
  if (keys.length > MAX_PARAMETERS) {
    causes.push(tooLongField('parameters', MAX_PARAMETERS));
  } else {
    let size = 0;
    for (const key of keys) {
      if (key === '') causes.push(invalidField('parameters', key, 'field can not be empty.'));
      size += Buffer.byteLength(key) + Buffer.byteLength(parameters[key] ?? '');
    }
    if (size > MAX_PARAMETER_BYTES) causes.push(tooLongField('parameters', MAX_PARAMETER_BYTES));
  }
  const reclaimPolicy = asString(sc.reclaimPolicy);
  if (reclaimPolicy !== '' && reclaimPolicy !== 'Delete' && reclaimPolicy !== 'Retain') {
    causes.push(notSupportedField('reclaimPolicy', reclaimPolicy, ['Delete', 'Retain']));
  }
  if (sc.volumeBindingMode === undefined || sc.volumeBindingMode === null) causes.push(requiredField('volumeBindingMode'));
  else if (sc.volumeBindingMode !== 'Immediate' && sc.volumeBindingMode !== 'WaitForFirstConsumer') {
    causes.push(notSupportedField('volumeBindingMode', asString(sc.volumeBindingMode), ['Immediate', 'WaitForFirstConsumer']));
  }
  return [...causes, ...allowedTopologyCauses(sc.allowedTopologies)];
}

/** A term as a comparable key -> sorted values map (kube's raw topology form). */
function rawTerm(term: unknown): Map<string, string> {
  const raw = new Map<string, string>();
  const expressions = (term as { matchLabelExpressions?: unknown } | null)?.matchLabelExpressions;
  for (const e of Array.isArray(expressions) ? expressions : []) {
    const req = (e ?? {}) as { key?: unknown; values?: unknown };
    const values = Array.isArray(req.values) ? [...new Set(req.values.map(asString))].sort() : [];
    raw.set(asString(req.key), JSON.stringify(values));
  }
  return raw;
}

function sameRaw(a: Map<string, string>, b: Map<string, string>): boolean {
  return a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);
}

/**
 * validateAllowedTopologies. Faithful to kube, which compares each term with a list that starts with
 * one empty term per entry: a term without expressions is reported as a duplicate that many times.
 */
function allowedTopologyCauses(topologies: unknown): StatusCause[] {
  if (!Array.isArray(topologies) || topologies.length === 0) return [];
  const causes: StatusCause[] = [];
  const seen: Array<Map<string, string>> = topologies.map(() => new Map<string, string>());
  topologies.forEach((term, i) => {
    const at = `allowedTopologies[${i}].matchLabelExpressions`;
    const keys = new Set<string>();
    const expressions = (term as { matchLabelExpressions?: unknown } | null)?.matchLabelExpressions;
    (Array.isArray(expressions) ? expressions : []).forEach((e, j) => {
      const req = (e ?? {}) as { key?: unknown; values?: unknown };
      const values = Array.isArray(req.values) ? req.values.map(asString) : [];
      if (values.length === 0) causes.push(requiredField(`${at}[${j}].values`));
      const unique = new Set<string>();
      values.forEach((v, k) => {
        if (unique.has(v)) causes.push(duplicateField(`${at}[${j}].values[${k}]`, v));
        unique.add(v);
      });
      const key = asString(req.key);
      causes.push(...isLabelKey(key).map((msg) => invalidField(`${at}[${j}].key`, key, msg)));
      if (keys.has(key)) causes.push(duplicateField(`${at}[${j}].key`, key));
      keys.add(key);
    });
    const raw = rawTerm(term);
    for (const other of seen) if (sameRaw(raw, other)) causes.push(duplicateField(at, ''));
    seen.push(raw);
  });
  return causes;
}
