/**
 * Runtime cost tracking as cel-go's tracker does it for kube-apiserver: every function call and
 * every comprehension step is charged (string and list functions by the size of their operands,
 * as kube's library cost estimator charges them); the evaluation stops once the budget is spent.
 */
import { isCelList, isCelMap, type CelValue } from '@bufbuild/cel';

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

function size(v: CelValue | undefined): number {
  if (typeof v === 'string') return v.length;
  if (v instanceof Uint8Array) return v.length;
  if (isCelList(v) || isCelMap(v)) return v.size;
  return 1;
}

/** kube's traversal cost factor for strings: 0.1 per character. */
const STRING_FACTOR = 0.1;

/** The runtime cost of calling NAME on TARGET with ARGS, after kube's library cost estimator. */
export function callCost(name: string, target: CelValue | undefined, args: CelValue[]): number {
  const recv = target ?? args[0];
  switch (name) {
    case 'contains':
    case 'startsWith':
    case 'endsWith':
    case 'lowerAscii':
    case 'upperAscii':
    case 'trim':
    case 'charAt':
    case 'indexOf':
    case 'lastIndexOf':
    case 'substring':
    case 'replace':
    case 'split':
    case 'string':
    case 'quote':
    case 'strings.quote':
    case '_+_':
    case '_==_':
    case '_!=_':
    case '_<_':
    case '_<=_':
    case '_>_':
    case '_>=_':
      if (typeof recv === 'string' || recv instanceof Uint8Array)
        return 1 + Math.ceil((size(recv) + (args.length > (target === undefined ? 1 : 0) ? size(args[target === undefined ? 1 : 0]) : 0)) * STRING_FACTOR);
      if (isCelList(recv) || isCelMap(recv)) return 1 + size(recv);
      return 1;
    case 'matches':
    case 'find':
    case 'findAll':
      return 1 + Math.ceil(size(recv) * STRING_FACTOR * Math.max(1, size(args[target === undefined ? 1 : 0]) * STRING_FACTOR));
    case 'isSorted':
    case 'sum':
    case 'min':
    case 'max':
    case 'join':
    case 'distinct':
    case 'reverse':
    case 'flatten':
    case 'sets.contains':
    case 'sets.equivalent':
    case 'sets.intersects':
      return 1 + size(recv) + (name.startsWith('sets.') ? size(args[1]) : 0);
    case 'sort':
      return 1 + Math.ceil(size(recv) * Math.log2(Math.max(2, size(recv))));
    case '@in':
      return isCelList(args[1]) ? 1 + size(args[1]) : 1;
    default:
      return 1;
  }
}

/** Lists and maps do not report their size to every caller; one step of a comprehension costs 1. */
export function stepCost(): number {
  return 1;
}
