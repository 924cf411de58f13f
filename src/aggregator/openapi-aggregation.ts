import { type JsonObject } from '../openapi/json-value.js';
import type { OpenApiService } from '../openapi/openapi-service.js';
import type { ApiServiceInfo } from './api-service.js';
import type { ApiServiceRegistry } from './api-service-registry.js';
import type { ProxyTransport } from './proxy-transport.js';
import type { ServiceRoutes } from './service-routes.js';
import { isObject } from '../api/values.js';

const FETCH_TIMEOUT_MS = 10_000;
/** kube's OpenAPI aggregation controllers look again every minute, and back off from 0.5 s after a failure. */
const REFRESH_MS = 60_000;
const FIRST_RETRY_MS = 500;

const DEFINITION_PREFIX = '#/definitions/';
const PARAMETER_PREFIX = '#/parameters/';

/**
 * Whether two schemas say the same, whatever their key order and descriptions: Capstan's built-in
 * document lacks the descriptions of several meta types that extension servers (built with the same
 * apimachinery) carry, which must not make them "different" definitions.
 */
function sameSchema(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => sameSchema(v, b[i]));
  }
  if (!isObject(a) || !isObject(b)) return a === b;
  const keys = (o: JsonObject): string[] => Object.keys(o).filter((k) => k !== 'description' && o[k] !== undefined);
  const ak = keys(a);
  const bk = keys(b);
  return ak.length === bk.length && ak.every((k) => b[k] !== undefined && sameSchema(a[k], b[k]));
}

/** Every `$ref` under `value` with `prefix`, by the name after it. */
function refsOf(value: unknown, prefix: string, into: Set<string>): void {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (Array.isArray(v)) stack.push(...(v as unknown[]));
    else if (isObject(v)) {
      for (const [k, child] of Object.entries(v)) {
        if (k === '$ref' && typeof child === 'string' && child.startsWith(prefix)) into.add(child.slice(prefix.length));
        else stack.push(child);
      }
    }
  }
}

/** `value` with `$ref`s to renamed definitions pointing at their new names. */
function renameRefs(value: unknown, renames: Map<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v) => renameRefs(v, renames));
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [k, child] of Object.entries(value)) {
    if (k === '$ref' && typeof child === 'string' && child.startsWith(DEFINITION_PREFIX)) {
      const renamed = renames.get(child.slice(DEFINITION_PREFIX.length));
      out[k] = renamed === undefined ? child : `${DEFINITION_PREFIX}${renamed}`;
    } else out[k] = renameRefs(child, renames);
  }
  return out;
}

/** A definition without its `x-kubernetes-group-version-kind` (compared modulo GVKs, as kube does; the lists are not merged). */
function withoutGvk(def: unknown): unknown {
  if (!isObject(def)) return def;
  const { ['x-kubernetes-group-version-kind']: _gvk, ...rest } = def;
  return rest;
}

/**
 * What an extension server's Swagger 2.0 document adds for one group version, after kube-openapi's
 * merge: the paths under `/apis/GROUP/VERSION/`, the definitions and shared parameters they use
 * (transitively), a definition that differs from the local one of the same name (modulo GVKs and
 * descriptions) renamed `NAME_v2` (`_v3`, ...) with its references, and what equals a local one left out.
 */
