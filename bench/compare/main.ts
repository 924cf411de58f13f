/**
 * `npm run bench -- --compare` (also `npm run bench:compare`): Capstan's targets and the reference
 * kube-apiserver measured one after another by the same client in the same run, printed as tables
 * and written as an HTML report with charts. The reference is started through kube-up.sh when it
 * has been built (skipped with a note otherwise, unless asked for by --targets), or is the server
 * given by --url. Exit code: 0 when every part ran, 1 when one failed, 2 on bad arguments.
 */
import { existsSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { pinPlan } from '../affinity.js';
import { writeReport } from '../report/html-report.js';
import { CAPSTAN_MAIN, installCleanupHandlers } from '../processes.js';
import { startCapstanTarget } from './capstan-target.js';
import type { LiveTarget } from './live-target.js';
import { listScenarios } from './list-phase.js';
import { COMPARE_USAGE, parseCompareArgs, type CompareOptions } from './options.js';
import { existingServerTarget, referenceUnavailable, startReferenceTarget } from './reference-target.js';
import type { ComparisonResults, ScenarioInfo } from './results.js';
import { measureTarget, type PhaseScenarios } from './run-target.js';
import { renderTextReport } from './text-report.js';
import { freshScenario, VERB_SCENARIOS } from './verb-phases.js';
import { watchScenario } from './watch-phase.js';
import { measurePaired, PAIRED_SCENARIOS } from './paired-phase.js';

/** The targets to measure, in order: label and how to start it. */
function plannedTargets(o: CompareOptions, notes: string[]): Array<{ label: string; start: () => Promise<LiveTarget> }> {
  const planned: Array<{ label: string; start: () => Promise<LiveTarget> }> = o.capstanTargets.map((name) => ({
    label: name,
    start: () => startCapstanTarget(name, o.serverNodeArgs, o.serverArgs),
  }));
  const ref = o.reference;
  if (ref.kind === 'url') planned.push({ label: ref.target.label, start: () => existingServerTarget(ref.target) });
  if (ref.kind === 'kube-up') {
    const why = referenceUnavailable(ref.dir);
    if (why === undefined) planned.push({ label: ref.label, start: () => startReferenceTarget(ref.dir, ref.label) });
    else if (ref.explicit) throw new Error(`the reference cannot be started: ${why}`);
    else notes.push(`reference not measured: ${why}`);
  }
  return planned;
}

/** The scenarios of each phase for these options. */
function phaseScenarios(o: CompareOptions): PhaseScenarios {
  return {
    fresh: [freshScenario(o)],
    verbs: VERB_SCENARIOS,
    list: listScenarios(o.listObjects),
    watch: [watchScenario(o), watchScenario(o, true)],
    paired: PAIRED_SCENARIOS,
  };
}

/** Runs the comparison with `argv` (the arguments after the script, --compare among them); resolves with the exit code. */
export async function runCompare(argv: readonly string[]): Promise<number> {
  let o: CompareOptions | undefined;
  const notes: string[] = [];
  let planned: ReturnType<typeof plannedTargets>;
  try {
    o = parseCompareArgs(argv);
    if (o === undefined) {
      process.stdout.write(COMPARE_USAGE);
      return 0;
    }
    planned = plannedTargets(o, notes);
    if (o.pin) {
      const plan = pinPlan();
      notes.push(
        `--pin: each target's processes ran on core ${plan.server} from their start (start-up included), the client on ${plan.client === '1' ? 'core' : 'cores'} ${plan.client} while it measured.`,
      );
    }
  } catch (err) {
    process.stderr.write(`bench --compare: ${err instanceof Error ? err.message : String(err)}\n\n${COMPARE_USAGE}`);
    return 2;
  }
  if (o.capstanTargets.length > 0 && !existsSync(CAPSTAN_MAIN)) {
    process.stderr.write(`bench --compare: ${CAPSTAN_MAIN} not found; build first (npm run build)\n`);
    return 2;
  }
  installCleanupHandlers();
  const byPhase = phaseScenarios(o);
  const scenarios: ScenarioInfo[] = (['fresh', 'verbs', 'list', 'watch', 'paired'] as const)
    .filter((p) => o.phases.includes(p))
    .flatMap((p) => [...byPhase[p]]);
  const date = new Date().toISOString();
  const results: ComparisonResults = {
    version: 1,
    date,
    host: { node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', memoryBytes: totalmem() },
    quick: o.quick,
    sizes: {
      'fresh creates': o.freshOps,
      'warm-up creates': o.warmupCreates,
      'warm-up GETs': o.warmupGets,
      'ops per verb': o.ops,
      'in flight': o.concurrency,
      'payload bytes': o.payloadBytes,
      'listed objects': o.listObjects,
      'LISTs per encoding': o.lists,
      watchers: o.watchers,
      'writes/s': o.writeRate,
      'write seconds': o.watchSeconds,
      ...(o.phases.includes('paired') ? { 'paired rounds': o.pairedRounds } : {}),
    },
    targets: [],
    reference: undefined,
    scenarios,
    rows: [],
    startup: [],
    notes,
  };
  process.stdout.write(
    `capstan bench --compare ${date}  node ${results.host.node}, ${results.host.cpus} x ${results.host.cpuModel}; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n` + `targets: ${planned.map((p) => p.label).join(', ')}; phases: ${o.phases.join(', ')}${o.quick ? ' (quick)' : ''}\n`,
  );
  for (const n of notes) process.stdout.write(`note: ${n}\n`);
  const started = performance.now();
  let errors = 0;
  // With only paired rounds asked for, targets are started by them alone (no start-up measurement).
  const sequential = o.phases.some((phase) => phase !== 'paired');
  for (const p of sequential ? planned : []) {
    const t0 = performance.now();
    const m = await measureTarget(p.label, p.start, o, byPhase);
    results.targets.push(m.info);
    results.rows.push(...m.rows);
    results.startup.push(m.startup);
    errors += m.errors.length;
    for (const e of m.errors) process.stderr.write(`bench --compare: ${e}\n`);
    process.stderr.write(`  ${p.label}: done in ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
  }
  if (o.phases.includes('paired')) {
    const t0 = performance.now();
    try {
      const paired = await measurePaired(planned, o);
      results.rows.push(...paired.rows);
      if (!sequential) results.targets.push(...paired.targets);
    } catch (err) {
      errors++;
      process.stderr.write(`bench --compare: paired rounds: ${err instanceof Error ? err.message : String(err)}\n`);
    }
    process.stderr.write(`  paired rounds: done in ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
  }
  const ref = o.reference;
  const refLabel = ref.kind === 'url' ? ref.target.label : ref.kind === 'kube-up' ? ref.label : undefined;
  results.reference = results.targets.some((t) => t.label === refLabel && t.description !== 'failed to start') ? refLabel : undefined;
  for (const s of results.startup) if (s.note !== undefined) notes.push(`${s.target} start-up: ${s.note}`);
  if (o.capstanTargets.length > 0)
    notes.push(
      'Capstan is started twice: the first start creates its certificates, the second (measured, "existing certificates") reuses them; it also listens on a plain loopback port, used only to poll /readyz.',
    );
  process.stdout.write(`\n${renderTextReport(results)}\n`);
  const page = writeReport(resolve(o.reportDir), results);
  process.stdout.write(`report: ${page}  (total ${((performance.now() - started) / 1000).toFixed(0)} s)\n`);
  return errors > 0 ? 1 : 0;
}
