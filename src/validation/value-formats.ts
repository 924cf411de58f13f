/**
 * kube's checks of numbers and small string formats used across pod specs and workloads
 * (apimachinery's util/validation and core's ValidateNonnegativeField), with its exact wording.
 * Each returns the problems found, in kube's order; an empty list means valid.
 */
import type { StatusCause } from '../api/errors.js';
import { invalidField } from './field-errors.js';
import { regexError } from './string-formats.js';

export const INT32_MAX = 2147483647;

/** kube's InclusiveRangeError. */
export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

/** ValidateNonnegativeField: `must be greater than or equal to 0`. */
export function nonNegative(field: string, value: number | undefined): StatusCause[] {
  return value !== undefined && value < 0 ? [invalidField(field, value, 'must be greater than or equal to 0')] : [];
}

/** IsValidPortNum: 1..65535. */
export function portNumberProblems(port: number): string[] {
  return port >= 1 && port <= 65535 ? [] : [inclusiveRangeError(1, 65535)];
}

/**
 * IsValidPortName: an IANA_SVC_NAME (at most 15 characters, lower-case letters, digits and single
 * hyphens). util/validation words its length limit in characters, not bytes as the content package does.
 */
export function portNameProblems(name: string): string[] {
  const errs: string[] = [];
  if (Buffer.byteLength(name, 'utf8') > 15) errs.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(name)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(name)) errs.push('must contain at least one letter (a-z)');
  if (name.includes('--')) errs.push('must not contain consecutive hyphens');
  if (name.length > 0 && (name.startsWith('-') || name.endsWith('-'))) errs.push('must not begin or end with a hyphen');
  return errs;
}

/** IsValidPercent: digits followed by '%'. */
export function percentProblems(value: string): string[] {
  return /^[0-9]+%$/.test(value) ? [] : [regexError("a valid percent string must be a numeric string followed by an ending '%'", '[0-9]+%', '1%', '93%')];
}

/** IsValidUserID / IsValidGroupID: 0..MaxInt32. */
export function idProblems(id: number): string[] {
  return id >= 0 && id <= INT32_MAX ? [] : [inclusiveRangeError(0, INT32_MAX)];
}

/** IsRelaxedEnvVarName: printable ASCII other than '=' (the rule of 1.36, where the relaxed check is on). */
export function envVarNameProblems(name: string): string[] {
  const errs: string[] = [];
  if (name.length === 0) errs.push('environment variable name must be non-empty');
  for (const ch of name) {
    const code = ch.codePointAt(0) ?? 0;
    if (code > 0x7e || code < 0x20 || ch === '=') {
      errs.push("a valid environment variable name must consist only of printable ASCII characters other than '='");
      break;
    }
  }
  return errs;
}

/** An int-or-string value as kube prints it in a field error: the number, or the quoted string. */
export function intOrStringValue(v: unknown): number | string {
  return typeof v === 'number' ? v : typeof v === 'string' ? v : 0;
}
