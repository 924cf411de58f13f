import { decodePath } from '../api/request-info.js';
import { escapePath, joinPath } from './go-paths.js';

/**
 * The `Location` of a backend's redirect as kube's proxy transport rewrites it (apimachinery
 * proxy.Transport.rewriteURL with the empty scheme and host kube-apiserver gives it): a URL that
 * names another host, or a relative path, is passed on as it is; one that names the backend
 * (`backendHost`) loses its scheme and host, one that names the host the client asked for
 * (`requestHost`) keeps them; either way its absolute path is put under `pathPrepend` (the API path
 * of the proxy, `/api/v1/namespaces/NS/pods/NAME/proxy`) unless it is already there.
 */
export function rewriteLocation(location: string, backendHost: string, requestHost: string, pathPrepend: string): string {
  const schemeMatch = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(location);
  const scheme = schemeMatch === null ? '' : schemeMatch[1];
  let rest = location.slice(schemeMatch === null ? 0 : schemeMatch[0].length);
  let fragment = '';
  const hash = rest.indexOf('#');
  if (hash >= 0) {
    fragment = rest.slice(hash);
    rest = rest.slice(0, hash);
  }
  let query = '';
  const q = rest.indexOf('?');
  if (q >= 0) {
    query = rest.slice(q);
    rest = rest.slice(0, q);
  }
  let host = '';
  if (rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2);
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    host = authority.slice(authority.lastIndexOf('@') + 1);
    rest = slash < 0 ? '' : rest.slice(slash);
  }
  const path = decodePath(rest);
  const differentHost = host !== '' && host !== backendHost && host !== requestHost;
  if (path === undefined || differentHost || !path.startsWith('/')) return location;
  const keepOrigin = host !== '' && host === requestHost;
  const origin = keepOrigin ? `${scheme === '' ? '' : `${scheme}:`}//${host}` : '';
  if (path.startsWith(pathPrepend)) return `${origin}${rest}${query}${fragment}`;
  let joined = joinPath(pathPrepend, path);
  if (path.endsWith('/') && !joined.endsWith('/')) joined += '/';
  return `${origin}${escapePath(joined)}${query}${fragment}`;
}
