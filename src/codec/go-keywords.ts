import { _, Name, type CodeKeywordDefinition, type KeywordCxt } from 'ajv';
import { base64ErrorOffset } from './go-base64.js';
import { goTimeError } from './go-time.js';
import { canonicalQuantity } from '../api/quantity.js';
import { parseQuantityText } from '../api/quantity-grammar.js';
import { BYTES_KEYWORD, QUANTITY_KEYWORD, TIME_KEYWORD } from '../schema/ajv-schemas.js';

/**
 * The three ajv keywords of the built-in kinds' schemas (src/schema/ajv-schemas.ts), which run
 * Capstan's Go-exact parsers: a Quantity, a Time or MicroTime, a base64 `[]byte`. Each is a code
 * keyword calling one function of `KEYWORD_RUNTIME`, so the same definitions serve validators compiled
 * in the process and validators written out as standalone code at build time
 * (src/codec/kind-validator-modules.ts), which receive that object as `runtime`.
 */

/** Go's Quantity decoder: a number (by its JavaScript text) or a string the parser accepts; an accepted value is stored in canonical form. */
function validQuantity(data: unknown, parentData: unknown, parentDataProperty: string | number | undefined): boolean {
  if (data === null) return true;
  let text: string;
  if (typeof data === 'number') text = String(data);
  else if (typeof data === 'string') text = data;
  else return false;
  if (typeof parseQuantityText(text.trim()) === 'string') return false;
  if (parentData !== undefined && parentData !== null && parentDataProperty !== undefined) {
    (parentData as Record<string | number, unknown>)[parentDataProperty] = canonicalQuantity(text);
  }
  return true;
}

function validTime(data: unknown): boolean {
  return data === null || (typeof data === 'string' && goTimeError(data) === undefined);
}

function validBytes(data: unknown): boolean {
  return data === null || (typeof data === 'string' && base64ErrorOffset(data) < 0);
}

/** What generated validator code calls, by these names. */
export const KEYWORD_RUNTIME = { validQuantity, validTime, validBytes } as const;

type RuntimeName = keyof typeof KEYWORD_RUNTIME;

function keyword(name: string, fn: RuntimeName, passSlot: boolean): CodeKeywordDefinition {
  return {
    keyword: name,
    schemaType: 'boolean',
    code(cxt: KeywordCxt) {
      // In the process the value is the function itself; in standalone code, `runtime.<fn>`.
      const ref = cxt.gen.scopeValue('keyword', { ref: KEYWORD_RUNTIME[fn], code: _`runtime.${new Name(fn)}` });
      const { data, it } = cxt;
      cxt.fail(passSlot ? _`!${ref}(${data}, ${it.parentData}, ${it.parentDataProperty})` : _`!${ref}(${data})`);
    },
  };
}

/** The keyword definitions, for `ajv.addKeyword`. */
export function goKeywords(): CodeKeywordDefinition[] {
  return [keyword(QUANTITY_KEYWORD, 'validQuantity', true), keyword(TIME_KEYWORD, 'validTime', false), keyword(BYTES_KEYWORD, 'validBytes', false)];
}
