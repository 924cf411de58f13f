/**
 * List concatenation (`_+_` on two lists) in amortized constant time per appended element, where
 * @bufbuild/cel nests a wrapper per `+`. The `map` and `filter` macros append one element per step
 * (`@result + [x]`), so over a list of 20,000 elements the nested wrappers made each read walk 20,000
 * levels and overflowed the stack. Here a concatenation copies both lists into one array, except when
 * the left list is the newest list over its array: then the right list's elements are pushed onto that
 * array and the new list sees them, while the left list keeps its own size, so no list ever changes.
 */
import { CelScalar, celFunc, listType, type CelFunc, type CelList, type CelValue } from '@bufbuild/cel';

/** The marker @bufbuild/cel recognises lists by (isCelList). */
const CEL_LIST = Symbol.for('@bufbuild/cel/list');

class AppendedList implements Iterable<CelValue> {
  readonly [CEL_LIST] = {};

  constructor(
    readonly items: CelValue[],
    readonly size: number,
  ) {}

  get(index: number): CelValue | undefined {
    return index >= 0 && index < this.size ? this.items[index] : undefined;
  }

  *values(): IterableIterator<CelValue> {
    for (let i = 0; i < this.size; i++) yield this.items[i];
  }

  [Symbol.iterator](): IterableIterator<CelValue> {
    return this.values();
  }
}

function concat(a: CelList, b: CelList): CelList {
  if (a instanceof AppendedList && a.items.length === a.size) {
    for (const v of b) a.items.push(v);
    return new AppendedList(a.items, a.items.length) as unknown as CelList;
  }
  const items = [...a, ...b];
  return new AppendedList(items, items.length) as unknown as CelList;
}

/** The `_+_` overload for two lists, replacing @bufbuild/cel's. */
export const listConcatOverride: CelFunc[] = [
  celFunc('_+_', [listType(CelScalar.DYN), listType(CelScalar.DYN)], listType(CelScalar.DYN), (a: CelList, b: CelList) => concat(a, b)),
];
