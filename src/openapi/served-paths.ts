import type { ResourceCatalog } from '../catalog/resource-catalog.js';
import { type JsonObject } from './json-value.js';
import { isObject } from '../api/values.js';

/**
 * Which paths of the built-in OpenAPI document a server serves: those of its served group versions
 * and resources (see `--runtime-config`), plus the paths outside any group version (`/api/`,
 * `/apis/`, `/version/`, `/.well-known/...`). A group's own path (`/apis/GROUP/`) is served while
 * any of its versions is. `/logs/` is not served (kube-apiserver 1.36's log handler is off by
 * default), so its paths are left out as kube leaves them out.
 */
export function servedPathFilter(catalog: ResourceCatalog): (path: string) => boolean {
  return (path) => {
    const segs = path.split('/').filter((s) => s !== '');
    if (segs[0] === 'logs') return false;
    let group: string;
    let rest: string[];
    if (segs[0] === 'api' && segs.length >= 2) {
      group = '';
      rest = segs.slice(1);
    } else if (segs[0] === 'apis' && segs.length >= 2) {
      group = segs[1];
      if (segs.length === 2) return catalog.group(group) !== undefined;
      rest = segs.slice(2);
    } else {
      return true;
    }
    const version = rest[0];
    if (!catalog.hasGroupVersion(group, version)) return false;
    let tail = rest.slice(1);
    if (tail[0] === 'watch') tail = tail.slice(1);
    if (tail.length === 0) return true;
    const resource = tail[0] === 'namespaces' && tail[1] === '{namespace}' && tail.length >= 3 ? tail[2] : tail[0];
    return catalog.get(group, version, resource) !== undefined;
  };
}

/** The definition names `value` refers to with `$ref: #/definitions/NAME`, followed transitively. */
function referencedDefinitions(value: unknown, definitions: JsonObject, into = new Set<string>()): Set<string> {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (Array.isArray(v)) {
      stack.push(...(v as unknown[]));
    } else if (isObject(v)) {
      for (const [k, child] of Object.entries(v)) {
        if (k === '$ref' && typeof child === 'string' && child.startsWith('#/definitions/')) {
          const name = child.slice('#/definitions/'.length);
          if (!into.has(name)) {
            into.add(name);
            const def = definitions[name];
            if (def !== undefined) stack.push(def);
          }
        } else {
          stack.push(child);
        }
      }
    }
  }
  return into;
}

/**
 * Removes from a Swagger 2.0 document (in place) the paths `serves` refuses, and the definitions only
 * those paths used (as kube-apiserver's document, built from the routes it serves, has none of them).
 * Definitions no path refers to at all are kept. Returns whether anything was removed.
 */
export function pruneUnservedPaths(doc: JsonObject, serves: (path: string) => boolean): boolean {
  const paths = isObject(doc['paths']) ? doc['paths'] : {};
  const definitions = isObject(doc['definitions']) ? doc['definitions'] : {};
  const dropped = new Set(Object.keys(paths).filter((p) => !serves(p)));
  if (dropped.size === 0) return false;
  const usedBefore = referencedDefinitions(paths, definitions);
  const kept: JsonObject = {};
  for (const [p, item] of Object.entries(paths)) if (!dropped.has(p)) kept[p] = item;
  const usedAfter = referencedDefinitions(kept, definitions);
  const keptDefinitions: JsonObject = {};
  for (const [name, def] of Object.entries(definitions)) {
    if (usedAfter.has(name) || !usedBefore.has(name)) keptDefinitions[name] = def;
  }
  doc['paths'] = kept;
  doc['definitions'] = keptDefinitions;
  return true;
}
