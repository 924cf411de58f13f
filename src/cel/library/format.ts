/**
 * kube's format library: `format.named(name)` (an optional format) and `format.<name>()` for the
 * named formats (dns1123Label, dns1123Subdomain, dns1035Label, qualifiedName, their `Prefix`
 * variants, labelValue, uri, uuid, byte, date, datetime); `validate(string)` answers
 * `optional.none()` when the string is valid, otherwise the optional list of kube's messages.
 */
import { celList, type CelMap } from '@bufbuild/cel';
import { isDNS1035Label, isDNS1123Label, isDNS1123Subdomain, isLabelKey, isLabelValue, maskTrailingDash } from '../../validation/string-formats.js';
import { asOpaque, opaqueValue, optionalValue } from '../values.js';
import { defineFunction, defineMethod } from './registry.js';

const TYPE = 'kubernetes.NamedFormat';

function uriProblems(s: string): string[] {
  if (s === '') return [`parse "": empty url`];
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(s) && !s.startsWith('/')) return [`parse ${JSON.stringify(s)}: invalid URI for request`];
  return [];
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

const FORMATS: Record<string, (s: string) => string[]> = {
  dns1123Label: (s) => isDNS1123Label(s),
  dns1123Subdomain: (s) => isDNS1123Subdomain(s),
  dns1035Label: (s) => isDNS1035Label(s),
  qualifiedName: (s) => isLabelKey(s),
  dns1123LabelPrefix: (s) => isDNS1123Label(maskTrailingDash(s)),
  dns1123SubdomainPrefix: (s) => isDNS1123Subdomain(maskTrailingDash(s)),
  dns1035LabelPrefix: (s) => isDNS1035Label(maskTrailingDash(s)),
  labelValue: (s) => isLabelValue(s),
  uri: uriProblems,
  uuid: (s) => (/^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/.test(s) ? [] : ['does not match the UUID format']),
  byte: (s) => (/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s) ? [] : ['invalid base64']),
  date: (s) => (DATE.test(s) && !Number.isNaN(Date.parse(s)) ? [] : ['invalid date']),
  datetime: (s) => (DATETIME.test(s) ? [] : ['invalid datetime']),
};

/** kube's MaxRegexSize of each format, which the runtime cost of `validate` grows with. */
const MAX_REGEX_SIZE: Record<string, number> = {
  dns1123Label: 30,
  dns1123Subdomain: 60,
  dns1035Label: 30,
  qualifiedName: 60,
  dns1123LabelPrefix: 30,
  dns1123SubdomainPrefix: 60,
  dns1035LabelPrefix: 30,
  labelValue: 40,
  uri: 1103,
  uuid: '(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$'.length,
  byte: 84,
  date: '^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$'.length,
  datetime: '^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$'.length,
};

/** The MaxRegexSize of the named format V, when V is one. */
export function formatRegexSize(v: unknown): number | undefined {
  if (asOpaque(v, TYPE) === undefined) return undefined;
  const name = (v as CelMap).get('@' + TYPE);
  return typeof name === 'string' ? MAX_REGEX_SIZE[name] : undefined;
}

const formatValue = (name: string): ReturnType<typeof opaqueValue> => opaqueValue(TYPE, name, FORMATS[name]);

for (const name of Object.keys(FORMATS)) defineFunction(`format.${name}`, 0, () => formatValue(name));
defineFunction('format.named', 1, (n) => (typeof n === 'string' ? optionalValue(n in FORMATS ? formatValue(n) : undefined) : undefined));
defineMethod('validate', 1, (r, s) => {
  const f = asOpaque<(s: string) => string[]>(r, TYPE);
  if (f === undefined || typeof s !== 'string') return undefined;
  const problems = f(s);
  return optionalValue(problems.length === 0 ? undefined : celList(problems));
});
