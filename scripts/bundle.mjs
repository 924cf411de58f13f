#!/usr/bin/env node
// Bundles the server into one ES module, dist/src/main.js, after `tsc` has compiled the tree
// (`npm run build` runs both). Why: Node 20 has no module compile cache, and loading ~500 modules
// (a file open, stat and compile each, plus every package's own files) was two thirds of start-up.
// One file is read and compiled once; docs/benchmarks.md has the numbers.
//
// The bundle replaces tsc's dist/src/main.js, so `node dist/src/main.js` (npm start, the image, the
// chart, workers forked by the cluster module, envtest's wrappers, the tests) runs it. The rest of
// dist/src stays tsc's output for the unit tests that import single modules. A later bare `tsc`
// rewrites main.js as the unbundled entry, which still works: never a stale bundle.
//
// Modules the server loads on first use (`import()`) become chunks in dist/src/chunks/, loaded
// when needed. Run-time data (schema/, lua/) is found by walking up from the module's own location,
// which works from dist/src/ as from dist/src/<folder>/. Native addons stay outside the bundle.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const chunks = join(root, 'dist', 'src', 'chunks');
rmSync(chunks, { recursive: true, force: true });

const result = await build({
  absWorkingDir: root,
  entryPoints: { main: 'src/main.ts' },
  outdir: 'dist/src',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  tsconfig: 'tsconfig.json',
  // cbor-extract is a native addon that cbor-x finds at run time; it must stay a package on disk.
  external: ['cbor-extract'],
  // Packages written as CommonJS call require() for Node's built-ins; an ES module has none.
  banner: { js: "import { createRequire as __capstanRequire } from 'node:module';\nconst require = __capstanRequire(import.meta.url);" },
  // Names stay: stack traces and `constructor.name` checks read them.
  keepNames: true,
  legalComments: 'none',
  logLevel: 'warning',
  metafile: process.argv.includes('--metafile'),
});
if (result.metafile) {
  const { writeFileSync } = await import('node:fs');
  writeFileSync(join(root, 'dist', 'bundle-meta.json'), JSON.stringify(result.metafile));
}
