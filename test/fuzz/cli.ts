/**
 * `npm run fuzz -- [--seed S] [--count N] [--backend memory|redis|all]`: the larger fuzz run.
 * Starts each backend as its own processes, sends N generated hostile requests, and prints one
 * table per backend (requests, 2xx/4xx/5xx, closes and problems per class) and a verdict line.
 * Exits 1 when any backend had a 5xx, a hang, a broken rule, a changed canary or a crashed or
 * restarted process; the first problems are printed with a replayable description.
 */
import { describeRequest, prepare, runFuzz, type FuzzSummary } from './runner.js';
import { TARGETS } from './targets.js';

interface CliOptions {
  seed: number;
  count: number;
  backends: string[];
}

function parseArgs(argv: string[]): CliOptions {
  const options: CliOptions = { seed: 20261124, count: 5000, backends: Object.keys(TARGETS) };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = inline ?? argv[++i];
    if (flag === '--seed') options.seed = Number(value);
    else if (flag === '--count') options.count = Number(value);
    else if (flag === '--backend') options.backends = value === 'all' ? Object.keys(TARGETS) : [value];
    else throw new Error(`unknown flag ${argv[i]}; use --seed S, --count N, --backend memory|redis|all`);
  }
  if (!Number.isSafeInteger(options.seed) || !Number.isSafeInteger(options.count) || options.count < 1) {
    throw new Error('--seed and --count take whole numbers, --count at least 1');
  }
  for (const b of options.backends) if (!(b in TARGETS)) throw new Error(`unknown backend "${b}"; use ${Object.keys(TARGETS).join(', ')} or all`);
  return options;
}

function table(summary: FuzzSummary): string {
  const header = ['class', 'requests', '2xx', '4xx', '5xx', 'closed', 'problems'];
  const rows = Object.entries(summary.byKind)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, c]) => [kind, c.count, c['2xx'], c['4xx'], c['5xx'], c.closed, c.problems].map(String));
  const total = rows.reduce((acc, r) => acc.map((v, i) => (i === 0 ? v : String(Number(v) + Number(r[i])))), ['total', '0', '0', '0', '0', '0', '0']);
  const all = [header, ...rows, total];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  const line = (r: string[]): string => r.map((v, i) => (i === 0 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ');
  return [line(header), ...rows.map(line), line(total)].join('\n');
}

async function runBackend(name: string, options: CliOptions): Promise<boolean> {
  const target = await TARGETS[name]();
  try {
    const started = Date.now();
    const { layout, snapshot } = await prepare(target.url, 'cli');
    const summary = await runFuzz({ url: target.url, seed: options.seed, count: options.count }, layout, snapshot);
    const health = target.health();
    console.log(`\n== ${target.name}: ${summary.count} requests, seed ${options.seed}, ${((Date.now() - started) / 1000).toFixed(1)} s`);
    console.log(table(summary));
    console.log(`answer time: max ${summary.maxMs} ms, p99 ${summary.p99Ms} ms; hangs ${summary.hangs}; 5xx ${summary.status5xx}`);
    console.log(`canaries: ${summary.canaryDiffs.length === 0 ? 'byte-identical' : summary.canaryDiffs.join('; ')}`);
    console.log(`processes: ${health.length === 0 ? 'all still running, none restarted' : health.join('; ')}`);
    for (const o of summary.problems.slice(0, 20)) {
      console.log(`problem: ${o.problem}\n    ${describeRequest(options.seed, o.index, layout)}`);
    }
    return summary.problems.length === 0 && summary.canaryDiffs.length === 0 && health.length === 0 && summary.status5xx === 0 && summary.hangs === 0;
  } finally {
    await target.stop();
  }
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const verdicts: string[] = [];
  for (const name of options.backends) {
    verdicts.push(`${name}: ${(await runBackend(name, options)) ? 'ok' : 'FAILED'}`);
  }
  console.log(`\n${verdicts.join(', ')}`);
  process.exitCode = verdicts.every((v) => v.endsWith(': ok')) ? 0 : 1;
}

main().catch((err: unknown) => {
  console.error(`Error: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
