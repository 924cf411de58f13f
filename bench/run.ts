/**
 * `npm run bench`: spawns capstan and measures it from outside over HTTP on 127.0.0.1, one fresh
 * server per scenario and target; a server given by --url (target `url`) is measured as it is, by
 * the scenarios that clean up after themselves. Prints one table per scenario (targets side by side), optionally
 * writes JSON (`--json FILE`) and compares with an earlier JSON file (`--baseline FILE`). With
 * `--compare`, runs the side-by-side comparison instead (compare/main.ts).
 * Every child process is killed on exit, error or interrupt.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { runCompare } from './compare/main.js';
import type { ScenarioResult } from './metrics.js';
import { targetLabel } from './endpoint.js';
import { parseBenchArgs, URL_SCENARIOS, USAGE, type BenchOptions, type ScenarioName } from './options.js';
import { CAPSTAN_MAIN, installCleanupHandlers, killAllChildren } from './processes.js';
import { createScenario } from './scenario-create.js';
import { crdReadyScenario } from './scenario-crd-ready.js';
import { crCreateScenario } from './scenario-cr-create.js';
import { crudScenario } from './scenario-crud.js';
import { applyScenario } from './scenario-apply.js';
import { accessScenario } from './scenario-access.js';
import { floorScenario } from './scenario-floor.js';
import { gcScenario } from './scenario-gc.js';
import { decodeScenario } from './scenario-decode.js';
import { encodingsScenario } from './scenario-encodings.js';
import { informerStartScenario } from './scenario-informer-start.js';
import { listScenario } from './scenario-list.js';
import { memoryScenario } from './scenario-memory.js';
import { overloadScenario } from './scenario-overload.js';
import type { Scenario } from './scenario.js';
import { startupScenario } from './scenario-startup.js';
import { watchFanoutManyScenario, watchFanoutScenario } from './scenario-watch-fanout.js';
import { webhookScenario } from './scenario-webhook.js';
import { aggregatorScenario } from './scenario-aggregator.js';
import { writeToWatchScenario } from './scenario-write-to-watch.js';
import { nodeWatchesScenario } from './scenario-node-watches.js';
import { renderTable } from './table.js';

const SCENARIOS: Record<ScenarioName, Scenario> = {
  startup: startupScenario,
  crud: crudScenario,
  create: createScenario,
  apply: applyScenario,
  list: listScenario,
  memory: memoryScenario,
  'watch-fanout': watchFanoutScenario,
  'watch-fanout-many': watchFanoutManyScenario,
  'informer-start': informerStartScenario,
  gc: gcScenario,
  decode: decodeScenario,
  'crd-ready': crdReadyScenario,
  webhook: webhookScenario,
  'cr-create': crCreateScenario,
  encodings: encodingsScenario,
  access: accessScenario,
  floor: floorScenario,
  aggregator: aggregatorScenario,
  overload: overloadScenario,
  'write-to-watch': writeToWatchScenario,
  'node-watches': nodeWatchesScenario,
};

/** The JSON written by --json (and read by --baseline). */
export interface BenchReport {
  version: 1;
  date: string;
  host: { node: string; cpus: number; cpuModel: string; memoryBytes: number };
  options: BenchOptions;
  /** scenario -> target label -> result */
  results: Record<string, Record<string, ScenarioResult>>;
}

function loadBaseline(file: string): BenchReport {
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (
    typeof parsed !== 'object' ||
    parsed === null ||
    (parsed as { version?: unknown }).version !== 1 ||
    typeof (parsed as { results?: unknown }).results !== 'object'
  ) {
    throw new Error(`${file} is not a bench --json report`);
  }
  return parsed as BenchReport;
}

async function main(): Promise<number> {
  if (process.argv.includes('--compare')) return runCompare(process.argv.slice(2));
  let options: BenchOptions | undefined;
  try {
    options = parseBenchArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  if (!options) {
    process.stdout.write(USAGE);
    return 0;
  }
  installCleanupHandlers();
  if (options.targets.some((t) => t !== 'url') && !existsSync(CAPSTAN_MAIN)) {
    process.stderr.write(`bench: ${CAPSTAN_MAIN} not found; build first (npm run build)\n`);
    return 2;
  }
  const baseline = options.baselineFile !== undefined ? loadBaseline(options.baselineFile) : undefined;
  const report: BenchReport = {
    version: 1,
    date: new Date().toISOString(),
    host: { node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', memoryBytes: totalmem() },
    // The bearer token stays out of the file.
    options: options.urlTarget?.token !== undefined ? { ...options, urlTarget: { ...options.urlTarget, token: '(redacted)' } } : options,
    results: {},
  };
  process.stdout.write(
    `capstan bench ${report.date}  node ${report.host.node}, ${report.host.cpus} x ${report.host.cpuModel}, ${(report.host.memoryBytes / 1024 ** 3).toFixed(0)} GiB\n`,
  );
  const urlNote = options.urlTarget ? ` (${options.urlTarget.label} = ${options.urlTarget.url})` : '';
  process.stdout.write(
    `targets: ${options.targets.map((t) => targetLabel(t, options)).join(', ')}${urlNote}; scenarios: ${options.only.join(', ')}${options.quick ? ' (quick)' : ''}\n`,
  );
  process.stdout.write('"!" marks a value that misses its goal; server and client share this host.\n\n');

  let errors = 0;
  const started = performance.now();
  for (const name of options.only) {
    const scenario = SCENARIOS[name];
    const byTarget: { target: string; result: ScenarioResult; baseline?: ScenarioResult }[] = [];
    for (const targetName of options.targets) {
      const target = targetLabel(targetName, options);
      if (targetName === 'url' && !URL_SCENARIOS.includes(name)) {
        byTarget.push({ target, result: { metrics: [], notes: [`not run: ${name} needs a server the benchmark starts itself`] } });
        continue;
      }
      process.stderr.write(`bench: ${name} [${target}]\n`);
      const t0 = performance.now();
      let result: ScenarioResult;
      try {
        result = await scenario.run(targetName, options);
      } catch (err) {
        errors++;
        result = { metrics: [], notes: [], error: err instanceof Error ? err.message : String(err) };
      }
      if (result.error !== undefined && result.metrics.length > 0) errors++;
      process.stderr.write(`bench: ${name} [${target}] took ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
      (report.results[name] ??= {})[target] = result;
      const base = baseline?.results[name]?.[target];
      byTarget.push(base ? { target, result, baseline: base } : { target, result });
    }
    const summary = scenario.summarize?.(byTarget) ?? [];
    process.stdout.write(`${renderTable(scenario.title, byTarget)}${summary.map((l) => `${l}\n`).join('')}\n`);
  }
  process.stdout.write(`total ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  if (options.jsonFile !== undefined) {
    writeFileSync(options.jsonFile, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`results written to ${options.jsonFile}\n`);
  }
  return errors > 0 ? 1 : 0;
}

main().then(
  (code) => {
    killAllChildren();
    process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    killAllChildren();
    process.exit(1);
  },
);
