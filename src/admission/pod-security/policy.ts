/**
 * Pod Security policies: the namespace labels that choose them (`pod-security.kubernetes.io/enforce`,
 * `-audit`, `-warn` and their `-version`s) and the evaluation of a pod against a level and version,
 * as k8s.io/pod-security-admission 1.36 orders and words it.
 */
import type { StatusCause } from '../../api/errors.js';
import type { Obj } from '../../api/object-util.js';
import { invalidField } from '../../validation/field-errors.js';
import { CHECKS, NEWEST_POLICY_MINOR, type CheckFn, type Violation } from './checks.js';

export type Level = 'privileged' | 'baseline' | 'restricted';
const LEVELS: readonly Level[] = ['privileged', 'baseline', 'restricted'];

/** A level at a policy version: `latest`, or the minor of `v1.x`. */
export interface LevelVersion {
  level: Level;
  version: number | 'latest';
}

export interface Policy {
  enforce: LevelVersion;
  audit: LevelVersion;
  warn: LevelVersion;
}

const PREFIX = 'pod-security.kubernetes.io/';

/** `restricted:latest`, `baseline:v1.30`. */
export function levelVersionText(lv: LevelVersion): string {
  return `${lv.level}:${lv.version === 'latest' ? 'latest' : `v1.${lv.version}`}`;
}

/** kube-apiserver's default policy (no PodSecurity configuration file): privileged everywhere. */
export function defaultPolicy(): Policy {
  return {
    enforce: { level: 'privileged', version: 'latest' },
    audit: { level: 'privileged', version: 'latest' },
    warn: { level: 'privileged', version: 'latest' },
  };
}

function parseLevel(text: string): Level | undefined {
  return (LEVELS as readonly string[]).includes(text) ? (text as Level) : undefined;
}

function parseVersion(text: string): number | 'latest' | undefined {
  if (text === 'latest') return 'latest';
  const match = /^v1\.([0-9]|[1-9][0-9]*)$/.exec(text);
  if (match === null) return undefined;
  const minor = Number(match[1]);
  return Number.isSafeInteger(minor) ? minor : undefined;
}

/**
 * PolicyToEvaluate: the policy the labels choose over the default, and their errors (an invalid
 * enforce level enforces `restricted`; invalid audit or warn levels fall back to privileged; an
 * invalid version means `latest`). Warn follows a stricter enforce level unless set itself.
 */
export function policyOf(labels: Obj): { policy: Policy; errors: StatusCause[] } {
  const policy = defaultPolicy();
  const errors: StatusCause[] = [];
  const label = (key: string): string | undefined => (typeof labels[PREFIX + key] === 'string' ? (labels[PREFIX + key] as string) : undefined);
  const fail = (key: string, value: string, detail: string): void => {
    errors.push(invalidField(`metadata.labels[${PREFIX}${key}]`, value, detail));
  };
  const levelError = `must be one of ${LEVELS.join(', ')}`;
  let hasEnforceLevel = false;
  for (const mode of ['enforce', 'audit', 'warn'] as const) {
    const levelText = label(mode);
    if (levelText !== undefined) {
      const level = parseLevel(levelText);
      if (level === undefined) fail(mode, levelText, levelError);
      policy[mode].level = level ?? (mode === 'enforce' ? 'restricted' : 'privileged');
      if (mode === 'enforce') hasEnforceLevel = level !== undefined;
    }
    const versionText = label(`${mode}-version`);
    if (versionText !== undefined) {
      const version = parseVersion(versionText);
      if (version === undefined) fail(`${mode}-version`, versionText, 'must be "latest" or "v1.x"');
      policy[mode].version = version ?? 'latest';
    }
  }
  if (label('warn') === undefined && hasEnforceLevel && LEVELS.indexOf(policy.enforce.level) > LEVELS.indexOf(policy.warn.level)) {
    policy.warn.level = policy.enforce.level;
    if (label('warn-version') === undefined) policy.warn.version = policy.enforce.version;
  }
  return { policy, errors };
}

/** Go's sort of the check ids: bytewise. */
const byteOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const ORDERED_IDS = [
  ...CHECKS.filter((c) => c.level === 'baseline')
    .map((c) => c.id)
    .sort(byteOrder),
  ...CHECKS.filter((c) => c.level === 'restricted')
    .map((c) => c.id)
    .sort(byteOrder),
];

/** The checks a level runs at a policy minor version, in kube's order (baseline ids, then restricted ids). */
function checksAt(level: 'baseline' | 'restricted', minor: number): CheckFn[] {
  const active = new Map<string, { check: CheckFn; overrides?: string[] }>();
  for (const c of CHECKS) {
    if (level === 'baseline' && c.level !== 'baseline') continue;
    const revision = [...c.versions].reverse().find((v) => v.since <= minor);
    if (revision !== undefined) active.set(c.id, revision);
  }
  const overridden = new Set([...active.values()].flatMap((r) => r.overrides ?? []));
  return ORDERED_IDS.filter((id) => active.has(id) && !overridden.has(id)).map((id) => (active.get(id) as { check: CheckFn }).check);
}

/** EvaluatePod + AggregateCheckResults: every violation of the pod at `lv`, in kube's order. */
export function evaluatePod(lv: LevelVersion, meta: Obj, spec: Obj): Violation[] {
  if (lv.level === 'privileged') return [];
  const minor = lv.version === 'latest' ? NEWEST_POLICY_MINOR : Math.min(lv.version, NEWEST_POLICY_MINOR);
  return checksAt(lv.level, minor)
    .map((check) => check(meta, spec))
    .filter((v): v is Violation => v !== undefined)
    .map((v) => ({ reason: v.reason === '' ? 'unknown forbidden reason' : v.reason, detail: v.detail }));
}

/** ForbiddenDetail: `reason (detail), reason, ...`. */
export function violationDetail(violations: Violation[]): string {
  return violations.map((v) => (v.detail === '' ? v.reason : `${v.reason} (${v.detail})`)).join(', ');
}

/** ForbiddenReason: the reasons alone. */
export function violationReasons(violations: Violation[]): string {
  return violations.map((v) => v.reason).join(', ');
}

/** Whether two level-versions are the same policy. */
export function sameLevelVersion(a: LevelVersion, b: LevelVersion): boolean {
  return a.level === b.level && a.version === b.version;
}

/** CompareLevels: -1, 0, 1 by strictness. */
export function compareLevels(a: Level, b: Level): number {
  return Math.sign(LEVELS.indexOf(a) - LEVELS.indexOf(b));
}
