/**
 * How the Kubernetes libraries define their functions for the evaluator: each overload is an
 * implementation that answers `undefined` when the receiver or arguments are not its kind, so that
 * several libraries may share a name (`indexOf` on strings and on lists, `isLessThan` on Quantity
 * and Semver). `buildFuncs` turns them into one evaluator function per name and arity.
 */
import { CelScalar, celFunc, celMethod, type CelFunc, type CelValue } from '@bufbuild/cel';

/** Thrown by an implementation to report an evaluation error with cel-go's wording. */
export class CelEvalError extends Error {}

export type MethodImpl = (recv: CelValue, ...args: CelValue[]) => unknown;
export type FunctionImpl = (...args: CelValue[]) => unknown;

interface Entry {
  member: boolean;
  name: string;
  arity: number;
  impls: ((recv: CelValue | undefined, args: CelValue[]) => unknown)[];
}

const entries = new Map<string, Entry>();

function entry(member: boolean, name: string, arity: number): Entry {
  const key = `${member ? 'm' : 'f'}:${name}/${arity}`;
  let e = entries.get(key);
  if (e === undefined) {
    e = { member, name, arity, impls: [] };
    entries.set(key, e);
  }
  return e;
}

/** Defines an overload of method NAME; IMPL answers undefined when the call is not its kind. */
export function defineMethod(name: string, arity: number, impl: MethodImpl): void {
  entry(true, name, arity).impls.push((recv, args) => impl(recv as CelValue, ...args));
}

/** Defines an overload of global function NAME (`quantity`, `optional.of`). */
export function defineFunction(name: string, arity: number, impl: FunctionImpl): void {
  entry(false, name, arity).impls.push((_recv, args) => impl(...args));
}

function dispatch(e: Entry, recv: CelValue | undefined, args: CelValue[]): unknown {
  for (const impl of e.impls) {
    const r = impl(recv, args);
    if (r !== undefined) return r;
  }
  throw new CelEvalError(`no such overload: ${e.name}`);
}

/** The evaluator functions of every definition. */
export function buildFuncs(): CelFunc[] {
  const DYN = CelScalar.DYN;
  const out: CelFunc[] = [];
  for (const e of entries.values()) {
    const params = Array.from({ length: e.arity }, () => DYN);
    if (e.member) {
      out.push(
        celMethod(e.name, DYN, params, DYN, function (this: CelValue, ...args: CelValue[]) {
          return dispatch(e, this, args) as CelValue;
        }),
      );
    } else {
      out.push(celFunc(e.name, params, DYN, (...args: CelValue[]) => dispatch(e, undefined, args) as CelValue));
    }
  }
  return out;
}
