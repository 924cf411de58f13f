/**
 * Label selectors (`labelSelector=` query parameter) with the grammar, validation and error texts of
 * k8s.io/apimachinery/pkg/labels: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`,
 * `k>n`, `k<n`, joined by commas. Requirements are ANDed.
 */
import { badRequest } from '../api/errors.js';
import { aggregateText, causeText, goJson, invalidField } from '../validation/field-errors.js';
import { isLabelKey, isLabelValue } from '../validation/string-formats.js';

export type LabelOperator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

/** One requirement; `values` are sorted and deduplicated, as kube's parser keeps them. */
export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

/** Labels of an object; undefined means none. */
export type Labels = Record<string, string> | undefined;

export type LabelMatcher = (labels: Labels) => boolean;

enum Tok {
  Error,
  End,
  ClosedPar,
  Comma,
  DoesNotExist,
  DoubleEquals,
  Equals,
  GreaterThan,
  Identifier,
  In,
  LessThan,
  NotEquals,
  NotIn,
  OpenPar,
}

const STRING_TO_TOKEN: ReadonlyMap<string, Tok> = new Map([
  [')', Tok.ClosedPar],
  [',', Tok.Comma],
  ['!', Tok.DoesNotExist],
  ['==', Tok.DoubleEquals],
  ['=', Tok.Equals],
  ['>', Tok.GreaterThan],
  ['in', Tok.In],
  ['<', Tok.LessThan],
  ['!=', Tok.NotEquals],
  ['notin', Tok.NotIn],
  ['(', Tok.OpenPar],
]);

const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

interface Item {
  tok: Tok;
  lit: string;
}

const isWhitespace = (ch: string): boolean => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
const isSpecial = (ch: string): boolean => '=!(),><'.includes(ch);

/** Splits the selector into tokens exactly as kube's Lexer does. */
function scan(s: string): Item[] {
  const items: Item[] = [];
  let pos = 0;
  for (;;) {
    while (pos < s.length && isWhitespace(s.charAt(pos))) pos++;
    if (pos >= s.length) {
      items.push({ tok: Tok.End, lit: '' });
      return items;
    }
    if (isSpecial(s.charAt(pos))) {
      let buffer = '';
      let last: Item | undefined;
      while (pos < s.length && isSpecial(s.charAt(pos))) {
        buffer += s.charAt(pos);
        pos++;
        const tok = STRING_TO_TOKEN.get(buffer);
        if (tok !== undefined) last = { tok, lit: buffer };
        else if (last !== undefined) {
          pos--;
          break;
        }
      }
      items.push(last ?? { tok: Tok.Error, lit: `error expected: keyword found '${buffer}'` });
      continue;
    }
    let buffer = '';
    while (pos < s.length && !isSpecial(s.charAt(pos)) && !isWhitespace(s.charAt(pos))) {
      buffer += s.charAt(pos);
      pos++;
    }
    items.push({ tok: STRING_TO_TOKEN.get(buffer) ?? Tok.Identifier, lit: buffer });
  }
}

class SelectorSyntaxError extends Error {}

class Parser {
  private position = 0;
  constructor(private readonly items: Item[]) {}

  /** In the value context, `in` and `notin` are ordinary identifiers. */
  private at(offset: number, values: boolean): Item {
    const item = this.items[Math.min(this.position + offset, this.items.length - 1)] ?? { tok: Tok.End, lit: '' };
    if (values && (item.tok === Tok.In || item.tok === Tok.NotIn)) return { tok: Tok.Identifier, lit: item.lit };
    return item;
  }

  private lookahead(values: boolean): Item {
    return this.at(0, values);
  }