export function contributionFrom(
  remote: JsonObject,
  local: JsonObject,
  group: string,
  version: string,
): { paths: JsonObject; definitions: JsonObject; parameters: JsonObject } {
  const prefix = `/apis/${group}/${version}/`;
  const remotePaths = isObject(remote['paths']) ? remote['paths'] : {};
  const remoteDefinitions = isObject(remote['definitions']) ? remote['definitions'] : {};
  const remoteParameters = isObject(remote['parameters']) ? remote['parameters'] : {};
  const localDefinitions = isObject(local['definitions']) ? local['definitions'] : {};
  const localParameters = isObject(local['parameters']) ? local['parameters'] : {};
  const localPaths = isObject(local['paths']) ? local['paths'] : {};
  const paths: JsonObject = {};
  // Paths the local document has win (kube ignores conflicting paths).
  for (const [p, item] of Object.entries(remotePaths)) if (p.startsWith(prefix) && localPaths[p] === undefined) paths[p] = item;
  const parameterNames = new Set<string>();
  refsOf(paths, PARAMETER_PREFIX, parameterNames);
  const parameters: JsonObject = {};
  for (const name of parameterNames) {
    const p = remoteParameters[name];
    if (p !== undefined && !sameSchema(p, localParameters[name])) parameters[name] = p;
  }
  // Definitions used, transitively, by the paths and parameters.
  const used = new Set<string>();
  refsOf([paths, parameters], DEFINITION_PREFIX, used);
  for (const queue = [...used]; queue.length > 0;) {
    const name = queue.pop() ?? '';
    const found = new Set<string>();
    refsOf(remoteDefinitions[name], DEFINITION_PREFIX, found);
    for (const f of found) {
      if (used.has(f)) continue;
      used.add(f);
      queue.push(f);
    }
  }
  const renames = new Map<string, string>();
  for (const name of used) {
    const def = remoteDefinitions[name];
    const existing = localDefinitions[name];
    if (def === undefined || existing === undefined || sameSchema(withoutGvk(existing), withoutGvk(def))) continue;
    let i = 2;
    let candidate = `${name}_v${i}`;
    while (localDefinitions[candidate] !== undefined && !sameSchema(withoutGvk(localDefinitions[candidate]), withoutGvk(def))) candidate = `${name}_v${++i}`;
    renames.set(name, candidate);
  }
  const definitions: JsonObject = {};
  for (const name of used) {
    const def = remoteDefinitions[name];
    if (def === undefined) continue;
    const target = renames.get(name) ?? name;
    if (localDefinitions[target] !== undefined && renames.get(name) === undefined) continue;
    definitions[target] = renameRefs(def, renames);
  }
  return {
    paths: renameRefs(paths, renames) as JsonObject,
    definitions,
    parameters: renameRefs(parameters, renames) as JsonObject,
  };
}

/**
 * kube-aggregator's OpenAPI aggregation: for every APIService with a service reference, the
 * extension server's `/openapi/v2` (its paths under `/apis/GROUP/VERSION/` and what they use) is
 * merged into this server's, and its `/openapi/v3` document of `apis/GROUP/VERSION` is served as
 * that key (an extension server without OpenAPI v3 gets one converted from the merged v2, as kube
 * converts it). Downloaded as `system:kube-aggregator`, revalidated with ETags every minute and when
 * the APIService changes; an extension server that cannot be reached loses its paths until it can.
 */
export class OpenApiAggregation {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly backoff = new Map<string, number>();
  /** Per APIService: the ETag of the last /openapi/v2 taken, and the v3 document served (as JSON). */
  private readonly known = new Map<string, { v2: string; v3: Map<string, string> }>();
  private stopped = false;

  constructor(
    private readonly registry: ApiServiceRegistry,
    private readonly routes: ServiceRoutes,
    private readonly transport: ProxyTransport,
    private readonly openapi: OpenApiService,
  ) {
    registry.onChange((previous, current) => {
      if (previous?.service !== undefined && (current?.service === undefined || current.group !== previous.group || current.version !== previous.version)) {
        this.remove(previous);
      }
      if (current?.service !== undefined) this.schedule(current.name, 0);
    });
  }

