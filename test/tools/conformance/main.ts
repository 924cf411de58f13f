/**
 * Command line of npm run conformance's helpers (scripts/conformance.sh calls it):
 *   node dist/test/tools/conformance/main.js skip-regex --scope FILE
 *       prints one regular expression matching every out-of-scope test (ginkgo's --skip)
 *   node dist/test/tools/conformance/main.js table --dir DIR --scope FILE --focus RE --targets a,b,c
 *       [--reference NAME]
 *       writes DIR/table.md from DIR/<target>/junit_*.xml (a target without them is "not run") and
 *       DIR/<target>/run.txt (the run's conditions, one "key: value" a line), and prints it
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseJUnit, type JUnitCase } from './junit.js';
import { buildReport, type TargetRun } from './report.js';
import { parseScope, skipRegex } from './scope.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    scope: { type: 'string' },
    dir: { type: 'string' },
    focus: { type: 'string', default: '\\[Conformance\\]' },
    targets: { type: 'string', default: 'reference,capstan-memory,capstan-redis2' },
    reference: { type: 'string', default: 'reference' },
  },
});

function fail(msg: string): never {
  process.stderr.write(`conformance: ${msg}\n`);
  process.exit(2);
}

if (values.scope === undefined) fail('--scope FILE is required');
const scope = parseScope(readFileSync(values.scope, 'utf8'));

if (positionals[0] === 'skip-regex') {
  process.stdout.write(skipRegex(scope) + '\n');
} else if (positionals[0] === 'table') {
  const dir = values.dir ?? fail('table needs --dir DIR');
  const targets: TargetRun[] = [];
  const runs: string[] = [];
  for (const name of values.targets.split(',').filter((t) => t !== '')) {
    const tdir = join(dir, name);
    const files = existsSync(tdir) ? readdirSync(tdir).filter((f) => /^junit.*\.xml$/.test(f)) : [];
    const cases: JUnitCase[] = files.flatMap((f) => parseJUnit(readFileSync(join(tdir, f), 'utf8')));
    targets.push({ name, cases: files.length > 0 ? cases : undefined });
    const info = join(tdir, 'run.txt');
    if (existsSync(info)) {
      const kv = readFileSync(info, 'utf8').split('\n').filter((l) => l.trim() !== '');
      runs.push(`- ${name}: ${kv.join('; ')}`);
    }
  }
  const body = buildReport({ focus: new RegExp(values.focus), scope, reference: values.reference, targets });
  const text = [`Focus \`${values.focus}\`; counts are passed / failed / not run of the tests in scope.`, '', ...runs, '', body].join('\n');
  writeFileSync(join(dir, 'table.md'), text);
  process.stdout.write(text);
} else {
  fail('usage: main.js skip-regex --scope FILE | table --dir DIR --scope FILE [--focus RE] [--targets a,b] [--reference NAME]');
}