  private consume(values: boolean): Item {
    const item = this.at(0, values);
    this.position++;
    return item;
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    for (;;) {
      const { tok, lit } = this.lookahead(true);
      if (tok === Tok.End) return requirements;
      if (tok !== Tok.Identifier && tok !== Tok.DoesNotExist) {
        throw new SelectorSyntaxError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      }
      try {
        requirements.push(this.parseRequirement());
      } catch (err) {
        if (err instanceof SelectorSyntaxError) throw new SelectorSyntaxError(`unable to parse requirement: ${err.message}`);
        throw err;
      }
      const next = this.consume(true);
      if (next.tok === Tok.End) return requirements;
      if (next.tok !== Tok.Comma) throw new SelectorSyntaxError(`found '${next.lit}', expected: ',' or 'end of string'`);
      const after = this.lookahead(true);
      if (after.tok !== Tok.Identifier && after.tok !== Tok.DoesNotExist) {
        throw new SelectorSyntaxError(`found '${after.lit}', expected: identifier after ','`);
      }
    }
  }

  private parseRequirement(): LabelRequirement {
    let { tok, lit } = this.consume(true);
    let operator: LabelOperator | undefined;
    if (tok === Tok.DoesNotExist) {
      operator = '!';
      ({ tok, lit } = this.consume(true));
    }
    if (tok !== Tok.Identifier) throw new SelectorSyntaxError(`found '${lit}', expected: identifier`);
    const key = lit;
    const keyErrs = isLabelKey(key);
    if (keyErrs.length > 0) throw new SelectorSyntaxError(causeText(invalidField('<nil>', key, keyErrs.join('; '))));
    const next = this.lookahead(true).tok;
    if (next === Tok.End || next === Tok.Comma) {
      return newRequirement(key, operator ?? 'exists', []);
    }
    if (operator === '!') return newRequirement(key, '!', []);
    const op = this.parseOperator();
    const values = op === 'in' || op === 'notin' ? this.parseValues() : this.parseExactValue();
    return newRequirement(key, op, [...values].sort());
  }

  private parseOperator(): LabelOperator {
    const { tok, lit } = this.consume(false);
    switch (tok) {
      case Tok.In:
        return 'in';
      case Tok.Equals:
        return '=';
      case Tok.DoubleEquals:
        return '==';
      case Tok.GreaterThan:
        return 'gt';
      case Tok.LessThan:
        return 'lt';
      case Tok.NotIn:
        return 'notin';
      case Tok.NotEquals:
        return '!=';
      default:
        throw new SelectorSyntaxError(`found '${lit}', expected: ${BINARY_OPERATORS}`);
    }
  }

