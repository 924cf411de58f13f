/**
 * The string format checks of k8s.io/apimachinery (util/validation and api/validate/content): each
 * returns the list of problems worded exactly as kube words them, empty when the value is valid.
 * Lengths are measured in UTF-8 bytes, as Go's len() does.
 */

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const LABEL_KEY_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE_FMT = `(${LABEL_KEY_FMT})?`;

const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const DNS1035_LABEL_RE = new RegExp(`^${DNS1035_LABEL_FMT}$`);
const LABEL_KEY_RE = new RegExp(`^${LABEL_KEY_FMT}$`);
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);

/** Maximum length of a DNS-1123 or DNS-1035 label, and of label values and label-key names. */
export const DNS1123_LABEL_MAX_LENGTH = 63;
/** Maximum length of a DNS-1123 subdomain. */
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
export const LABEL_VALUE_MAX_LENGTH = 63;

/** Length in bytes, as Go's len(string). */
export function byteLength(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/**
 * How a length limit is worded: apimachinery's util/validation (DNS names, port names) says
 * "characters", its newer api/validate/content package (label keys and values) says "bytes".
 */
export type LengthUnit = 'characters' | 'bytes';

/** kube's MaxLenError (content's by default; util/validation's with 'characters'). */
export function maxLenError(length: number, unit: LengthUnit = 'bytes'): string {
  return `must be no more than ${length} ${unit}`;
}

/** kube's RegexError, including its doubled space between examples. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let out = `${msg} (e.g. `;
  examples.forEach((example, i) => {
    if (i > 0) out += ' or ';
    out += `'${example}', `;
  });
  return `${out}regex used for validation is '${fmt}')`;
}

/** kube's EmptyError. */
export function emptyError(): string {
  return 'must be non-empty';
}

/** IsDNS1123Label: a lowercase RFC 1123 label of at most 63 bytes. */
export function isDNS1123Label(value: string, unit: LengthUnit = 'characters'): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH, unit));
  if (!DNS1123_LABEL_RE.test(value)) {
    if (DNS1123_SUBDOMAIN_RE.test(value)) errs.push('must not contain dots');
    else {
      errs.push(
        regexError(
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
          DNS1123_LABEL_FMT,
          'my-name',
          '123-abc',
        ),
      );
    }
  }
  return errs;
}

/** IsDNS1123Subdomain: a lowercase RFC 1123 subdomain of at most 253 bytes. */
export function isDNS1123Subdomain(value: string, unit: LengthUnit = 'characters'): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH, unit));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN_FMT,
        'example.com',
      ),
    );
  }
  return errs;
}

/** IsDNS1035Label: a label that starts with a letter, at most 63 bytes. */
const DNS1123_LABEL_WITH_UNDERSCORE_FMT = '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_WITH_UNDERSCORE_FMT = `${DNS1123_LABEL_WITH_UNDERSCORE_FMT}(\\.${DNS1123_LABEL_WITH_UNDERSCORE_FMT})*`;
const DNS1123_SUBDOMAIN_WITH_UNDERSCORE_RE = new RegExp(`^${DNS1123_SUBDOMAIN_WITH_UNDERSCORE_FMT}$`);

/** IsDNS1123SubdomainWithUnderscore: a subdomain whose labels may start with '_' and hold '_' (DNS search paths). */
export function isDNS1123SubdomainWithUnderscore(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH, 'characters'));
  if (!DNS1123_SUBDOMAIN_WITH_UNDERSCORE_RE.test(value)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN_WITH_UNDERSCORE_FMT,
        'example.com',
      ),
    );
  }
  return errs;
}

export function isDNS1035Label(value: string, unit: LengthUnit = 'characters'): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH, unit));
  if (!DNS1035_LABEL_RE.test(value)) {
    errs.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        DNS1035_LABEL_FMT,
        'my-name',
        'abc-123',
      ),
    );
  }
  return errs;
}

/**
 * IsLabelKey (also IsQualifiedName): an optional DNS-subdomain prefix and '/', then a name of at most
 * 63 bytes of alphanumerics, '-', '_' and '.' that starts and ends alphanumeric.
 */
export function isLabelKey(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) errs.push(`prefix part ${emptyError()}`);
    else errs.push(...isDNS1123Subdomain(prefix, 'bytes').map((m) => `prefix part ${m}`));
  } else {
    return [
      `a valid label key ${regexError(
        "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_KEY_FMT,
        'MyName',
        'my.name',
        '123-abc',
      )} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push(`name part ${emptyError()}`);
  else if (byteLength(name) > DNS1123_LABEL_MAX_LENGTH) errs.push(`name part ${maxLenError(DNS1123_LABEL_MAX_LENGTH)}`);
  if (!LABEL_KEY_RE.test(name)) {
    errs.push(
      `name part ${regexError(
        "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_KEY_FMT,
        'MyName',
        'my.name',
        '123-abc',
      )}`,
    );
  }
  return errs;
}

/** IsLabelValue: empty, or at most 63 bytes shaped like a label-key name. */
export function isLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX_LENGTH) errs.push(maxLenError(LABEL_VALUE_MAX_LENGTH));
  if (!LABEL_VALUE_RE.test(value)) {
    errs.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE_FMT,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  }
  return errs;
}

/** IsPathSegmentName: the name can be one segment of a URL path (not `.`/`..`, no `/` or `%`). */
export function isPathSegmentName(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  return isPathSegmentPrefix(name);
}

/** IsPathSegmentPrefix: the prefix may start a path-segment name (no `/` or `%`). */
export function isPathSegmentPrefix(name: string): string[] {
  const errs: string[] = [];
  if (name.includes('/')) errs.push("may not contain '/'");
  if (name.includes('%')) errs.push("may not contain '%'");
  return errs;
}

/**
 * maskTrailingDash: lets a generateName prefix end in '-'. Faithful to kube, which replaces the
 * last two characters with 'a' (so "b-" checks as "a").
 */
export function maskTrailingDash(name: string): string {
  if (name.length > 1 && name.endsWith('-')) return `${name.slice(0, -2)}a`;
  return name;
}
