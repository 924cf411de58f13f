/** CEL equality and ordering of runtime values, for the libraries that compare elements. */
import { isCelList, isCelMap, isCelUint, type CelValue } from '@bufbuild/cel';
import { isReflectMessage } from '@bufbuild/protobuf/reflect';
import { CelEvalError } from './registry.js';

// A CEL int, uint or double as a JS number or bigint (undefined for any other CEL value).
function celNumeric(v: CelValue): number | bigint | undefined {
  if (typeof v === 'bigint' || typeof v === 'number') return v;
  if (isCelUint(v)) return v.value;
  return undefined;
}

/** CEL's heterogeneous equality (numbers compare across int, uint and double). */
export function celEquals(a: CelValue, b: CelValue): boolean {
  const na = celNumeric(a);
  const nb = celNumeric(b);
  if (na !== undefined && nb !== undefined) return na == nb;
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return a === b;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.from(a).equals(Buffer.from(b));
  if (isCelList(a) && isCelList(b)) {
    if (a.size !== b.size) return false;
    const bs = [...b];
    return [...a].every((v, i) => celEquals(v, bs[i]));
  }
  if (isCelMap(a) && isCelMap(b)) {
    if (a.size !== b.size) return false;
    for (const [k, v] of a) {
      if (!b.has(k)) return false;
      if (!celEquals(v, b.get(k) as CelValue)) return false;
    }
    return true;
  }
  if (isReflectMessage(a) && isReflectMessage(b)) return JSON.stringify(a.message, big) === JSON.stringify(b.message, big);
  return false;
}

function big(_k: string, v: unknown): unknown {
  return typeof v === 'bigint' ? String(v) : v;
}

/** CEL ordering (`_<_`) of two values of one orderable type; numbers compare across types. */
export function compareValues(a: CelValue, b: CelValue): number {
  const na = celNumeric(a);
  const nb = celNumeric(b);
  if (na !== undefined && nb !== undefined) return na < nb ? -1 : na > nb ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') {
    const ba = Buffer.from(a);
    const bb = Buffer.from(b);
    return Buffer.compare(ba, bb);
  }
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(Buffer.from(a), Buffer.from(b));
  if (isReflectMessage(a) && isReflectMessage(b)) {
    const ma = a.message as unknown as { seconds: bigint; nanos: number };
    const mb = b.message as unknown as { seconds: bigint; nanos: number };
    if (ma.seconds !== mb.seconds) return ma.seconds < mb.seconds ? -1 : 1;
    return ma.nanos - mb.nanos;
  }
  throw new CelEvalError('no such overload');
}
