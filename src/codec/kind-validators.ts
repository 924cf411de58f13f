import { Ajv, type ValidateFunction } from 'ajv';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { goKeywords, KEYWORD_RUNTIME } from './go-keywords.js';
import { definitionSchema, schemaId, type SchemaWording } from '../schema/ajv-schemas.js';

/**
 * ajv validators of the built-in kinds, one per definition and wording, shared by every request of
 * the process. A validator answers one question: does the value decode into the kind with no type
 * error and no unknown field? It stops at the first problem and says nothing about it; the
 * typed-decode walk words refusals as Go does.
 *
 * Validators come from the modules the build writes (`dist/src/validators/`, one per kind and wording,
 * the kinds embedding a Pod template sharing one: src/codec/kind-validator-modules.ts), loaded on a
 * kind's first use; a definition no module has (lists), or a tree built without them, compiles with
 * ajv on first use instead. Both are the same
 * schemas and keywords, so they accept the same values.
 *
 * Accepted Quantities are rewritten in canonical form ("1000m" is "1"), as the walk stores them; the
 * rewrite is idempotent, so a value the validator refuses part-way is still the walk's to decode.
 */

/** A compiled validator: true when `value` decodes into its kind with nothing to report. */
export type KindValidator = (value: unknown) => boolean;

/**
 * A new ajv instance with Capstan's options and keywords. `source` keeps the generated code, for
 * writing it out as standalone modules.
 */
export function validatorAjv(source = false): Ajv {
  // Union types carry `null` next to each Go type; everything else stays strict. The schemas are
  // generated (strict mode still refuses an unknown keyword); compiled on a request's path, the
  // meta-schema check and ajv's code optimiser, which together double compile time, are left out.
  // Bodies are plain objects from Capstan's parsers (JSON, CBOR, YAML), and no Go field is named as an
  // Object.prototype member, so member reads need no own-property check. Each definition is its own
  // function (no inlined refs): in a server, V8 optimises small functions where it leaves a large one
  // interpreted (a Deployment's validator in the server: 68 µs with both, 41-50 µs without).
  const created = new Ajv({
    strict: true,
    allowUnionTypes: true,
    allErrors: false,
    ownProperties: false,
    inlineRefs: false,
    messages: false,
    validateSchema: false,
    code: { optimize: source, source },
  });
  for (const definition of goKeywords()) created.addKeyword(definition);
  return created;
}

/**
 * Adds to `a` the schema of `name` and of every definition it reaches that `added` does not hold yet
 * (their `$id`s are added to it). False when a definition is missing from the OpenAPI document.
 */
export function addReachableSchemas(a: Ajv, name: string, wording: SchemaWording, added: Set<string>): boolean {
  const pending = [name];
  while (pending.length > 0) {
    const next = pending.pop();
    if (next === undefined) break;
    const id = schemaId(next, wording);
    if (added.has(id)) continue;
    const generated = definitionSchema(next, wording);
    if (generated === undefined) return false;
    a.addSchema(generated.schema);
    added.add(id);
    for (const ref of generated.refs) pending.push(ref);
  }
  return true;
}

/** The file that marks a folder of built modules and says which module holds which definition. */
export const VALIDATOR_MANIFEST = 'manifest.json';

/** What `manifest.json` holds: per module file, its wording, the definitions it exports, a digest of their schemas. */
export interface ValidatorManifest {
  modules: Record<string, { wording: SchemaWording; definitions: string[]; digest: string }>;
}

/** A built module's validators, by definition name. */
type ValidatorModule = Record<string, ValidateFunction | undefined>;

interface BuiltModules {
  dir: string;
  /** `${wording}:${definition}` to module file. */
  fileOf: Map<string, string>;
  loaded: Map<string, ValidatorModule>;
}

const moduleDir = dirname(fileURLToPath(import.meta.url));
const requireBuilt = createRequire(import.meta.url);
let built: BuiltModules | null | undefined;

/** dist/src/validators and its manifest, found from tsc's dist/src/codec/ or from the bundle in dist/src/; null without. */
function builtModules(): BuiltModules | null {
  if (built !== undefined) return built;
  built = null;
  for (const dir of [join(moduleDir, 'validators'), join(dirname(moduleDir), 'validators')]) {
    let manifest: ValidatorManifest;
    try {
      manifest = JSON.parse(readFileSync(join(dir, VALIDATOR_MANIFEST), 'utf8')) as ValidatorManifest;
    } catch {
      continue;
    }
    const fileOf = new Map<string, string>();
    for (const [file, entry] of Object.entries(manifest.modules)) {
      for (const definition of entry.definitions) fileOf.set(`${entry.wording}:${definition}`, file);
    }
    built = { dir, fileOf, loaded: new Map() };
    break;
  }
  return built;
}

/** The built validator of `name` in `wording`, or undefined when no built module has it. */
function builtValidator(name: string, wording: SchemaWording): ValidateFunction | undefined {
  const modules = builtModules();
  const file = modules?.fileOf.get(`${wording}:${name}`);
  if (modules === null || modules === undefined || file === undefined) return undefined;
  let loaded = modules.loaded.get(file);
  if (loaded === undefined) {
    const factory = requireBuilt(join(modules.dir, file)) as (runtime: typeof KEYWORD_RUNTIME, exports: ValidatorModule) => ValidatorModule;
    loaded = factory(KEYWORD_RUNTIME, {});
    modules.loaded.set(file, loaded);
  }
  return loaded[name];
}

let ajv: Ajv | undefined;
const added = new Set<string>();
const validators = new Map<string, KindValidator | null>();

function compiledValidator(name: string, wording: SchemaWording): ValidateFunction | undefined {
  ajv ??= validatorAjv();
  return addReachableSchemas(ajv, name, wording, added) ? ajv.getSchema(schemaId(name, wording)) : undefined;
}

/**
 * The validator of definition `definition` (e.g. `io.k8s.api.apps.v1.Deployment`) in `wording`, or
 * undefined when the OpenAPI document does not have it. Made once per process; later calls return
 * the same function.
 */
export function kindValidator(definition: string, wording: SchemaWording): KindValidator | undefined {
  const id = schemaId(definition, wording);
  const cached = validators.get(id);
  if (cached !== undefined) return cached ?? undefined;
  const validate = builtValidator(definition, wording) ?? compiledValidator(definition, wording);
  const validator: KindValidator | null = validate === undefined ? null : (value) => validate(value);
  validators.set(id, validator);
  return validator ?? undefined;
}

/** The folder of built modules this process loads from, or undefined when there is none (tests read its manifest). */
export function builtValidatorsDir(): string | undefined {
  return builtModules()?.dir;
}

/** Whether `kindValidator(definition, wording)` is a built module's validator rather than one compiled here (for tests). */
export function isBuiltValidator(definition: string, wording: SchemaWording): boolean {
  return builtValidator(definition, wording) !== undefined;
}
