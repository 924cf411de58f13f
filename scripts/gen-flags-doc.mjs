#!/usr/bin/env node
// Writes docs/flags.md from the flag specs (src/cli/flags-doc.ts renders it from the compiled
// dist/). test/unit/flags-doc.test.ts fails when the committed file differs from the rendering.
//
//   npm run gen:flags-doc        (builds first)
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderFlagsDoc } from '../dist/src/cli/flags-doc.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'docs', 'flags.md');
writeFileSync(out, renderFlagsDoc());
console.log(`wrote ${out}`);
