import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { definitionSchema, schemaId, type SchemaWording } from '../schema/ajv-schemas.js';
import { definitionNames, schemaForDefinition } from '../schema/openapi-schema.js';
import { addReachableSchemas, validatorAjv, type ValidatorManifest } from './kind-validators.js';

/**
 * Writes the built-in kinds' validators as standalone code at build time (scripts/bundle.mjs), so a
 * kind's first request loads its validator instead of compiling it with ajv (tens to over a hundred
 * milliseconds per kind, per process). Each module is CommonJS:
 *
 *     module.exports = function (runtime, exports) { ...ajv's code...; return exports; }
 *
 * where `runtime` is src/codec/go-keywords.ts's KEYWORD_RUNTIME and the validators are exported by
 * definition name. Loading costs about 20 ms per MB of code (parsing), so modules stay small: one per
 * kind and wording, except that the kinds which embed a Pod template share one module, PodSpec being
 * most of each of them (about 450 KB). Lists are left out (nothing decodes a list body; they compile on
 * first use if asked for). `manifest.json` says which module holds which definition.
 *
 * Not part of the server's bundle: only the build loads this module.
 */

const WORDINGS: readonly SchemaWording[] = ['json', 'unstructured'];
/** Kinds reaching this definition share one module per wording. */
const SHARED_BY_WORKLOADS = 'io.k8s.api.core.v1.PodSpec';

/** What the build writes: file name to text, `manifest.json` included. */
export function validatorModules(): Map<string, string> {
  const require = createRequire(import.meta.url);
  const standaloneCode = require('ajv/dist/standalone') as (ajv: unknown, refs: Record<string, string>) => string;
  const kinds = definitionNames()
    .filter(
      (name) =>
        schemaForDefinition(name)
          ?.groupVersionKinds()
          .some((gvk) => !gvk.kind.endsWith('List')) ?? false,
    )
    .sort();
  const files = new Map<string, string>();
  const manifest: ValidatorManifest = { modules: {} };
  for (const wording of WORDINGS) {
    const a = validatorAjv(true);
    const added = new Set<string>();
    const byFile = new Map<string, string[]>();
    for (const name of kinds) {
      if (!addReachableSchemas(a, name, wording, added)) continue;
      const file = `${wording}.${reachable([name], wording).has(SHARED_BY_WORKLOADS) ? 'workloads' : name}.cjs`;
      byFile.set(file, [...(byFile.get(file) ?? []), name]);
    }
    for (const [file, names] of byFile) {
      const refs = Object.fromEntries(names.map((name) => [name, schemaId(name, wording)]));
      files.set(file, moduleText(standaloneCode(a, refs)));
      manifest.modules[file] = { wording, definitions: names, digest: sourceDigest(names, wording) };
    }
  }
  files.set('manifest.json', `${JSON.stringify(manifest, null, 1)}\n`);
  return files;
}

function moduleText(code: string): string {
  return [
    '// Written by the build (src/codec/kind-validator-modules.ts) from schema/openapi-v2.json; do not edit.',
    'module.exports = function (runtime, exports) {',
    code,
    'return exports;',
    '};',
    '',
  ].join('\n');
}

/** Every definition `names` reach in `wording`, themselves included. */
function reachable(names: readonly string[], wording: SchemaWording): Map<string, object> {
  const seen = new Map<string, object>();
  const pending = [...names];
  while (pending.length > 0) {
    const next = pending.pop();
    if (next === undefined || seen.has(next)) continue;
    const generated = definitionSchema(next, wording);
    if (generated === undefined) continue;
    seen.set(next, generated.schema);
    pending.push(...generated.refs);
  }
  return seen;
}

/**
 * A digest of the schemas a module's validators were generated from (every definition they reach, in
 * `wording`): a test compares it with the tree's schemas, so a stale build cannot pass unseen.
 */
export function sourceDigest(names: readonly string[], wording: SchemaWording): string {
  const hash = createHash('sha256');
  const schemas = reachable(names, wording);
  for (const name of [...schemas.keys()].sort()) hash.update(`${name}\n${JSON.stringify(schemas.get(name))}\n`);
  return hash.digest('hex').slice(0, 32);
}
