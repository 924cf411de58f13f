import type { StatusCause } from '../api/errors.js';
import { isObject, type Obj } from '../api/object-util.js';
import { duplicateField, forbiddenField, goJson, invalidField, notSupportedField, requiredField } from '../validation/field-errors.js';
import { isDNS1035Label, isDNS1123Subdomain } from '../validation/string-formats.js';
import { asString } from '../api/values.js';

/**
 * kube's checks of a CRD's per-version settings and conversion, beside its schemas: the
 * `deprecationWarning`, the scale subresource's JSON paths, the printer columns, and the
 * conversion strategy with its webhook client config and ConversionReview versions. Field paths are
 * kube's internal ones (`spec.conversion.webhookClientConfig.url`), as its messages show them.
 */

const COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];
const REVIEW_VERSIONS = ['v1', 'v1beta1'];

/** kube's validateDeprecationWarning for VERSION at PATH. */
export function validateDeprecationWarning(version: Obj, path: string): StatusCause[] {
  const warning = version.deprecationWarning;
  if (typeof warning !== 'string') return [];
  const at = `${path}.deprecationWarning`;
  // kube prints the (pointer to the) string as JSON.
  const value = goJson(warning);
  if (version.deprecated !== true) return [invalidField(at, value, 'can only be set for deprecated versions')];
  const causes: StatusCause[] = [];
  if (Buffer.byteLength(warning) > 256) causes.push(invalidField(at, value, 'must be <= 256 characters long'));
  if (warning.length === 0) causes.push(invalidField(at, value, 'must not be an empty string'));
  let index = 0;
  for (const ch of warning) {
    const cp = ch.codePointAt(0) ?? 0;
    // Go checks printability first, so a control character is reported as non-printable.
    if (!/[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u.test(ch)) {
      causes.push(invalidField(at, value, `must only contain printable UTF-8 characters; non-printable character found at index ${index}`));
      break;
    }
    index += Buffer.byteLength(String.fromCodePoint(cp));
  }
  return causes;
}

/** kube's validateSimpleJSONPath. */
function simpleJsonPath(s: string, path: string): StatusCause[] {
  if (s === '') return [invalidField(path, s, 'must not be empty')];
  if (!s.startsWith('.')) return [invalidField(path, s, 'must be a simple json path starting with .')];
  return [];
}

/** kube's ValidateCustomResourceDefinitionSubresources for SUBRESOURCES at PATH (`spec.subresources`). */
export function validateSubresources(subresources: unknown, path: string): StatusCause[] {
  if (!isObject(subresources) || !isObject(subresources.scale)) return [];
  const scale = subresources.scale;
  const causes: StatusCause[] = [];
  const under = (key: string, prefixes: string[], detail: string): void => {
    const value = asString(scale[key]);
    const at = `${path}.scale.${key}`;
    const errs = simpleJsonPath(value, at);
    if (errs.length > 0) causes.push(...errs);
    else if (!prefixes.some((p) => value.startsWith(p))) causes.push(invalidField(at, value, detail));
  };
  if (asString(scale.specReplicasPath) === '') causes.push(requiredField(`${path}.scale.specReplicasPath`));
  else under('specReplicasPath', ['.spec.'], 'should be a json path under .spec');
  if (asString(scale.statusReplicasPath) === '') causes.push(requiredField(`${path}.scale.statusReplicasPath`));
  else under('statusReplicasPath', ['.status.'], 'should be a json path under .status');
  if (asString(scale.labelSelectorPath) !== '') under('labelSelectorPath', ['.spec.', '.status.'], 'should be a json path under either .spec or .status');
  return causes;
}

/** kube's ValidateCustomResourceColumnDefinition for each column of COLUMNS at PATH (`spec.additionalPrinterColumns`). */
export function validatePrinterColumns(columns: unknown, path: string): StatusCause[] {
  if (!Array.isArray(columns)) return [];
  const causes: StatusCause[] = [];
  columns.forEach((raw, i) => {
    const col = isObject(raw) ? raw : {};
    const at = `${path}[${i}]`;
    if (asString(col.name) === '') causes.push(requiredField(`${at}.name`));
    const type = asString(col.type);
    if (type === '') causes.push(requiredField(`${at}.type`, `must be one of ${COLUMN_TYPES.join(',')}`));
    else if (!COLUMN_TYPES.includes(type)) causes.push(invalidField(`${at}.type`, type, `must be one of ${COLUMN_TYPES.join(',')}`));
    const format = asString(col.format);
    if (format !== '' && !COLUMN_FORMATS.includes(format)) causes.push(invalidField(`${at}.format`, format, `must be one of ${COLUMN_FORMATS.join(',')}`));
    const jsonPath = asString(col.jsonPath);
    if (jsonPath === '') causes.push(requiredField(`${at}.JSONPath`));
    else causes.push(...simpleJsonPath(jsonPath, `${at}.JSONPath`));
  });
  return causes;
}

const URL_FORM = '; desired format: https://host[/path]';

/** kube's ValidateWebhookURL (https required), for the URL shapes Go's url.Parse reads. */
function validateWebhookUrl(raw: string, path: string): StatusCause[] {
  const m = /^(?:([A-Za-z][A-Za-z0-9+.-]*):)?(?:\/\/(?:([^@/?#]*)@)?([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/.exec(raw);
  const scheme = (m?.[1] ?? '').toLowerCase();
  const user = m?.[2];
  const host = m?.[3] ?? '';
  const query = m?.[5] ?? '';
  const fragment = m?.[6] ?? '';
  const causes: StatusCause[] = [];
  if (scheme !== 'https') causes.push(invalidField(path, scheme, `'https' is the only allowed URL scheme${URL_FORM}`));
  if (host === '') causes.push(invalidField(path, host, `host must be specified${URL_FORM}`));
  if (user !== undefined) causes.push(invalidField(path, user, 'user information is not permitted in the URL'));
  if (fragment !== '') causes.push(invalidField(path, fragment, 'fragments are not permitted in the URL'));
  if (query !== '') causes.push(invalidField(path, query, 'query parameters are not permitted in the URL'));
  return causes;
}

/** kube's ValidateWebhookService (the v1 port default 443 applied). */
function validateWebhookService(service: Obj, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  // kube passes the service's name as the namespace and its namespace as the name, so each is
  // reported under the other's field.
  if (asString(service.namespace) === '') causes.push(requiredField(`${path}.name`));
  if (asString(service.name) === '') causes.push(requiredField(`${path}.namespace`));
  const port = typeof service.port === 'number' ? service.port : 443;
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    causes.push(invalidField(`${path}.port`, port, 'port is not valid: must be between 1 and 65535, inclusive'));
  if (typeof service.path !== 'string') return causes;
  const urlPath = service.path;
  if (urlPath === '/' || urlPath === '') return causes;
  if (urlPath === '//') return [...causes, invalidField(`${path}.path`, urlPath, 'segment[0] may not be empty')];
  if (!urlPath.startsWith('/')) causes.push(invalidField(`${path}.path`, urlPath, "must start with a '/'"));
  let rest = urlPath.slice(1);
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  rest.split('/').forEach((step, i) => {
    if (step === '') causes.push(invalidField(`${path}.path`, urlPath, `segment[${i}] may not be empty`));
    else for (const failure of isDNS1123Subdomain(step)) causes.push(invalidField(`${path}.path`, urlPath, `segment[${i}]: ${failure}`));
  });
  return causes;
}

/** kube's validateConversionReviewVersions (a recognised version required). */
function validateReviewVersions(versions: unknown, path: string): StatusCause[] {
  const list = Array.isArray(versions) ? versions.map(asString) : [];
  if (list.length === 0) return [requiredField(path)];
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  let accepted = false;
  list.forEach((v, i) => {
    if (seen.has(v)) {
      causes.push(invalidField(`${path}[${i}]`, v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const e of isDNS1035Label(v)) causes.push(invalidField(`${path}[${i}]`, v, e));
    if (REVIEW_VERSIONS.includes(v)) accepted = true;
  });
  if (!accepted) causes.push(invalidField(path, goJson(list), `must include at least one of ${REVIEW_VERSIONS.join(', ')}`));
  return causes;
}

/** kube's validateCustomResourceConversion for the v1 `spec.conversion` (CA bundles are not checked: the CRD is not established yet). */
export function validateConversion(conversion: unknown): StatusCause[] {
  if (!isObject(conversion)) return [];
  const path = 'spec.conversion';
  const strategy = asString(conversion.strategy);
  const causes: StatusCause[] = [];
  if (strategy === '') causes.push(requiredField(`${path}.strategy`));
  else if (strategy !== 'None' && strategy !== 'Webhook') causes.push(notSupportedField(`${path}.strategy`, strategy, ['None', 'Webhook']));
  const webhook = isObject(conversion.webhook) ? conversion.webhook : undefined;
  const clientConfig = webhook !== undefined && isObject(webhook.clientConfig) ? webhook.clientConfig : undefined;
  const reviewVersions = webhook?.conversionReviewVersions;
  if (strategy === 'Webhook') {
    if (clientConfig === undefined) causes.push(requiredField(`${path}.webhookClientConfig`, 'required when strategy is set to Webhook'));
    else {
      const url = clientConfig.url;
      const service = clientConfig.service;
      if ((typeof url === 'string') === isObject(service))
        causes.push(requiredField(`${path}.webhookClientConfig`, 'exactly one of url or service is required'));
      else if (typeof url === 'string') causes.push(...validateWebhookUrl(url, `${path}.webhookClientConfig.url`));
      else if (isObject(service)) causes.push(...validateWebhookService(service, `${path}.webhookClientConfig.service`));
    }
    causes.push(...validateReviewVersions(reviewVersions, `${path}.conversionReviewVersions`));
  } else {
    if (clientConfig !== undefined) causes.push(forbiddenField(`${path}.webhookClientConfig`, 'should not be set when strategy is not set to Webhook'));
    if (Array.isArray(reviewVersions) && reviewVersions.length > 0)
      causes.push(forbiddenField(`${path}.conversionReviewVersions`, 'should not be set when strategy is not set to Webhook'));
  }
  return causes;
}

/** kube's MaxSelectableFields. */
const MAX_SELECTABLE_FIELDS = 8;

/** kube's ValidFieldPath without array notation: the schema JSONPATH names, or Go's error text. */
function selectablePath(jsonPath: string, schema: Obj): { root: string; key: string; node: Obj | undefined } | { error: string } {
  const tokens = jsonPath.match(/[.[\]]|[^.[\]]+/g) ?? [];
  let node: Obj | undefined = schema;
  const names: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i] ?? '';
    if (tok === '[') return { error: 'array notation is not allowed' };
    if (tok !== '.') return { error: `expected [ or . but got: ${tok}` };
    const name = tokens[++i];
    if (name === undefined) return { error: 'unexpected end of JSON path' };
    const properties: unknown = node?.properties;
    if (isObject(properties)) {
      const sub = properties[name];
      if (!isObject(sub)) return { error: 'does not refer to a valid field' };
      node = sub;
    } else if (node !== undefined && (isObject(node.additionalProperties) || node.additionalProperties !== undefined)) {
      node = isObject(node.additionalProperties) ? node.additionalProperties : undefined;
    } else return { error: 'does not refer to a valid field' };
    names.push(name);
  }
  return { root: names[0] ?? '', key: names.join('.'), node };
}

/** kube's ValidateCustomResourceSelectableFields for FIELDS at PATH, against the version's SCHEMA. */
export function validateSelectableFields(fields: unknown, schema: unknown, path: string): StatusCause[] {
  if (!Array.isArray(fields) || fields.length === 0) return [];
  if (!isObject(schema)) {
    const topLevel = path === 'spec.selectableFields';
    return [
      invalidField(
        path,
        '',
        topLevel ? 'may only be set when validations.schema is included' : 'may only be set when `version.schema.openAPIV3Schema` is not included',
      ),
    ];
  }
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  fields.forEach((raw, i) => {
    const at = `${path}[${i}].jsonPath`;
    const jsonPath = isObject(raw) ? asString(raw.jsonPath) : '';
    if (jsonPath === '') {
      causes.push(requiredField(at));
      return;
    }
    const found = selectablePath(jsonPath, schema);
    if ('error' in found) {
      causes.push(invalidField(at, jsonPath, `is an invalid path: ${found.error}`));
      return;
    }
    if (found.root === 'metadata') causes.push(invalidField(at, jsonPath, 'must not point to fields in metadata'));
    const type = found.node === undefined ? '' : asString(found.node.type);
    if (!['string', 'boolean', 'integer'].includes(type))
      causes.push(
        invalidField(at, jsonPath, 'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.'),
      );
    if (seen.has(found.key)) causes.push(duplicateField(at, jsonPath));
    else seen.add(found.key);
  });
  if (seen.size > MAX_SELECTABLE_FIELDS)
    causes.push({ reason: 'FieldValueTooMany', field: path, message: `Too many: ${seen.size}: must have at most ${MAX_SELECTABLE_FIELDS} items` });
  return causes;
}
