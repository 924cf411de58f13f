#!/usr/bin/env node
// dist/src/main.js after `npm run build`: written by scripts/bundle.mjs from scripts/bundle-entry.mjs.
// Runs the server bundle (capstan-bundle.cjs, one function expression holding the whole server)
// compiled with V8's code cache made at build time, so start-up neither opens ~500 modules nor
// compiles them. Without a usable cache (another Node.js, other V8 flags) V8 compiles as usual.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

// The bundle's content hash: a cache made for another bundle is never read (V8 only checks the
// source's length).
const BUNDLE_ID = '@BUNDLE_ID@';
// V8 reads a code cache only under the flags it was made with: the build makes one for plain `node`
// and one for the flags npm start, the image and cluster workers run the server with
// (src/cluster/node-flags.ts).
const SERVER_NODE_FLAGS = ['@SERVER_NODE_FLAGS@'];
const variant = SERVER_NODE_FLAGS.every((f) => process.execArgv.includes(f)) ? 'server' : 'plain';
const dir = dirname(fileURLToPath(import.meta.url));
const file = join(dir, 'capstan-bundle.cjs');
const cacheFile = join(dir, `capstan-bundle.${BUNDLE_ID}.${variant}.v8cache`);
let cachedData;
try {
  cachedData = readFileSync(cacheFile);
} catch {
  cachedData = undefined;
}
// The bundle is ASCII (scripts/bundle.mjs escapes the rest): latin1 decodes it fastest, as a one-byte string.
const script = new Script(readFileSync(file, 'latin1'), { filename: file, cachedData });
if (process.env.CAPSTAN_DEBUG_CODE_CACHE === '1') {
  const state = cachedData === undefined ? 'absent' : script.cachedDataRejected ? 'rejected' : 'accepted';
  process.stderr.write(`code cache: ${state}\n`);
}
// The build's warm-up run: after serving a few requests, the cache holds the functions they compiled.
const out = process.env.CAPSTAN_CODE_CACHE_OUT;
if (out !== undefined && out !== '') process.once('exit', () => writeFileSync(out, script.createCachedData()));
cachedData = undefined;
const module = { exports: {} };
script.runInThisContext()(module.exports, createRequire(file), module, file, dir);
