/**
 * docs/flags.md is generated from the flag specs (src/cli/flags-doc.ts, `npm run gen:flags-doc`).
 * These tests fail when the committed page differs from what the specs render, and when a flag or a
 * value the server knows is missing from the page or has no text.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeFeatureGates } from '../../src/api/feature-gates.js';
import { KNOWN_CONTROLLER_NAMES } from '../../src/controllers/controller-names.js';
import { renderFlagsDoc } from '../../src/cli/flags-doc.js';
import { FLAGS, usage } from '../../src/cli/flags.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const page = readFileSync(join(ROOT, 'docs', 'flags.md'), 'utf8');

test('docs/flags.md is what the flag specs render (run `npm run gen:flags-doc` after changing a flag)', () => {
  assert.equal(page, renderFlagsDoc(), 'docs/flags.md is stale: run `npm run gen:flags-doc` and commit the result');
});

test('every flag has one row in docs/flags.md, with help text', () => {
  const names = FLAGS.map((f) => f.name);
  assert.equal(new Set(names).size, names.length, 'flag names are unique');
  for (const f of FLAGS) {
    assert.ok(f.help.trim() !== '', `--${f.name} has help text`);
    const rows = page.split('\n').filter((l) => l.startsWith(`| \`--${f.name}\` |`));
    assert.equal(rows.length, 1, `--${f.name} has one row`);
  }
});

test('every controller and feature gate is listed with its meaning, in the page and in --help', () => {
  const help = usage();
  for (const c of KNOWN_CONTROLLER_NAMES) {
    assert.ok(c.help.trim() !== '', `${c.name} has help text`);
    assert.ok(page.includes(`| \`${c.name}\` |`), `${c.name} in docs/flags.md`);
    assert.ok(help.includes(`${c.name}: `), `${c.name} in --help`);
  }
  for (const g of describeFeatureGates()) {
    assert.ok(g.help.trim() !== '', `${g.name} has help text`);
    assert.ok(page.includes(`| \`${g.name}\` | ${g.default ? 'On' : 'Off'} by default.`), `${g.name} in docs/flags.md with its default`);
    assert.ok(help.includes(`${g.name}: `), `${g.name} in --help`);
  }
});

test('a table cell never ends early: `|` in help text is escaped', () => {
  const rendered = renderFlagsDoc([
    { name: 'example', group: 'serving', default: 'a|b', help: 'Either x|y.', values: () => [{ value: 'v', help: 'p|q' }], apply: () => undefined },
  ]);
  assert.ok(rendered.includes('| `--example` | `a\\|b` | Either x\\|y. |'), rendered);
  assert.ok(rendered.includes('| `v` | p\\|q |'), rendered);
});
