import { Ajv, type ValidateFunction } from 'ajv';
import { base64ErrorOffset } from './go-base64.js';
import { goTimeError } from './go-time.js';
import { canonicalQuantity } from '../api/quantity.js';
import { parseQuantityText } from '../api/quantity-grammar.js';
import { BYTES_KEYWORD, definitionSchema, QUANTITY_KEYWORD, schemaId, TIME_KEYWORD, type SchemaWording } from '../schema/ajv-schemas.js';

/**
 * ajv validators of the built-in kinds, one per definition and wording, compiled on first use and
 * shared by every request of the process. A validator answers one question: does the value decode into
 * the kind with no type error and no unknown field? It stops at the first problem and says nothing
 * about it; the typed-decode walk words refusals as Go does.
 *
 * Accepted Quantities are rewritten in canonical form ("1000m" is "1"), as the walk stores them; the
 * rewrite is idempotent, so a value the validator refuses part-way is still the walk's to decode.
 */

/** A compiled validator: true when `value` decodes into its kind with nothing to report. */
export type KindValidator = (value: unknown) => boolean;

/** Where ajv says a value sits, so a keyword can replace it. */
interface ValueSlot {
  parentData: object;
  parentDataProperty: string | number;
}

/** Go's Quantity decoder: a number (by its JavaScript text) or a string the parser accepts. */
function validQuantity(data: unknown, slot?: ValueSlot): boolean {
  if (data === null) return true;
  let text: string;
  if (typeof data === 'number') text = String(data);
  else if (typeof data === 'string') text = data;
  else return false;
  if (typeof parseQuantityText(text.trim()) === 'string') return false;
  if (slot !== undefined) (slot.parentData as Record<string | number, unknown>)[slot.parentDataProperty] = canonicalQuantity(text);
  return true;
}

function validTime(data: unknown): boolean {
  return data === null || (typeof data === 'string' && goTimeError(data) === undefined);
}

function validBytes(data: unknown): boolean {
  return data === null || (typeof data === 'string' && base64ErrorOffset(data) < 0);
}

let ajv: Ajv | undefined;

function instance(): Ajv {
  if (ajv !== undefined) return ajv;
  // Union types carry `null` next to each Go type; everything else stays strict. The schemas are
  // generated (strict mode still refuses an unknown keyword) and compile on a request's path, so the
  // meta-schema check and ajv's code optimiser, which together double compile time, are left out.
  const created = new Ajv({
    strict: true,
    allowUnionTypes: true,
    allErrors: false,
    ownProperties: true,
    messages: false,
    validateSchema: false,
    code: { optimize: false },
  });
  created.addKeyword({ keyword: QUANTITY_KEYWORD, schemaType: 'boolean', schema: false, modifying: true, errors: false, validate: validQuantity });
  created.addKeyword({ keyword: TIME_KEYWORD, schemaType: 'boolean', schema: false, errors: false, validate: validTime });
  created.addKeyword({ keyword: BYTES_KEYWORD, schemaType: 'boolean', schema: false, errors: false, validate: validBytes });
  ajv = created;
  return created;
}

/** Adds the schema of `name` and of every definition it reaches, each once per process. */
function addReachable(a: Ajv, name: string, wording: SchemaWording): boolean {
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

const added = new Set<string>();
const validators = new Map<string, KindValidator | null>();

/**
 * The validator of definition `definition` (e.g. `io.k8s.api.apps.v1.Deployment`) in `wording`, or
 * undefined when the OpenAPI document does not have it. Compiled once per process; later calls return
 * the same function.
 */
export function kindValidator(definition: string, wording: SchemaWording): KindValidator | undefined {
  const id = schemaId(definition, wording);
  const cached = validators.get(id);
  if (cached !== undefined) return cached ?? undefined;
  const a = instance();
  let validate: ValidateFunction | undefined;
  if (addReachable(a, definition, wording)) validate = a.getSchema(id);
  const validator: KindValidator | null = validate === undefined ? null : (value) => validate(value);
  validators.set(id, validator);
  return validator ?? undefined;
}
