import { type ApiError, badRequest, invalid, type StatusCause } from './errors.js';

/**
 * Query parameters -> request options, the way kube-apiserver's parameter codec converts them and its
 * option validation checks them. Every handler reads its options here, so a malformed parameter gets the
 * same answer on every path:
 * - conversion errors (an integer that does not parse) answer 400 with Go's strconv text;
 * - booleans follow kube's conversion: absent is false, `0`, `f` and `false` (any case) are false, and
 *   any other value, the empty one included, is true (`watch=maybe` is a watch, as on kube-apiserver);
 * - option validation answers 422 `Invalid` on `ListOptions.meta.k8s.io` (or Create/Update/Patch/
 *   DeleteOptions) with one cause per problem, in kube's words and order.
 * A repeated parameter counts by its first value, as kube's conversion reads it.
 */

/** kube's conversion of a query value to a boolean (Convert_Slice_string_To_bool). */
export function queryBool(query: URLSearchParams, name: string): boolean {
  return queryOptionalBool(query, name) ?? false;
}

/** Like queryBool, but undefined when the parameter is absent (a `*bool` option). */
export function queryOptionalBool(query: URLSearchParams, name: string): boolean | undefined {
  const v = query.get(name);
  if (v === null) return undefined;
  // kube's query conversion: only "0" and "false" (any case) are false; "f", "" and the rest are true.
  return !(v === '0' || v.toLowerCase() === 'false');
}

/** Go's strconv.ParseInt(s, 10, 64) as a JavaScript number; throws its error text. */
function parseGoInt64(s: string): number {
  if (!/^[+-]?\d+$/.test(s)) throw new Error(`strconv.ParseInt: parsing ${JSON.stringify(s)}: invalid syntax`);
  const n = BigInt(s);
  if (n > 9223372036854775807n || n < -9223372036854775808n) throw new Error(`strconv.ParseInt: parsing ${JSON.stringify(s)}: value out of range`);
  return Number(n);
}

/** An integer parameter (`limit`, `timeoutSeconds`, `gracePeriodSeconds`); 400 with Go's text when it does not parse. */
export function queryInt64(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  if (v === null) return undefined;
  try {
    return parseGoInt64(v);
  } catch (err) {
    throw badRequest(err instanceof Error ? err.message : String(err));
  }
}

/**
 * A `resourceVersion` parameter as kube's storage parses it (a decimal uint64): the canonical decimal
 * text (leading zeros dropped), undefined when absent or empty. `context` prefixes the 400's message
 * as kube words it for lists ("invalid resource version: ").
 */
export function queryResourceVersion(query: URLSearchParams, context = ''): string | undefined {
  const v = query.get('resourceVersion');
  if (v === null || v === '') return undefined;
  let error: string | undefined;
  if (!/^\d+$/.test(v)) error = 'invalid syntax';
  else if (BigInt(v) > 18446744073709551615n) error = 'value out of range';
  if (error !== undefined) {
    throw badRequest(`${context}resourceVersion: Invalid value: ${JSON.stringify(v)}: strconv.ParseUint: parsing ${JSON.stringify(v)}: ${error}`);
  }
  return BigInt(v).toString();
}

/** The options of a list or watch request. */
export interface ListOptions {
  labelSelector: string;
  fieldSelector: string;
  watch: boolean;
  allowWatchBookmarks: boolean;
  resourceVersion: string | undefined;
  resourceVersionMatch: string;
  timeoutSeconds: number | undefined;
  /** 0 when absent or not positive: no chunking. */
  limit: number;
  continue: string;
  sendInitialEvents: boolean | undefined;
}

function optionsInvalid(kind: string, causes: StatusCause[]): ApiError {
  return invalid(kind, 'meta.k8s.io', '', causes);
}

function forbidden(field: string, detail: string): StatusCause {
  return { reason: 'FieldValueForbidden', message: `Forbidden: ${detail}`, field };
}

