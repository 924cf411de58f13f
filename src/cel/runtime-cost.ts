/**
 * Runtime cost tracking as cel-go's tracker does it for kube-apiserver: the tree is instrumented
 * (index.ts) so that every variable read, field selection, index and non-constant list or map
 * literal is charged as cel-go's interpreter charges it, and every function call is charged here,
 * once it returned, by kube's library CallCost, the lists and sets extensions' trackers, or
 * cel-go's own rules (string sizes for comparisons, concatenation, regexes...). The evaluation
 * stops once the budget is spent.
 */
import { isCelList, isCelMap, type CelValue } from '@bufbuild/cel';
import { asOptional, isOpaque } from './values.js';
import { SORT_BY_KEYS } from './macros.js';
import { formatRegexSize } from './library/format.js';
import { NOMINAL_COST_FUNCTIONS as NOMINAL } from './nominal-cost.js';

class Exceeded extends Error {}

/** The cost of one evaluation; `RuntimeCost.within` makes it the one calls are charged to. */
export class RuntimeCost {
  static Exceeded = Exceeded;
  private static current: RuntimeCost | undefined;
  cost = 0;
  exceeded = false;
  constructor(readonly budget: number) {}

  /** Runs FN with TRACKER charged for every call. */
  static within<T>(tracker: RuntimeCost, fn: () => T): T {
    const previous = RuntimeCost.current;
    RuntimeCost.current = tracker;
    try {
      return fn();
    } finally {
      RuntimeCost.current = previous;
    }
  }

  /** Charges N to the current evaluation; throws once its budget is exceeded. */
  static charge(n: number): void {
    const t = RuntimeCost.current;
    if (t === undefined) return;
    t.cost += n;
    if (t.cost > t.budget) {
      t.exceeded = true;
      throw new Exceeded('operation cancelled: actual cost limit exceeded');
    }
  }
}

/** cel-go's actualSize: code points of a string, bytes, elements of a list or map, an optional's value; else 1. */
function size(v: CelValue | undefined): number {
  if (typeof v === 'string') return Array.from(v).length;
  if (v instanceof Uint8Array) return v.length;
  const opt = asOptional(v);
  if (opt !== undefined) return opt.present ? size(opt.value) : 1;
  if (isOpaque(v)) return 1;
  if (isCelList(v) || isCelMap(v)) return v.size;
  return 1;
}

/** kube's traversalCost: a tenth of a string's bytes (rounded down), the sum over a list's or map's entries, else 1. */
function traversalCost(v: CelValue | undefined): number {
  if (typeof v === 'string') return Math.floor(Buffer.byteLength(v) * STRING_FACTOR);
  if (v instanceof Uint8Array) return Math.floor(v.length * STRING_FACTOR);
  if (isCelList(v)) {
    let cost = 0;
    for (const e of v) cost += traversalCost(e);
    return cost;
  }
  if (isCelMap(v) && asOptional(v) === undefined && !isOpaque(v)) {
    let cost = 0;
    for (const [k, e] of v.entries()) cost += traversalCost(k) + traversalCost(e);
    return cost;
  }
  return 1;
}

/** kube's traversal cost factor for strings: 0.1 per character. */
const STRING_FACTOR = 0.1;
const REGEX_FACTOR = 0.25;
const tenth = (n: number): number => Math.ceil(n * STRING_FACTOR);
const isText = (v: CelValue | undefined): boolean => typeof v === 'string' || v instanceof Uint8Array;

/** The lists extension's charge for a call allocating a list of N (times FACTOR): the call, the list, the elements. */
const allocatingList = (factor: number, n: number): number => Math.floor(n * factor) + 1 + 10;

function selfCompare(l: CelValue | undefined): number {
  if (!isCelList(l)) return 1;
  const n = l.size;
  if (n === 0) return allocatingList(2, 0);
  return allocatingList(isText(l.get(0)) ? 2 + STRING_FACTOR : 2, n * n);
}

/**
 * What cel-go charges for a call of NAME (kube's library CallCost, the lists and sets extensions'
 * trackers, then cel-go's own rules), given its receiver, arguments and RESULT. Capstan's helper
 * functions cost what the shapes they stand for cost in cel-go (`@charge` carries the amount).
 */