  private parseValues(): Set<string> {
    const open = this.consume(true);
    if (open.tok !== Tok.OpenPar) throw new SelectorSyntaxError(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.lookahead(true);
    if (tok === Tok.Identifier || tok === Tok.Comma) {
      const values = this.parseIdentifiersList();
      if (this.consume(true).tok !== Tok.ClosedPar) throw new SelectorSyntaxError(`found '${lit}', expected: ')'`);
      return values;
    }
    if (tok === Tok.ClosedPar) {
      this.consume(true);
      return new Set(['']);
    }
    throw new SelectorSyntaxError(`found '${lit}', expected: ',', ')' or identifier`);
  }

  private parseIdentifiersList(): Set<string> {
    const values = new Set<string>();
    for (;;) {
      const { tok, lit } = this.consume(true);
      if (tok === Tok.Identifier) {
        values.add(lit);
        const next = this.lookahead(true);
        if (next.tok === Tok.Comma) continue;
        if (next.tok === Tok.ClosedPar) return values;
        throw new SelectorSyntaxError(`found '${next.lit}', expected: ',' or ')'`);
      }
      if (tok === Tok.Comma) {
        if (values.size === 0) values.add('');
        const next = this.lookahead(true).tok;
        if (next === Tok.ClosedPar) {
          values.add('');
          return values;
        }
        if (next === Tok.Comma) values.add('');
        continue;
      }
      throw new SelectorSyntaxError(`found '${lit}', expected: ',', or identifier`);
    }
  }

  private parseExactValue(): Set<string> {
    const next = this.lookahead(true).tok;
    if (next === Tok.End || next === Tok.Comma) return new Set(['']);
    const { tok, lit } = this.consume(true);
    if (tok === Tok.Identifier) return new Set([lit]);
    throw new SelectorSyntaxError(`found '${lit}', expected: identifier`);
  }
}

const INT64 = /^[+-]?[0-9]+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function parseInt64(s: string): bigint | undefined {
  if (!INT64.test(s)) return undefined;
  const n = BigInt(s);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

/** kube's NewRequirement checks: value counts per operator, integer values for gt/lt, label values. */
function newRequirement(key: string, operator: LabelOperator, values: string[]): LabelRequirement {
  const errs: string[] = [];
  const keyErrs = isLabelKey(key);
  if (keyErrs.length > 0) errs.push(causeText(invalidField('key', key, keyErrs.join('; '))));
  if (operator === 'gt' || operator === 'lt') {
    values.forEach((v, i) => {
      if (parseInt64(v) === undefined) {
        errs.push(causeText(invalidField(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer")));
      }
    });
  }
  if ((operator === 'in' || operator === 'notin') && values.length === 0) {
    errs.push(causeText(invalidField('values', goJson(values), "for 'in', 'notin' operators, values set can't be empty")));
  }
  values.forEach((v, i) => {
    const valueErrs = isLabelValue(v);
    if (valueErrs.length > 0) errs.push(causeText(invalidField(`values[${i}][${key}]`, v, valueErrs.join('; '))));
  });
  if (errs.length > 0) throw new SelectorSyntaxError(aggregateText(errs));
  return { key, operator, values };
}

/**
 * Parses a label selector. An empty or all-whitespace selector has no requirements (matches
 * everything). Throws ApiError 400 BadRequest with kube's message on any syntax or validation error.
 */
export function parseLabelSelector(selector: string): LabelRequirement[] {
  try {
    const requirements = new Parser(scan(selector)).parse();
    return requirements.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  } catch (err) {
    if (err instanceof SelectorSyntaxError) throw badRequest(err.message);
    throw err;
  }
}

/** Whether one requirement holds for `labels` (a missing key satisfies `!=`, `notin` and `!`). */
export function requirementMatches(r: LabelRequirement, labels: Labels): boolean {
  const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = has && labels !== undefined ? labels[r.key] : undefined;
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return value !== undefined && r.values.includes(value);
    case 'notin':
    case '!=':
      return value === undefined || !r.values.includes(value);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (value === undefined || r.values.length !== 1) return false;
      const actual = parseInt64(value);
      const bound = parseInt64(r.values[0] ?? '');
      if (actual === undefined || bound === undefined) return false;
      return r.operator === 'gt' ? actual > bound : actual < bound;
    }
  }
}

/** The canonical string form of requirements, as kube's Selector.String() prints it. */
export function labelSelectorString(requirements: readonly LabelRequirement[]): string {
  return requirements
    .map((r) => {
      switch (r.operator) {
        case 'exists':
          return r.key;
        case '!':
          return `!${r.key}`;
        case 'in':
          return `${r.key} in (${r.values.join(',')})`;
        case 'notin':
          return `${r.key} notin (${r.values.join(',')})`;
        case 'gt':
          return `${r.key}>${r.values.join(',')}`;
        case 'lt':
          return `${r.key}<${r.values.join(',')}`;
        default:
          return `${r.key}${r.operator}${r.values.join(',')}`;
      }
    })
    .join(',');
}

/**
 * Compiles a label selector into a matcher; undefined or empty matches every object. Throws
 * ApiError 400 BadRequest (kube's message) when the selector does not parse.
 */
export function compileLabelSelector(selector: string | undefined): LabelMatcher {
  if (selector === undefined || selector === '') return () => true;
  const requirements = parseLabelSelector(selector);
  if (requirements.length === 0) return () => true;
  return (labels) => requirements.every((r) => requirementMatches(r, labels));
}
