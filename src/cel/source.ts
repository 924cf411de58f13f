/**
 * Source handling around the parser: the optional syntax of cel-go's optional library (`a.?b`,
 * `a[?k]`, `[?e]`, `{?k: v}`), which the parser does not read, rewritten into calls the evaluator
 * knows (`a.__opt_select__('b')`, `a.__opt_index__(k)`) or the tree rewrite turns back into optional
 * elements and entries (`[__opt_elem__(e)]`, `{__opt_key__(k): v}`), with a map back to the original offsets; and
 * cel-go's rendering of an issue (`ERROR: <input>:1:5: message` with the source line and a caret).
 */

export interface RewrittenSource {
  text: string;
  /** Offset in the original source of each offset of `text`. */
  original: (offset: number) => number;
}

export const OPT_SELECT = '__opt_select__';
export const OPT_INDEX = '__opt_index__';
/** Marks an optional list element (`[?e]`) and map key (`{?k: v}`) until the tree rewrite reads them. */
export const OPT_ELEM = '__opt_elem__';
export const OPT_KEY = '__opt_key__';
/** The calls the tree rewrite makes of list and map literals with optional elements or entries. */
export const OPT_LIST = '@optList';
export const OPT_MAP = '@optMap';

/** Rewrites the optional syntax outside string literals; other text is kept byte for byte. */
export function rewriteOptionalSyntax(src: string): RewrittenSource {
  if (!src.includes('?')) return { text: src, original: (o) => o };
  let out = '';
  const origin: number[] = [];
  const emit = (s: string, at: number): void => {
    for (let k = 0; k < s.length; k++) origin.push(at);
    out += s;
  };
  // One frame per open bracket: what closes it, whether it is a list or map literal, and whether an
  // optional element or key opened with `OPT_ELEM(` / `OPT_KEY(` waits for its `)`.
  const frames: { closer: string; literal: 'list' | 'map' | undefined; pending: boolean }[] = [];
  const closePending = (at: number): void => {
    const top = frames[frames.length - 1];
    if (top?.pending) {
      emit(')', at);
      top.pending = false;
    }
  };
  let i = 0;
  let prevSignificant = '';
  while (i < src.length) {
    const c = src[i];
    if (c === '"' || c === "'") {
      const start = i;
      const triple = src.startsWith(c.repeat(3), i);
      const quote = triple ? c.repeat(3) : c;
      const raw = i > 0 && /[rR]/.test(src[i - 1]);
      i += quote.length;
      while (i < src.length && !src.startsWith(quote, i)) i += src[i] === '\\' && !raw ? 2 : 1;
      i = Math.min(src.length, i + quote.length);
      for (let k = start; k < i; k++) emit(src[k], k);
      prevSignificant = c;
      continue;
    }
    const ident = /^\.\?\s*([A-Za-z_][A-Za-z0-9_]*)/.exec(src.slice(i));
    if (ident !== null) {
      emit(`.${OPT_SELECT}('${ident[1]}')`, i);
      i += ident[0].length;
      prevSignificant = ')';
      continue;
    }
    const top = frames[frames.length - 1];
    if (c === '?' && top?.literal !== undefined && (prevSignificant === '[' || prevSignificant === '{' || prevSignificant === ',')) {
      emit(top.literal === 'list' ? `${OPT_ELEM}(` : `${OPT_KEY}(`, i);
      top.pending = true;
      i++;
      prevSignificant = '(';
      continue;
    }
    if (c === '[') {
      const optIndex = /^\[\s*\?/.exec(src.slice(i));
      const postfix = /[A-Za-z0-9_)\]}"']/.test(prevSignificant);
      if (optIndex !== null && postfix) {
        emit(`.${OPT_INDEX}(`, i);
        i += optIndex[0].length;
        frames.push({ closer: ')', literal: undefined, pending: false });
        prevSignificant = '(';
        continue;
      }
      frames.push({ closer: ']', literal: postfix ? undefined : 'list', pending: false });
    } else if (c === '{') {
      frames.push({ closer: '}', literal: /[A-Za-z0-9_]/.test(prevSignificant) ? undefined : 'map', pending: false });
    } else if (c === '(') {
      frames.push({ closer: ')', literal: undefined, pending: false });
    } else if (c === ',' || (c === ':' && top?.literal === 'map')) {
      closePending(i);
    } else if (c === ']' || c === '}' || c === ')') {
      closePending(i);
      const frame = frames.pop();
      emit(frame?.closer ?? c, i);
      i++;
      prevSignificant = c;
      continue;
    }
    emit(c, i);
    if (!/\s/.test(c)) prevSignificant = c;
    i++;
  }
  return { text: out, original: (o) => (o < origin.length ? origin[o] : src.length) };
}

/**
 * The offset cel-go reports for the node at OFFSET of SRC: a member call (`a.f(x)`) is at its open
 * parenthesis in cel-go and at the dot in the parser used here; other nodes are where they are.
 */
export function celGoOffset(src: string, offset: number): number {
  // cel-go places a call (and what a `has(...)` macro expands to) at its opening parenthesis.
  const call = /^(?:\.\s*[A-Za-z_][A-Za-z0-9_]*|has)\s*\(/.exec(src.slice(offset));
  return call === null ? offset : offset + call[0].length - 1;
}

/** cel-go's rendering of one issue at OFFSET of SRC. */
export function formatIssue(src: string, offset: number, message: string): string {
  const before = src.slice(0, Math.max(0, offset));
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const col = offset - lineStart;
  const lineText = src.split('\n')[line - 1] ?? '';
  return `ERROR: <input>:${line}:${col + 1}: ${message}\n | ${lineText}\n | ${'.'.repeat(col)}^`;
}
