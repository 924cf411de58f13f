/**
 * The conformance result table (markdown) from the JUnit cases of one run per target: per sig, the
 * conformance tests the focus selects, how many are out of scope, and passed / failed / not run on
 * each target; then the tests the reference passes and a Capstan target does not, the tests the
 * reference fails, and the out-of-scope tests with their reasons. Pure: no files, no clock.
 */
import type { JUnitCase } from './junit.js';
import { outOfScopeReason, type Scope } from './scope.js';

/** One target's run: undefined cases when it was not run (no JUnit file). */
export interface TargetRun {
  name: string;
  cases?: JUnitCase[];
}

/** What the table is made from. */
export interface ReportInput {
  /** Selects the tests (ginkgo's focus, as a JavaScript RegExp); only names with [Conformance] count. */
  focus: RegExp;
  scope: Scope;
  /** The baseline target's name (its passes are what the others are held to). */
  reference: string;
  targets: TargetRun[];
}

type Outcome = 'passed' | 'failed' | 'not run';

interface TestRow {
  name: string;
  sig: string;
  reason?: string;
  outcomes: Map<string, { outcome: Outcome; status: string; failure?: string }>;
}

/** The sig of a test name ("apps" for "[sig-apps] ..."), or "other". */
export function sigOf(name: string): string {
  return /^\[sig-([a-z0-9-]+)\]/.exec(name)?.[1] ?? 'other';
}

function outcomeOf(c: JUnitCase | undefined): Outcome {
  if (c === undefined) return 'not run';
  if (c.status === 'passed') return 'passed';
  if (c.status === 'skipped' || c.status === 'pending') return 'not run';
  return 'failed';
}

function rows(input: ReportInput): TestRow[] {
  const byTarget = new Map<string, Map<string, JUnitCase>>();
  const names = new Set<string>();
  for (const t of input.targets) {
    const m = new Map<string, JUnitCase>();
    for (const c of t.cases ?? []) {
      if (!c.name.includes('[Conformance]') || !input.focus.test(c.name)) continue;
      names.add(c.name);
      // A name seen twice keeps its worst outcome, so a failure is never hidden.
      const prev = m.get(c.name);
      if (prev === undefined || outcomeOf(c) === 'failed') m.set(c.name, c);
    }
    byTarget.set(t.name, m);
  }
  return [...names].sort().map((name) => {
    const reason = outOfScopeReason(input.scope, name);
    const outcomes = new Map<string, { outcome: Outcome; status: string; failure?: string }>();
    for (const t of input.targets) {
      const c = byTarget.get(t.name)?.get(name);
      outcomes.set(t.name, { outcome: outcomeOf(c), status: c?.status ?? 'absent', failure: c?.failure });
    }
    return { name, sig: sigOf(name), reason, outcomes };
  });
}

function cell(rs: TestRow[], target: TargetRun): string {
  if (target.cases === undefined) return 'not run';
  const count = (o: Outcome): number => rs.filter((r) => r.outcomes.get(target.name)?.outcome === o).length;
  return `${count('passed')} / ${count('failed')} / ${count('not run')}`;
}

function escapeCell(s: string): string {
  return s.replace(/\|/g, '\\|');
}

/** The markdown table and lists (no title: the caller adds the run's date and conditions). */
export function buildReport(input: ReportInput): string {
  const all = rows(input);
  const sigs = [...new Set(all.map((r) => r.sig))].sort();
  const lines: string[] = [];
  const head = ['sig', 'selected', 'out of scope', 'in scope', ...input.targets.map((t) => `${t.name} (passed / failed / not run)`)];
  lines.push(`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`);
  const line = (label: string, rs: TestRow[]): void => {
    const inScope = rs.filter((r) => r.reason === undefined);
    lines.push(`| ${[label, rs.length, rs.length - inScope.length, inScope.length, ...input.targets.map((t) => cell(inScope, t))].join(' | ')} |`);
  };
  for (const sig of sigs) line(sig, all.filter((r) => r.sig === sig));
  if (sigs.length > 1) line('**all**', all);

  const inScope = all.filter((r) => r.reason === undefined);
  const ref = input.targets.find((t) => t.name === input.reference);
  for (const t of input.targets) {
    if (t.name === input.reference || t.cases === undefined || ref?.cases === undefined) continue;
    const worse = inScope.filter((r) => r.outcomes.get(input.reference)?.outcome === 'passed' && r.outcomes.get(t.name)?.outcome !== 'passed');
    lines.push('', `Passed on ${input.reference}, not on ${t.name} (${worse.length}):`, '');
    if (worse.length === 0) lines.push('- none');
    for (const r of worse) {
      const o = r.outcomes.get(t.name);
      lines.push(`- ${r.name}: ${o?.status ?? 'absent'}${o?.failure ? ` (${o.failure.slice(0, 200)})` : ''}`);
    }
  }
  if (ref?.cases !== undefined) {
    const refFailed = inScope.filter((r) => r.outcomes.get(input.reference)?.outcome !== 'passed');
    lines.push('', `Not passed on ${input.reference} (${refFailed.length}):`, '');
    if (refFailed.length === 0) lines.push('- none');
    for (const r of refFailed) {
      const o = r.outcomes.get(input.reference);
      const others = input.targets.filter((t) => t.name !== input.reference && r.outcomes.get(t.name)?.outcome === 'passed').map((t) => t.name);
      const failure = o?.failure ? ` (${o.failure.slice(0, 200)})` : '';
      lines.push(`- ${r.name}: ${o?.status ?? 'absent'}${failure}${others.length > 0 ? `; passed on ${others.join(', ')}` : ''}`);
    }
  }

  const out = all.filter((r) => r.reason !== undefined);
  lines.push('', `Out of scope (${out.length}):`, '', '| reason | tests |', '|---|---:|');
  for (const [key, text] of input.scope.reasons) {
    const n = out.filter((r) => r.reason === key).length;
    if (n > 0) lines.push(`| ${escapeCell(text)} | ${n} |`);
  }
  lines.push('');
  for (const r of out) lines.push(`- ${r.name}: ${r.reason ?? ''}`);
  return lines.join('\n') + '\n';
}
