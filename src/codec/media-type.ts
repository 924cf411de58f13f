/** Parses `Accept` and `Content-Type` header values into media types with parameters. */
export interface MediaType {
  /** `type/subtype`, lower case. */
  type: string;
  params: Record<string, string>;
  /** Quality, 0..1 (1 when absent). */
  q: number;
}

/** Parses one media type (`application/json;as=Table;g=meta.k8s.io;v=v1`). */
export function parseMediaType(value: string): MediaType {
  const [head = '', ...paramParts] = value.split(';');
  const params: Record<string, string> = {};
  let q = 1;
  for (const p of paramParts) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    const k = p.slice(0, eq).trim().toLowerCase();
    let v = p.slice(eq + 1).trim();
    if (v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
    if (k === 'q') {
      const n = Number(v);
      q = Number.isFinite(n) ? Math.min(Math.max(n, 0), 1) : 1;
    } else params[k] = v;
  }
  return { type: head.trim().toLowerCase(), params, q };
}

/** Parses an Accept header into media types, highest quality first (stable for equal quality). */
export function parseAccept(header: string | undefined): MediaType[] {
  if (!header || header.trim() === '') return [{ type: '*/*', params: {}, q: 1 }];
  return header
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map(parseMediaType)
    .map((m, i) => ({ m, i }))
    .filter(({ m }) => m.q > 0)
    .sort((a, b) => b.m.q - a.m.q || a.i - b.i)
    .map(({ m }) => m);
}
