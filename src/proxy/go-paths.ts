/**
 * Go's path and URL-path rules that kube's proxy applies to the path it forwards, so that the path a
 * backend sees and the `X-Forwarded-Uri` it is told are the ones kube-apiserver produces.
 */

/** Go's `path.Clean`: one slash between elements, `.` dropped, `..` eats its parent (never above a root). */
export function cleanPath(p: string): string {
  if (p === '') return '.';
  const rooted = p.startsWith('/');
  const out: string[] = [];
  for (const element of p.split('/')) {
    if (element === '' || element === '.') continue;
    if (element === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!rooted) out.push('..');
      continue;
    }
    out.push(element);
  }
  const joined = out.join('/');
  if (rooted) return `/${joined}`;
  return joined === '' ? '.' : joined;
}

/** Go's `path.Join`: the non-empty elements joined by `/` and cleaned; '' when all are empty. */
export function joinPath(...elements: string[]): string {
  const present = elements.filter((e) => e !== '');
  return present.length === 0 ? '' : cleanPath(present.join('/'));
}

/** apimachinery's `JoinPreservingTrailingSlash`: `joinPath`, keeping the last non-empty element's trailing slash. */
export function joinPreservingTrailingSlash(...elements: string[]): string {
  let result = joinPath(...elements);
  const last = [...elements].reverse().find((e) => e !== '');
  if (last !== undefined && last.endsWith('/') && !result.endsWith('/')) result += '/';
  return result;
}

/** Bytes Go's `url.URL.EscapedPath` leaves as they are in a path (RFC 3986 unreserved and sub-delimiters it allows). */
const PATH_SAFE = /[A-Za-z0-9\-_.~$&+,/:;=@]/;

/** Go's escaping of a URL path (`url.URL{Path: p}.EscapedPath()`): every other byte of its UTF-8 as `%XX`. */
export function escapePath(p: string): string {
  let out = '';
  for (const ch of p) {
    if (ch.length === 1 && PATH_SAFE.test(ch)) {
      out += ch;
      continue;
    }
    for (const byte of Buffer.from(ch, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
