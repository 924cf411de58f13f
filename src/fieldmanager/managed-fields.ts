import { FieldSet } from './field-set.js';
import { decodeFieldsV1, setToFieldsV1, type FieldsV1 } from './fields-v1.js';
import { compareStrings } from './path-element.js';
import { isObject, stringField } from '../api/values.js';

/** One manager's fields: the set, the version it speaks, whether it is an Apply entry, and when it last changed. */
export interface VersionedSet {
  set: FieldSet;
  apiVersion: string;
  applied: boolean;
  /** RFC 3339 time of the entry, if it has one. */
  time: string | undefined;
}

/**
 * Managed fields by manager identifier (the JSON of manager, operation, apiVersion for Update
 * entries, and subresource, as kube's BuildManagerIdentifier writes it). Map order is irrelevant:
 * encoding sorts.
 */
export type Managed = Map<string, VersionedSet>;

/** The parts of an entry that name its owner. */
export interface ManagerInfo {
  manager: string;
  operation: string;
  apiVersion: string;
  subresource: string;
}

/**
 * Identifiers made and read so far, both ways: a server sees few managers, and every write with
 * managedFields names each of its object's entries. Bounded: cleared when it holds too many.
 */
const identifiers = new Map<string, string>();
const parsedIdentifiers = new Map<string, Readonly<ManagerInfo>>();
const MAX_REMEMBERED_IDENTIFIERS = 4096;

/** kube's manager identifier: JSON of the non-empty parts, apiVersion left out for Apply. */
export function managerIdentifier(info: ManagerInfo): string {
  // Lengths first: no two different infos share a key, whatever characters their parts hold.
  const { manager, operation, apiVersion, subresource } = info;
  const key = `${manager.length}:${manager}${operation.length}:${operation}${apiVersion.length}:${apiVersion}${subresource}`;
  let id = identifiers.get(key);
  if (id === undefined) {
    const out: Record<string, string> = {};
    if (info.manager !== '') out.manager = info.manager;
    if (info.operation !== '') out.operation = info.operation;
    if (info.operation !== 'Apply' && info.apiVersion !== '') out.apiVersion = info.apiVersion;
    if (info.subresource !== '') out.subresource = info.subresource;
    id = JSON.stringify(out);
    if (identifiers.size >= MAX_REMEMBERED_IDENTIFIERS) identifiers.clear();
    identifiers.set(key, id);
  }
  return id;
}

/** The parts an identifier names (shared and frozen: callers only read them). */
function parseIdentifier(id: string): Readonly<ManagerInfo> {
  let info = parsedIdentifiers.get(id);
  if (info === undefined) {
    const parsed = JSON.parse(id) as Record<string, unknown>;
    info = Object.freeze({
      manager: stringField(parsed, 'manager'),
      operation: stringField(parsed, 'operation'),
      apiVersion: stringField(parsed, 'apiVersion'),
      subresource: stringField(parsed, 'subresource'),
    });
    if (parsedIdentifiers.size >= MAX_REMEMBERED_IDENTIFIERS) parsedIdentifiers.clear();
    parsedIdentifiers.set(id, info);
  }
  return info;
}

/**
 * The fieldsV1 a decoded set was read from, when it is exactly what `setToFieldsV1` writes for
 * that set: encoding an entry whose set no write changed then hands it back instead of writing it
 * again (a status write leaves the creator's large entry as it was). Exact because a set is never
 * changed in place once built (FieldSet's operations return new sets): a changed entry holds
 * another set, which is not here.
 */
const canonicalFields = new WeakMap<FieldSet, FieldsV1>();

/** Why stored or sent managedFields could not be read (kube's DecodeManagedFields errors). */
export class ManagedFieldsError extends Error {}

/**
 * Reads `metadata.managedFields` as kube's DecodeManagedFields does: operation Apply or Update,
 * a non-empty apiVersion, fieldsType FieldsV1 and decodable fieldsV1 (absent means empty); a later
 * entry with the same identifier replaces an earlier one. Throws ManagedFieldsError otherwise.
 */
