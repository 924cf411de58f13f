/**
 * The shape of src/ stays as scripts/import-layers.mjs writes it: every folder sits in exactly one
 * layer, no import reaches a higher layer, no two files import each other round a circle, and
 * docs/architecture.md lists the same layers in the same order. eslint enforces the layers per
 * import; this test also catches a new folder nobody placed and circles inside one layer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const SRC = join(ROOT, 'src');

interface Layer {
  name: string;
  folders: string[];
  says: string;
}

async function layers(): Promise<Layer[]> {
  const mod = (await import(pathToFileURL(join(ROOT, 'scripts', 'import-layers.mjs')).href)) as { LAYERS: Layer[] };
  return mod.LAYERS;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

/** Each source file's relative imports (value and type), resolved to source files. */
function importGraph(): Map<string, string[]> {
  const files = sourceFiles(SRC);
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const targets: string[] = [];
    for (const m of text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+['"](\.[^'"]+)['"]|^\s*import\s+['"](\.[^'"]+)['"]/gm)) {
      const spec = m[1] ?? m[2];
      const target = normalize(join(dirname(file), spec)).replace(/\.js$/, '.ts');
      if (known.has(target)) targets.push(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

function topFolder(file: string): string {
  return relative(SRC, file).split(sep)[0];
}

/** Strongly connected groups of more than one file (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) found.push(group.map((f) => relative(ROOT, f)).sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('every folder of src/ sits in exactly one layer, and every layer names real folders', async () => {
  const all = await layers();
  const placed = all.flatMap((l) => l.folders);
  assert.equal(new Set(placed).size, placed.length, 'a folder is listed in two layers');
  const folders = readdirSync(SRC, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  assert.deepEqual([...placed].sort(), folders);
});

test('no import in src/ reaches a higher layer', async () => {
  const all = await layers();
  const rank = new Map(all.flatMap((l, i) => l.folders.map((f) => [f, i] as const)));
  const upward: string[] = [];
  for (const [file, targets] of importGraph()) {
    const from = topFolder(file);
    if (!rank.has(from)) continue; // files at the top of src/ (main.ts, index.ts) compose everything
    for (const target of targets) {
      const to = topFolder(target);
      if (rank.has(to) && rank.get(to)! > rank.get(from)!) upward.push(`${relative(ROOT, file)} -> ${relative(ROOT, target)}`);
    }
  }
  assert.deepEqual(upward, []);
});

test('no circle of imports among the files of src/', () => {
  assert.deepEqual(circles(importGraph()), []);
});

test('the circle finder sees a circle when there is one', () => {
  const graph = new Map([
    ['/a', ['/b']],
    ['/b', ['/c']],
    ['/c', ['/a']],
    ['/d', ['/a']],
  ]);
  assert.equal(circles(graph).length, 1);
  assert.equal(circles(graph)[0].length, 3);
});

test('docs/architecture.md draws the same layers in the same order', async () => {
  const all = await layers();
  const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const rows = [...doc.matchAll(/^\| *(\d+) *\| *([a-z]+) *\| *([^|]+)\|/gm)].map((m) => ({
    name: m[2],
    folders: m[3]
      .split(',')
      .map((f) => f.trim().replace(/[`/]/g, ''))
      .filter(Boolean),
  }));
  assert.deepEqual(
    rows,
    all.map((l) => ({ name: l.name, folders: l.folders })),
  );
});
