import { base64ErrorOffset } from '../codec/go-base64.js';
import { isIP } from 'node:net';

/**
 * The string formats kube-openapi's default registry checks in custom resources (strfmt.Default),
 * each as a predicate over the string. Formats outside the registry are not checked, as in kube.
 */

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const EMAIL = /^[^@\s]+@[^@\s]+$/;
const MAC = /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{4}\.){2}[0-9a-fA-F]{4}$/;
const BSON = /^[0-9a-fA-F]{24}$/;
const HEXCOLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const RGBCOLOR = /^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$/;
const IPV4 = /^((25[0-5]|2[0-4]\d|[01]?\d?\d)\.){3}(25[0-5]|2[0-4]\d|[01]?\d?\d)$/;
const SSN = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const DURATION = /^\s*(-?\d+(\.\d+)?\s*(ns|us|µs|ms|s|m|h|d|w|[a-z]+)\s*)+$/;

function validDate(y: string, m: string, d: string): boolean {
  const year = Number(y);
  const month = Number(m);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1) return false;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return day <= days;
}

function validCidr(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return false;
  const ip = isIP(s.slice(0, slash));
  const bits = s.slice(slash + 1);
  if (ip === 0 || !/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (ip === 4 ? 32 : 128);
}

function validUri(s: string): boolean {
  try {
    new URL(s);
    return true;
  } catch {
    return false;
  }
}

const CHECKS: Record<string, (s: string) => boolean> = {
  byte: (s) => base64ErrorOffset(s) < 0,
  date: (s) => {
    const m = DATE.exec(s);
    return m !== null && validDate(m[1] ?? '', m[2] ?? '', m[3] ?? '');
  },
  'date-time': (s) => {
    const m = DATE_TIME.exec(s);
    return m !== null && validDate(m[1] ?? '', m[2] ?? '', m[3] ?? '') && Number(m[4]) < 24 && Number(m[5]) < 60 && Number(m[6]) < 61;
  },
  uuid: (s) => UUID.test(s),
  uuid3: (s) => UUID3.test(s),
  uuid4: (s) => UUID4.test(s),
  uuid5: (s) => UUID5.test(s),
  hostname: (s) => s.length <= 255 && HOSTNAME.test(s),
  // kube parses IPv4 sloppily: leading zeros are accepted.
  ipv4: (s) => IPV4.test(s),
  ipv6: (s) => isIP(s) === 6,
  cidr: validCidr,
  mac: (s) => MAC.test(s),
  email: (s) => EMAIL.test(s),
  uri: validUri,
  bsonobjectid: (s) => BSON.test(s),
  hexcolor: (s) => HEXCOLOR.test(s),
  rgbcolor: (s) => RGBCOLOR.test(s),
  ssn: (s) => SSN.test(s),
  duration: (s) => DURATION.test(s),
  password: () => true,
};
CHECKS.datetime = CHECKS['date-time'] ?? (() => true);

/** Whether VALUE is valid in FORMAT (true for formats kube does not check). */
export function validInFormat(format: string, value: string): boolean {
  const check = Object.hasOwn(CHECKS, format) ? CHECKS[format] : undefined;
  return check === undefined ? true : check(value);
}

const INT32 = 2 ** 31;
const INT64 = 2 ** 63;

/** Whether the number VALUE is valid in the numeric FORMAT (int32, int64, float, double; others pass). */
export function numberInFormat(format: string, value: number): boolean {
  if (format === 'int32') return Number.isInteger(value) && value >= -INT32 && value < INT32;
  if (format === 'int64') return Number.isInteger(value) && value >= -INT64 && value < INT64;
  if (format === 'float') return Math.abs(value) <= 3.4028234663852886e38;
  return true;
}