export function decodeManagedFields(entries: unknown): Managed {
  const managed: Managed = new Map();
  if (entries === undefined || entries === null) return managed;
  if (!Array.isArray(entries)) throw new ManagedFieldsError('managedFields must be a list');
  entries.forEach((raw, i) => {
    const e = isObject(raw) ? raw : {};
    const operation = stringField(e, 'operation');
    if (operation !== 'Apply' && operation !== 'Update') throw new ManagedFieldsError('operation must be `Apply` or `Update`');
    if (stringField(e, 'apiVersion') === '') throw new ManagedFieldsError('apiVersion must not be empty');
    const fieldsType = stringField(e, 'fieldsType');
    if (fieldsType === '') throw new ManagedFieldsError(`missing fieldsType in managed fields entry ${i}`);
    if (fieldsType !== 'FieldsV1') throw new ManagedFieldsError(`invalid fieldsType ${JSON.stringify(fieldsType)} in managed fields entry ${i}`);
    const id = managerIdentifier({
      manager: stringField(e, 'manager'),
      operation,
      apiVersion: stringField(e, 'apiVersion'),
      subresource: stringField(e, 'subresource'),
    });
    let set: FieldSet;
    try {
      if (e.fieldsV1 === undefined || e.fieldsV1 === null) set = new FieldSet();
      else {
        const decoded = decodeFieldsV1(e.fieldsV1);
        set = decoded.set;
        if (decoded.canonical) canonicalFields.set(set, e.fieldsV1 as FieldsV1);
      }
    } catch (err) {
      throw new ManagedFieldsError(`error decoding versioned set: ${err instanceof Error ? err.message : String(err)}`);
    }
    const time = stringField(e, 'time');
    managed.set(id, { set, apiVersion: stringField(e, 'apiVersion'), applied: operation === 'Apply', time: time === '' ? undefined : time });
  });
  return managed;
}

function seconds(time: string | undefined): number {
  if (time === undefined) return 0;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

/** The time order kube sorts and caps entries by: whole seconds, no time as zero. */
export function timeSeconds(time: string | undefined): number {
  return seconds(time);
}

/**
 * Writes managed fields as kube's encodeManagedFields does: one entry per manager, fields in
 * ManagedFieldsEntry's JSON order, sorted by operation, time (seconds), manager, apiVersion and
 * subresource; undefined when there is none (the field is then left out of the object).
 */
export function encodeManagedFields(managed: Managed): Record<string, unknown>[] | undefined {
  if (managed.size === 0) return undefined;
  const entries = [...managed].map(([id, vs]) => {
    const info = parseIdentifier(id);
    const e: Record<string, unknown> = {};
    if (info.manager !== '') e.manager = info.manager;
    e.operation = vs.applied ? 'Apply' : info.operation;
    if (vs.apiVersion !== '') e.apiVersion = vs.apiVersion;
    if (vs.time !== undefined) e.time = vs.time;
    e.fieldsType = 'FieldsV1';
    e.fieldsV1 = canonicalFields.get(vs.set) ?? setToFieldsV1(vs.set);
    if (info.subresource !== '') e.subresource = info.subresource;
    return { e, info, vs };
  });
  entries.sort((p, q) => {
    const po = String(p.e.operation);
    const qo = String(q.e.operation);
    if (po !== qo) return compareStrings(po, qo);
    const ps = seconds(p.vs.time);
    const qs = seconds(q.vs.time);
    if (ps !== qs) return ps < qs ? -1 : 1;
    if (p.info.manager !== q.info.manager) return compareStrings(p.info.manager, q.info.manager);
    if (p.vs.apiVersion !== q.vs.apiVersion) return compareStrings(p.vs.apiVersion, q.vs.apiVersion);
    return compareStrings(p.info.subresource, q.info.subresource);
  });
  return entries.map((x) => x.e);
}
