/**
 * Equality with kube's list semantics: lists declared `x-kubernetes-list-type: set` or `map` are
 * equal when they hold the same elements in any order (values from toCelInput carry the mark);
 * everything else is CEL's standard equality.
 */
import { CelScalar, celEnv, celFunc, isCelList, type CelFunc, type CelList, type CelValue } from '@bufbuild/cel';
import { unorderedLists } from '../values.js';

function underlying(l: CelList): unknown[] | undefined {
  const arr = (l as unknown as { _array?: unknown })._array;
  return Array.isArray(arr) ? arr : undefined;
}

function isUnordered(v: CelValue): v is CelList {
  if (!isCelList(v)) return false;
  const arr = underlying(v);
  return arr !== undefined && unorderedLists.has(arr);
}

/** `_==_` and `_!=_` replacing the standard ones (same overload ids). */
export function equalityOverrides(): CelFunc[] {
  const std = celEnv().funcs.find('_==_');
  const stdEquals = (a: CelValue, b: CelValue): boolean => std?.call(0, undefined, [a, b]) === true;
  const equals = (a: CelValue, b: CelValue): boolean => {
    if ((isUnordered(a) || isUnordered(b)) && isCelList(a) && isCelList(b)) {
      if (a.size !== b.size) return false;
      const bs = [...b];
      const used = new Array<boolean>(bs.length).fill(false);
      for (const x of a) {
        const i = bs.findIndex((y, j) => !used[j] && equals(x, y));
        if (i < 0) return false;
        used[i] = true;
      }
      return true;
    }
    return stdEquals(a, b);
  };
  const DYN = CelScalar.DYN;
  return [celFunc('_==_', [DYN, DYN], CelScalar.BOOL, equals), celFunc('_!=_', [DYN, DYN], CelScalar.BOOL, (a, b) => !equals(a, b))];
}