export function callCost(name: string, target: CelValue | undefined, args: CelValue[], result?: CelValue, dynamic = false): number {
  // cel-go's arguments: the receiver first.
  const a = target === undefined ? args : [target, ...args];
  if (NOMINAL.has(name)) return 1;
  const byLibrary = kubeCallCost(name, a, result);
  if (byLibrary !== undefined) return byLibrary;
  // A call dispatched at runtime has no overload the extensions' trackers or cel-go's rules know.
  if (dynamic) return 1;
  switch (name) {
    case '@charge':
      return args.length === 2 ? Number(args[1]) : 1;
    case '@pairs':
    case '@emptyMap':
    case '@not_strictly_false':
    case '_[_]':
    case '@optList':
    case '@optMap':
    case '_&&_':
    case '_||_':
    case '_?_:_':
      return 0;
    // The lists and sets extensions.
    case 'slice':
    case 'reverse':
    case 'lists.range':
      return isCelList(result) ? allocatingList(1, size(result)) : 1;
    case 'flatten':
      return isCelList(a[0]) ? allocatingList(a.length === 2 ? Number(a[1]) : 1, size(a[0])) : 1;
    case 'distinct':
    case 'sort':
      return isCelList(a[0]) ? selfCompare(a[0]) : 1;
    case SORT_BY_KEYS:
      return selfCompare(a[1]);
    case 'sets.contains':
    case 'sets.intersects':
      return 1 + Math.floor(size(a[0]) * size(a[1]));
    case 'sets.equivalent':
      return 1 + Math.floor(size(a[0]) * size(a[1]) * 2);
    // cel-go's own functions.
    case 'startsWith':
    case 'endsWith':
    case 'strings.quote':
      return isText(a[0]) ? tenth(size(a[0])) : 1;
    case 'format':
      return typeof target === 'string' ? tenth(size(a[0])) : 1;
    case 'bytes':
      return typeof a[0] === 'string' ? tenth(size(a[0])) : 1;
    case 'string':
      return a[0] instanceof Uint8Array ? tenth(size(a[0])) : 1;
    case '@in':
      return isCelList(a[1]) ? size(a[1]) : 1;
    case '_<_':
    case '_<=_':
    case '_>_':
    case '_>=_':
      return isText(a[0]) && isText(a[1]) ? tenth(Math.min(size(a[0]), size(a[1]))) : 1;
    case '_==_':
    case '_!=_':
      return tenth(Math.min(size(a[0]), size(a[1])));
    case '_+_':
      return isText(a[0]) && isText(a[1]) ? tenth(size(a[0]) + size(a[1])) : 1;
    case 'matches':
      return a.length === 2 && isText(a[0]) ? Math.ceil((1 + size(a[0])) * STRING_FACTOR) * Math.ceil(size(a[1]) * REGEX_FACTOR) : 1;
    case 'contains':
      return isText(a[0]) ? tenth(size(a[0])) * tenth(size(a[1])) : 1;
    default:
      return 1;
  }
}

/** kube's library CallCost, by function name (A: the receiver first), when it has a rule for the call. */
function kubeCallCost(name: string, a: CelValue[], result: CelValue | undefined): number | undefined {
  switch (name) {
    case 'check':
      return 350_000;
    case 'isSorted':
    case 'sum':
    case 'max':
    case 'min':
      return a.length > 0 ? traversalCost(a[0]) : 0;
    case 'indexOf':
    case 'lastIndexOf':
      return a.length > 0 ? traversalCost(a[0]) : 0;
    case 'url':
    case 'lowerAscii':
    case 'upperAscii':
    case 'substring':
    case 'trim':
    case 'jsonpatch.escapeKey':
    case 'cidr':
    case 'isIP':
    case 'isCIDR':
    case 'quantity':
    case 'isQuantity':
    case 'semver':
    case 'isSemver':
      return tenth(size(a[0]));
    case 'ip':
      return isText(a[0]) ? tenth(size(a[0])) : 1;
    case 'replace':
    case 'split':
    case 'ip.isCanonical':
      return Math.ceil(size(a[0]) * 2 * STRING_FACTOR);
    case 'join':
      return Math.ceil(size(result) * 2 * STRING_FACTOR);
    case 'find':
    case 'findAll':
      return a.length >= 2 ? Math.ceil((1 + size(a[0])) * STRING_FACTOR) * Math.ceil(size(a[1]) * REGEX_FACTOR) : undefined;
    case 'validate': {
      const regexSize = formatRegexSize(a[0]);
      if (regexSize === undefined || a.length < 2) return undefined;
      return Math.ceil((1 + size(a[1])) * STRING_FACTOR) * Math.ceil(regexSize * REGEX_FACTOR);
    }
    case 'containsIP':
    case 'containsCIDR': {
      const cidr = size(a[0]);
      let cost = tenth(cidr + cidr);
      if (name === 'containsCIDR') cost += tenth(cidr) + 1;
      if (typeof a[1] === 'string') cost += tenth(size(a[1]));
      return cost;
    }
    default:
      return undefined;
  }
}