  /** Stops refreshing and takes every aggregated document out. */
  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    for (const info of this.registry.remotes()) this.remove(info);
  }

  private contributionId(name: string): string {
    return `apiservice:${name}`;
  }

  private remove(info: ApiServiceInfo): void {
    clearTimeout(this.timers.get(info.name));
    this.timers.delete(info.name);
    this.forget(info.name);
    // The group's other APIServices may serve v3 documents this one took out: they put them back.
    for (const other of this.registry.remotes()) {
      if (other.group !== info.group || other.name === info.name) continue;
      this.known.get(other.name)?.v3.clear();
      this.schedule(other.name, 0);
    }
  }

  /** Takes out what the APIService contributed. */
  private forget(name: string): void {
    const known = this.known.get(name);
    this.known.delete(name);
    this.openapi.removeContribution(this.contributionId(name));
    for (const key of known?.v3.keys() ?? []) this.openapi.removeV3Document(key);
  }

  private schedule(name: string, delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timers.get(name));
    const timer = setTimeout(() => {
      this.timers.delete(name);
      void this.sync(name);
    }, delayMs);
    timer.unref();
    this.timers.set(name, timer);
  }

  private async sync(name: string): Promise<void> {
    const info = this.registry.get(name);
    if (info?.service === undefined || this.stopped) return;
    let ok = true;
    try {
      await this.update(info);
    } catch {
      ok = false;
      this.forget(name);
    }
    if (this.registry.get(name)?.service === undefined) return;
    if (ok) {
      this.backoff.delete(name);
      this.schedule(name, REFRESH_MS);
    } else {
      const delay = this.backoff.get(name) ?? FIRST_RETRY_MS;
      this.backoff.set(name, Math.min(REFRESH_MS, delay * 2));
      this.schedule(name, delay);
    }
  }

  private async update(info: ApiServiceInfo): Promise<void> {
    if (!info.available || info.service === undefined) throw new Error('service unavailable');
    const endpoint = await this.routes.resolve(info.service);
    const known = this.known.get(info.name) ?? { v2: '', v3: new Map<string, string>() };
    this.known.set(info.name, known);
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (known.v2 !== '') headers['If-None-Match'] = known.v2;
    const v2 = await this.transport.fetch(info, endpoint, '/openapi/v2', headers, FETCH_TIMEOUT_MS);
    if (v2.status === 200) {
      const remote: unknown = JSON.parse(v2.body.toString('utf8'));
      if (!isObject(remote)) throw new Error('/openapi/v2 is not a JSON object');
      // Merged against the built-in document without this server's own previous contribution.
      this.openapi.removeContribution(this.contributionId(info.name));
      const contribution = contributionFrom(remote, this.openapi.v2Document(), info.group, info.version);
      this.openapi.setContribution(this.contributionId(info.name), contribution);
      known.v2 = String(v2.headers.etag ?? '');
    } else if (v2.status !== 304) throw new Error(`/openapi/v2: HTTP ${v2.status}`);
    const index = await this.transport.fetch(info, endpoint, '/openapi/v3', { Accept: 'application/json' }, FETCH_TIMEOUT_MS);
    if (index.status === 404) {
      // No OpenAPI v3: the document derived from the merged v2 paths is served.
      this.setV3Documents(known, new Map());
      return;
    }
    if (index.status !== 200) throw new Error(`/openapi/v3: HTTP ${index.status}`);
    const parsed: unknown = JSON.parse(index.body.toString('utf8'));
    const paths = isObject(parsed) && isObject(parsed['paths']) ? parsed['paths'] : {};
    // As kube's aggregator lists the extension server's keys (those of its group: the others are this server's).
    const documents = new Map<string, string>();
    for (const [key, entry] of Object.entries(paths)) {
      if (key !== `apis/${info.group}` && !key.startsWith(`apis/${info.group}/`)) continue;
      const url = isObject(entry) && typeof entry['serverRelativeURL'] === 'string' ? entry['serverRelativeURL'] : `/openapi/v3/${key}`;
      const doc = await this.transport.fetch(info, endpoint, url, { Accept: 'application/json' }, FETCH_TIMEOUT_MS);
      if (doc.status !== 200) throw new Error(`${url}: HTTP ${doc.status}`);
      documents.set(key, doc.body.toString('utf8'));
    }
    this.setV3Documents(known, documents);
  }

  /** Serves `documents` (v3 key to JSON text), replacing what the APIService served before. */
  private setV3Documents(known: { v3: Map<string, string> }, documents: Map<string, string>): void {
    for (const key of known.v3.keys()) if (!documents.has(key)) this.openapi.removeV3Document(key);
    for (const [key, text] of documents) {
      if (known.v3.get(key) === text) continue;
      const doc: unknown = JSON.parse(text);
      if (isObject(doc)) this.openapi.setV3Document(key, doc);
    }
    known.v3 = documents;
  }
}
