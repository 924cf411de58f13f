/**
 * kube's semver library (version 1): `semver(string)`, `semver(string, normalize)`, `isSemver`,
 * `major`, `minor`, `patch`, `isLessThan`, `isGreaterThan`, `compareTo`, with blang/semver's
 * parsing and precedence (pre-releases before releases, build metadata ignored).
 */
import { asOpaque, opaqueValue } from '../values.js';
import { CelEvalError, defineFunction, defineMethod } from './registry.js';

const TYPE = 'kubernetes.Semver';

interface Version {
  major: bigint;
  minor: bigint;
  patch: bigint;
  pre: string[];
}

const NUM = /^(0|[1-9][0-9]*)$/;

/** blang/semver's Parse; a string is the error. */
function parse(s: string): Version | string {
  if (s === '') return 'Version string empty';
  const parts = s.split('.');
  if (parts.length < 3) return 'No Major.Minor.Patch elements found';
  const [major, minor] = parts;
  let rest = parts.slice(2).join('.');
  const plus = rest.indexOf('+');
  let build = '';
  if (plus >= 0) {
    build = rest.slice(plus + 1);
    rest = rest.slice(0, plus);
  }
  const dash = rest.indexOf('-');
  const patch = dash >= 0 ? rest.slice(0, dash) : rest;
  const pre = dash >= 0 ? rest.slice(dash + 1).split('.') : [];
  for (const [name, v] of [
    ['Major', major],
    ['Minor', minor],
    ['Patch', patch],
  ] as const) {
    if (!/^[0-9]+$/.test(v)) return `Invalid character(s) found in ${name.toLowerCase()} number ${JSON.stringify(v)}`;
    if (v.length > 1 && v.startsWith('0')) return `${name} number must not contain leading zeroes ${JSON.stringify(v)}`;
  }
  for (const p of pre) {
    if (p === '') return 'Prerelease is empty';
    if (!/^[0-9A-Za-z-]+$/.test(p)) return `Invalid character(s) found in prerelease ${JSON.stringify(p)}`;
    if (/^[0-9]+$/.test(p) && !NUM.test(p)) return `Numeric PreRelease version must not contain leading zeroes ${JSON.stringify(p)}`;
  }
  if (build !== '') for (const b of build.split('.')) if (!/^[0-9A-Za-z-]+$/.test(b)) return `Invalid character(s) found in build meta ${JSON.stringify(b)}`;
  return { major: BigInt(major), minor: BigInt(minor), patch: BigInt(patch), pre };
}

/** kube's normalizeAndParse: no `v` prefix, missing minor/patch filled, leading zeros removed. */
function normalizeAndParse(s: string): Version | string {
  s = s.replace(/^v/, '');
  const parts = s.split('.');
  const head = parts.length > 3 ? [...parts.slice(0, 2), parts.slice(2).join('.')] : parts;
  const trimmed = head.map((p) => {
    if (p.length <= 1) return p;
    const t = p.replace(/^0+/, '');
    return t === '' || !/^[0-9]/.test(t) ? `0${t}` : t;
  });
  if (trimmed.length < 3) {
    if (/[+-]/.test(trimmed[trimmed.length - 1])) return 'short version cannot contain PreRelease/Build meta data';
    while (trimmed.length < 3) trimmed.push('0');
  }
  return parse(trimmed.join('.'));
}

function compareParts(a: string, b: string): number {
  const an = /^[0-9]+$/.test(a);
  const bn = /^[0-9]+$/.test(b);
  if (an && bn) return BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0;
  if (an) return -1;
  if (bn) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function compare(a: Version, b: Version): number {
  for (const k of ['major', 'minor', 'patch'] as const) if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  if (a.pre.length === 0 && b.pre.length === 0) return 0;
  if (a.pre.length === 0) return 1;
  if (b.pre.length === 0) return -1;
  for (let i = 0; i < Math.min(a.pre.length, b.pre.length); i++) {
    const c = compareParts(a.pre[i], b.pre[i]);
    if (c !== 0) return c;
  }
  return a.pre.length === b.pre.length ? 0 : a.pre.length < b.pre.length ? -1 : 1;
}

function semverValue(v: Version): ReturnType<typeof opaqueValue> {
  return opaqueValue(TYPE, `${v.major}.${v.minor}.${v.patch}${v.pre.length > 0 ? `-${v.pre.join('.')}` : ''}`, v);
}

function make(s: string, normalize: boolean): ReturnType<typeof opaqueValue> {
  const v = normalize ? normalizeAndParse(s) : parse(s);
  if (typeof v === 'string') throw new CelEvalError(v);
  return semverValue(v);
}

defineFunction('semver', 1, (s) => (typeof s === 'string' ? make(s, false) : undefined));
defineFunction('semver', 2, (s, n) => (typeof s === 'string' && typeof n === 'boolean' ? make(s, n) : undefined));
defineFunction('isSemver', 1, (s) => (typeof s === 'string' ? typeof parse(s) !== 'string' : undefined));
defineFunction('isSemver', 2, (s, n) =>
  typeof s === 'string' && typeof n === 'boolean' ? typeof (n ? normalizeAndParse(s) : parse(s)) !== 'string' : undefined,
);
const v = (x: unknown): Version | undefined => asOpaque<Version>(x, TYPE);
for (const k of ['major', 'minor', 'patch'] as const) defineMethod(k, 0, (r) => v(r)?.[k]);
defineMethod('isLessThan', 1, (r, o) => (v(r) && v(o) ? compare(v(r)!, v(o)!) < 0 : undefined));
defineMethod('isGreaterThan', 1, (r, o) => (v(r) && v(o) ? compare(v(r)!, v(o)!) > 0 : undefined));
defineMethod('compareTo', 1, (r, o) => (v(r) && v(o) ? BigInt(compare(v(r)!, v(o)!)) : undefined));
