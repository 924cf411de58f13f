/**
 * kube's URL library: `url(string)` (an absolute URI or absolute path, as Go's
 * url.ParseRequestURI accepts), `isURL`, and the getters `getScheme`, `getHost`, `getHostname`,
 * `getPort`, `getEscapedPath`, `getQuery`.
 */
import { celList, celMap, type CelValue } from '@bufbuild/cel';
import { asOpaque, opaqueValue } from '../values.js';
import { CelEvalError, defineFunction, defineMethod } from './registry.js';

const TYPE = 'kubernetes.URL';

interface ParsedURL {
  scheme: string;
  host: string;
  path: string;
  rawQuery: string;
}

/** Go's url.ParseRequestURI then url.Parse, reduced to the parts the getters read; a string is the error. */
function parseURL(s: string): ParsedURL | string {
  const invalid = (why: string): string => `parse ${JSON.stringify(s)}: ${why}`;
  if (s === '') return invalid('empty url');
  if (/[\x00-\x1f\x7f]/.test(s)) return invalid('net/url: invalid control character in URL');
  const noFragment = s.split('#')[0];
  let rest = noFragment;
  let scheme = '';
  const sm = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(rest);
  if (sm !== null) {
    scheme = sm[1].toLowerCase();
    rest = rest.slice(sm[0].length);
  } else if (/^[^/]*:/.test(rest) && !rest.startsWith('/')) return invalid('first path segment in URL cannot contain colon');
  if (scheme === '' && !rest.startsWith('/')) return invalid('invalid URI for request');
  let rawQuery = '';
  const q = rest.indexOf('?');
  if (q >= 0) {
    rawQuery = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  let host = '';
  if (rest.startsWith('//')) {
    const end = rest.indexOf('/', 2);
    const authority = end < 0 ? rest.slice(2) : rest.slice(2, end);
    rest = end < 0 ? '' : rest.slice(end);
    const at = authority.lastIndexOf('@');
    host = at >= 0 ? authority.slice(at + 1) : authority;
    if (/^\[/.test(host) && !/^\[[0-9a-fA-F:.%]+\](:\d*)?$/.test(host)) return invalid(`invalid host`);
    const port = /:([^:\]]*)$/.exec(host);
    if (port !== null && !host.startsWith('[') && host.split(':').length > 2)
      return invalid(`invalid port ${JSON.stringify(`:${host.split(':').pop()}`)} after host`);
    if (port !== null && !/^\d*$/.test(port[1])) return invalid(`invalid port ${JSON.stringify(`:${port[1]}`)} after host`);
  } else if (scheme !== '' && !rest.startsWith('/') && rest !== '') {
    // An opaque URI (mailto:x): ParseRequestURI accepts it; no host or path.
    return { scheme, host: '', path: '', rawQuery };
  }
  return { scheme, host, path: rest, rawQuery };
}

function hostname(host: string): string {
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']'));
  const colon = host.lastIndexOf(':');
  return colon >= 0 ? host.slice(0, colon) : host;
}

function port(host: string): string {
  const m = host.startsWith('[') ? /\]:(\d*)$/.exec(host) : /:(\d*)$/.exec(host);
  return m === null ? '' : m[1];
}

function queryMap(raw: string): Map<string, CelValue> {
  const out = new Map<string, string[]>();
  for (const part of raw.split('&')) {
    if (part === '' || part.includes(';')) continue;
    const eq = part.indexOf('=');
    const decode = (x: string): string | undefined => {
      try {
        return decodeURIComponent(x.replace(/\+/g, ' '));
      } catch {
        return undefined;
      }
    };
    const k = decode(eq < 0 ? part : part.slice(0, eq));
    const v = decode(eq < 0 ? '' : part.slice(eq + 1));
    if (k === undefined || v === undefined) continue;
    out.set(k, [...(out.get(k) ?? []), v]);
  }
  return new Map([...out].map(([k, v]) => [k, celList(v)]));
}

defineFunction('url', 1, (s) => {
  if (typeof s !== 'string') return undefined;
  const u = parseURL(s);
  if (typeof u === 'string') throw new CelEvalError(`URL parse error during conversion from string: ${u}`);
  return opaqueValue(TYPE, s, u);
});
defineFunction('isURL', 1, (s) => (typeof s === 'string' ? typeof parseURL(s) !== 'string' : undefined));
const getter = (name: string, get: (u: ParsedURL) => unknown): void =>
  defineMethod(name, 0, (r) => {
    const u = asOpaque<ParsedURL>(r, TYPE);
    return u === undefined ? undefined : get(u);
  });
getter('getScheme', (u) => u.scheme);
getter('getHost', (u) => u.host);
getter('getHostname', (u) => hostname(u.host));
getter('getPort', (u) => port(u.host));
getter('getEscapedPath', (u) => u.path);
getter('getQuery', (u) => celMap(queryMap(u.rawQuery)));
