import type { StatusCause } from '../api/errors.js';
import { JsonSyntaxError, readJson } from '../codec/json-text.js';
import { forbiddenField, invalidField, requiredField, tooLongField } from './field-errors.js';
import type { Obj } from '../api/object-util.js';

/**
 * kube-apiserver 1.36's validation of ConfigMaps and Secrets beyond their metadata (checked against
 * test/golden/validation/, kube's own registry strategies run by tools/goldens): key syntax, the
 * 1 MiB data limit, the keys each Secret type requires, and immutability on update.
 */

/** kube's MaxSecretSize, which bounds ConfigMap data too. */
const MAX_DATA_BYTES = 1024 * 1024;
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const CONFIG_KEY_MESSAGE =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
const IMMUTABLE = 'field is immutable when `immutable` is set';

/** validation.IsConfigMapKey: the problems with a data key, in kube's order. */
export function configKeyProblems(key: string): string[] {
  const problems: string[] = [];
  if (key.length > 253) problems.push('must be no more than 253 characters');
  if (!CONFIG_KEY.test(key)) problems.push(CONFIG_KEY_MESSAGE);
  if (key === '.') problems.push("must not be '.'");
  else if (key === '..') problems.push("must not be '..'");
  else if (key.startsWith('..')) problems.push("must not start with '..'");
  return problems;
}

function mapAt(obj: Obj, key: string): Obj {
  const v = obj[key];
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {};
}

/** Bytes of a stored base64 value (Secret data, ConfigMap binaryData). */
function decodedLength(v: unknown): number {
  return typeof v === 'string' ? Buffer.from(v, 'base64').length : 0;
}

function keyCauses(bag: string, values: Obj): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const key of Object.keys(values)) {
    for (const problem of configKeyProblems(key)) causes.push(invalidField(`${bag}[${key}]`, key, problem));
  }
  return causes;
}

/** Go's deep equality of two string maps as stored (absent and empty are the same after Go's shape). */
function sameMap(a: Obj, b: Obj): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => b[k] === a[k]);
}

/** `immutable` may not be unset, nor the listed bags changed, once the stored object is immutable. */
function immutabilityCauses(next: Obj, old: Obj | undefined, bags: readonly string[]): StatusCause[] {
  if (old?.immutable !== true) return [];
  const causes: StatusCause[] = [];
  if (next.immutable !== true) causes.push(forbiddenField('immutable', IMMUTABLE));
  for (const bag of bags) if (!sameMap(mapAt(next, bag), mapAt(old, bag))) causes.push(forbiddenField(bag, IMMUTABLE));
  return causes;
}

/** ValidateConfigMap (and, with `old`, ValidateConfigMapUpdate) without the metadata checks. */
export function validateConfigMap(cm: Obj, old?: Obj): StatusCause[] {
  const data = mapAt(cm, 'data');
  const binaryData = mapAt(cm, 'binaryData');
  const causes = immutabilityCauses(cm, old, ['data', 'binaryData']);
  let size = 0;
  for (const [key, value] of Object.entries(data)) {
    causes.push(...keyCauses('data', { [key]: value }));
    if (key in binaryData) causes.push(invalidField(`data[${key}]`, key, 'duplicate of key present in binaryData'));
    size += typeof value === 'string' ? Buffer.byteLength(value) : 0;
  }
  causes.push(...keyCauses('binaryData', binaryData));
  for (const value of Object.values(binaryData)) size += decodedLength(value);
  // kube reports the whole object, under the path an empty field.Path prints as.
  if (size > MAX_DATA_BYTES) causes.push(tooLongField('[]', MAX_DATA_BYTES));
  return causes;
}

/** Go's json.Unmarshal into map[string]interface{}: its error text, or undefined when it succeeds. */
function jsonObjectProblem(value: unknown): string | undefined {
  const text = typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : '';
  let parsed: unknown;
  try {
    parsed = readJson(text, { maxDepth: 10000 }).value;
  } catch (err) {
    if (err instanceof JsonSyntaxError) return err.message;
    throw err;
  }
  if (parsed === null || (typeof parsed === 'object' && !Array.isArray(parsed))) return undefined;
  const kind = Array.isArray(parsed) ? 'array' : typeof parsed === 'string' ? 'string' : typeof parsed === 'boolean' ? 'bool' : 'number';
  return `json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`;
}

const REDACTED = '<secret contents redacted>';

/** ValidateSecret (and, with `old`, ValidateSecretUpdate) without the metadata checks. */
export function validateSecret(secret: Obj, old?: Obj): StatusCause[] {
  const causes: StatusCause[] = [];
  const type = typeof secret.type === 'string' ? secret.type : '';
  if (old !== undefined) {
    const oldType = typeof old.type === 'string' ? old.type : '';
    if (type !== oldType) causes.push(invalidField('type', type, 'field is immutable'));
  }
  causes.push(...immutabilityCauses(secret, old, ['data']));
  const data = mapAt(secret, 'data');
  causes.push(...keyCauses('data', data));
  const size = Object.values(data).reduce((n: number, v) => n + decodedLength(v), 0);
  if (size > MAX_DATA_BYTES) causes.push(tooLongField('data', MAX_DATA_BYTES));
  switch (type) {
    case 'kubernetes.io/service-account-token': {
      const annotations = mapAt(mapAt(secret, 'metadata'), 'annotations');
      const name = annotations['kubernetes.io/service-account.name'];
      if (typeof name !== 'string' || name === '') causes.push(requiredField('metadata.annotations[kubernetes.io/service-account.name]'));
      break;
    }
    case 'kubernetes.io/dockercfg':
    case 'kubernetes.io/dockerconfigjson': {
      const key = type === 'kubernetes.io/dockercfg' ? '.dockercfg' : '.dockerconfigjson';
      if (!(key in data)) {
        causes.push(requiredField(`data[${key}]`));
        break;
      }
      const problem = jsonObjectProblem(data[key]);
      if (problem !== undefined) causes.push(invalidField(`data[${key}]`, REDACTED, problem));
      break;
    }
    case 'kubernetes.io/basic-auth':
      if (!('username' in data) && !('password' in data)) causes.push(requiredField('data[username]'), requiredField('data[password]'));
      break;
    case 'kubernetes.io/ssh-auth':
      if (decodedLength(data['ssh-privatekey']) === 0) causes.push(requiredField('data[ssh-privatekey]'));
      break;
    case 'kubernetes.io/tls':
      if (!('tls.crt' in data)) causes.push(requiredField('data[tls.crt]'));
      if (!('tls.key' in data)) causes.push(requiredField('data[tls.key]'));
      break;
    default:
  }
  return causes;
}