function notSupported(field: string, value: string, supported: string[]): StatusCause {
  return {
    reason: 'FieldValueNotSupported',
    message: `Unsupported value: ${value}: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
    field,
  };
}

/**
 * The list options of a request (`watch` also true for the deprecated `/watch/` paths), converted and
 * validated as kube-apiserver does: 400 for conversion errors, 422 on ListOptions for invalid
 * combinations.
 */
export function listOptionsFrom(query: URLSearchParams, watchPath: boolean, watchListEnabled: boolean): ListOptions {
  const opts: ListOptions = {
    labelSelector: query.get('labelSelector') ?? '',
    fieldSelector: query.get('fieldSelector') ?? '',
    watch: watchPath || queryBool(query, 'watch'),
    allowWatchBookmarks: queryBool(query, 'allowWatchBookmarks'),
    resourceVersion: query.get('resourceVersion') ?? undefined,
    resourceVersionMatch: query.get('resourceVersionMatch') ?? '',
    timeoutSeconds: queryInt64(query, 'timeoutSeconds'),
    limit: Math.max(0, queryInt64(query, 'limit') ?? 0),
    continue: query.get('continue') ?? '',
    sendInitialEvents: queryOptionalBool(query, 'sendInitialEvents'),
  };
  if (opts.resourceVersion === '') opts.resourceVersion = undefined;
  const causes = opts.watch ? watchCauses(opts, watchListEnabled) : listCauses(opts);
  if (causes.length > 0) throw optionsInvalid('ListOptions', causes);
  return opts;
}

function listCauses(opts: ListOptions): StatusCause[] {
  const causes: StatusCause[] = [];
  const match = opts.resourceVersionMatch;
  if (match !== '') {
    if (opts.resourceVersion === undefined)
      causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    if (opts.continue !== '') causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    if (match !== 'Exact' && match !== 'NotOlderThan') causes.push(notSupported('resourceVersionMatch', JSON.stringify(match), ['Exact', 'NotOlderThan', '']));
    if (match === 'Exact' && opts.resourceVersion === '0')
      causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  }
  if (opts.sendInitialEvents !== undefined) causes.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  return causes;
}

function watchCauses(opts: ListOptions, watchListEnabled: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  const match = opts.resourceVersionMatch;
  if (opts.sendInitialEvents !== undefined) {
    if (match !== 'NotOlderThan') causes.push(forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
    if (!watchListEnabled) causes.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled'));
  }
  if (match !== '') {
    if (opts.sendInitialEvents === undefined)
      causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
    if (match !== 'NotOlderThan') causes.push(notSupported('resourceVersionMatch', JSON.stringify(match), ['NotOlderThan']));
    if (opts.continue !== '') causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
  }
  return causes;
}

/** `fieldValidation` levels; the empty value means kube's default, Warn. */
export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

/** The options of a create, update or patch request. */
export interface WriteOptions {
  dryRun: boolean;
  fieldManager: string;
  fieldValidation: FieldValidation;
  /** Patch requests: `force` (only meaningful for apply). */
  force: boolean | undefined;
}

const FIELD_MANAGER_MAX_LENGTH = 128;

/** `dryRun` values: only `All` is defined; 422 cause otherwise. */
export function dryRunCauses(values: string[]): StatusCause[] {
  if (values.every((v) => v === 'All')) return [];
  return [notSupported('dryRun', JSON.stringify(values), ['All'])];
}

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
function isPrintable(ch: string): boolean {
  return /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(ch);
}

function fieldManagerCauses(manager: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (Buffer.byteLength(manager) > FIELD_MANAGER_MAX_LENGTH) {
    causes.push({ reason: 'FieldValueTooLong', message: `Too long: may not be more than ${FIELD_MANAGER_MAX_LENGTH} bytes`, field: 'fieldManager' });
  }
  let byte = 0;
  for (const ch of manager) {
    if (!isPrintable(ch)) {
      const code = (ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(manager)}: invalid character U+${code} (at position ${byte})`,
        field: 'fieldManager',
      });
    }
    byte += Buffer.byteLength(ch);
  }
  return causes;
}

/**
 * The options of a create (`CreateOptions`), update (`UpdateOptions`) or patch (`PatchOptions`),
 * validated as kube-apiserver validates them: 422 on the options kind, one cause per problem.
 */
export function writeOptionsFrom(query: URLSearchParams, kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions', isApply = false): WriteOptions {
  const dryRun = query.getAll('dryRun');
  const fieldManager = query.get('fieldManager') ?? '';
  const fieldValidation = query.get('fieldValidation') ?? '';
  const force = kind === 'PatchOptions' ? queryOptionalBool(query, 'force') : undefined;
  const causes: StatusCause[] = [];
  if (kind === 'PatchOptions') {
    if (isApply && fieldManager === '')
      causes.push({ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' });
    if (!isApply && force !== undefined) causes.push(forbidden('force', 'may not be specified for non-apply patch'));
  }
  causes.push(...fieldManagerCauses(fieldManager));
  causes.push(...dryRunCauses(dryRun));
  if (!['', 'Ignore', 'Warn', 'Strict'].includes(fieldValidation)) {
    causes.push(notSupported('fieldValidation', JSON.stringify(fieldValidation), ['', 'Ignore', 'Strict', 'Warn']));
  }
  if (causes.length > 0) throw optionsInvalid(kind, causes);
  return {
    dryRun: dryRun.length > 0,
    fieldManager,
    fieldValidation: fieldValidation === '' ? 'Warn' : (fieldValidation as FieldValidation),
    force,
  };
}
