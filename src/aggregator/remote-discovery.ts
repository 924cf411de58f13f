import { isObject } from '../api/object-util.js';
import type { APIResourceDiscovery, APISubresourceDiscovery, APIVersionDiscovery, GroupVersionKind } from '../discovery/discovery-types.js';
import type { ApiServiceInfo } from './api-service.js';
import type { ApiServiceRegistry } from './api-service-registry.js';
import type { ProxyTransport } from './proxy-transport.js';
import type { ServiceRoutes } from './service-routes.js';
import { asString } from '../api/values.js';

/** client-go's Accept for aggregated discovery: v2, then v2beta1. */
const ACCEPT_AGGREGATED =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';
const FETCH_TIMEOUT_MS = 5000;
/** kube's discovery manager refreshes every minute and backs off from 0.5 s to a minute. */
const REFRESH_MS = 60_000;
const FIRST_RETRY_MS = 500;

/** What an extension server's discovery said, per `group/version`. */
interface ServiceDocument {
  etag: string;
  byGroupVersion: Map<string, APIVersionDiscovery>;
}

function strings(v: unknown): string[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out = v.filter((s): s is string => typeof s === 'string');
  return out.length > 0 ? out : undefined;
}

function gvk(v: unknown): GroupVersionKind {
  const o = isObject(v) ? v : {};
  return { group: asString(o.group), version: asString(o.version), kind: asString(o.kind) };
}

/** One resource of an aggregated discovery document, narrowed (a missing responseKind becomes empty, as kube fills it). */
function resourceOf(v: unknown): APIResourceDiscovery | undefined {
  if (!isObject(v) || typeof v.resource !== 'string') return undefined;
  const r: APIResourceDiscovery = {
    resource: v.resource,
    responseKind: gvk(v.responseKind),
    scope: v.scope === 'Cluster' ? 'Cluster' : 'Namespaced',
    singularResource: asString(v.singularResource),
    verbs: strings(v.verbs) ?? [],
  };
  const shortNames = strings(v.shortNames);
  if (shortNames) r.shortNames = shortNames;
  const categories = strings(v.categories);
  if (categories) r.categories = categories;
  const subs = (Array.isArray(v.subresources) ? v.subresources : []).filter(isObject);
  if (subs.length > 0) {
    r.subresources = subs.map((s): APISubresourceDiscovery => ({
      subresource: asString(s.subresource),
      responseKind: gvk(s.responseKind),
      verbs: strings(s.verbs) ?? [],
    }));
  }
  return r;
}

/** The group versions of an APIGroupDiscoveryList (v2 or v2beta1), by `group/version`. */
export function parseAggregatedDiscovery(body: unknown): Map<string, APIVersionDiscovery> {
  const out = new Map<string, APIVersionDiscovery>();
  const items = isObject(body) && Array.isArray(body.items) ? body.items : [];
  for (const item of items) {
    if (!isObject(item)) continue;
    const group = isObject(item.metadata) ? asString(item.metadata.name) : '';
    for (const v of Array.isArray(item.versions) ? item.versions : []) {
      if (!isObject(v) || typeof v.version !== 'string') continue;
      const resources = (Array.isArray(v.resources) ? v.resources : []).map(resourceOf).filter((r): r is APIResourceDiscovery => r !== undefined);
      out.set(`${group}/${v.version}`, { version: v.version, resources, freshness: 'Current' });
    }
  }
  return out;
}

/**
 * kube's ConvertGroupVersionIntoToDiscovery: a legacy APIResourceList as aggregated discovery
 * resources, each subresource (`flunders/status`) under its parent. Throws on a subresource whose
 * scope differs from its parent's, as kube does.
 */
export function resourcesFromLegacyList(body: unknown): APIResourceDiscovery[] {
  const list = isObject(body) && Array.isArray(body.resources) ? body.resources.filter(isObject) : [];
  const out: APIResourceDiscovery[] = [];
  const parents = new Map<string, APIResourceDiscovery>();
  for (const r of list) {
    const name = asString(r.name);
    if (name.includes('/')) continue;
    const resource: APIResourceDiscovery = {
      resource: name,
      responseKind: { group: asString(r.group), version: asString(r.version), kind: asString(r.kind) },
      scope: r.namespaced === true ? 'Namespaced' : 'Cluster',
      singularResource: asString(r.singularName),
      verbs: strings(r.verbs) ?? [],
    };
    const shortNames = strings(r.shortNames);
    if (shortNames) resource.shortNames = shortNames;
    const categories = strings(r.categories);
    if (categories) resource.categories = categories;
    out.push(resource);
    parents.set(name, resource);
  }
  for (const r of list) {
    const name = asString(r.name);
    const slash = name.indexOf('/');
    if (slash < 0) continue;
    const parentName = name.slice(0, slash);
    const scope = r.namespaced === true ? 'Namespaced' : 'Cluster';
    let parent = parents.get(parentName);
    if (parent === undefined) {
      parent = { resource: parentName, responseKind: { group: '', version: '', kind: '' }, scope, singularResource: '', verbs: [] };
      out.push(parent);
      parents.set(parentName, parent);
    }
    if (parent.scope !== scope)
      throw new Error(`Error: Parent ${parentName} (scope: ${parent.scope}) and subresource ${name.slice(slash + 1)} (scope: ${scope}) scope do not match`);
    const kind = asString(r.kind);
    const sub: APISubresourceDiscovery = {
      subresource: name.slice(slash + 1),
      responseKind: kind === '' ? { group: '', version: '', kind: '' } : { group: asString(r.group), version: asString(r.version), kind },
      verbs: strings(r.verbs) ?? [],
    };
    parent.subresources = [...(parent.subresources ?? []), sub];
  }
  return out;
}

function serviceKey(info: ApiServiceInfo): string {
  const s = info.service;
  return s === undefined ? '' : `${s.namespace}/${s.name}:${s.port}`;
}

/**
 * kube-aggregator's discovery manager: for every APIService with a service reference, the extension
 * server's discovery of that group version, fetched as `system:kube-aggregator` from its aggregated
 * discovery (`/apis`, v2 or v2beta1, revalidated with its ETag) or, when it has none, its legacy
 * `/apis/GROUP/VERSION`. Documents are shared by the APIServices of one Service, refreshed every
 * minute and when an APIService changes; after a failed fetch the version is listed empty and
 * `Stale` (as kube lists it) and the fetch is retried with backoff. `generation` moves whenever an entry changes, so the
 * merged discovery documents are rebuilt then.
 */
export class RemoteDiscovery {
  private readonly entries = new Map<string, APIVersionDiscovery>();
  private readonly documents = new Map<string, ServiceDocument>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly backoff = new Map<string, number>();
  private readonly syncing = new Set<string>();
  private readonly dirty = new Set<string>();
  /** Increases whenever a group version's discovery changes. */
  generation = 0;
  private stopped = false;

  constructor(
    private readonly registry: ApiServiceRegistry,
    private readonly routes: ServiceRoutes,
    private readonly transport: ProxyTransport,
  ) {
    registry.onChange((previous, current) => {
      if (previous !== undefined && (current === undefined || current.service === undefined)) this.forget(previous.name);
      // A changed APIService (service, trust, availability) may change what its server answers.
      if (current?.service !== undefined) {
        this.documents.delete(serviceKey(current));
        this.schedule(current.name, 0);
      }
    });
  }

  /** The discovery of an aggregated group version (the APIService's name), once first fetched. */
  versionOf(apiServiceName: string): APIVersionDiscovery | undefined {
    return this.entries.get(apiServiceName);
  }

  /** Stops refreshing. */
  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private forget(name: string): void {
    clearTimeout(this.timers.get(name));
    this.timers.delete(name);
    this.backoff.delete(name);
    if (this.entries.delete(name)) this.generation++;
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
    if (this.syncing.has(name)) {
      this.dirty.add(name);
      return;
    }
    const info = this.registry.get(name);
    if (info?.service === undefined) return this.forget(name);
    this.syncing.add(name);
    let entry: APIVersionDiscovery;
    let ok: boolean;
    try {
      const found = (await this.fetch(info)).get(`${info.group}/${info.version}`);
      entry = { ...(found ?? { version: info.version }), freshness: 'Current' };
      ok = true;
    } catch {
      // As kube's discovery manager: a failed fetch leaves the version listed, empty and Stale.
      entry = { version: info.version, freshness: 'Stale' };
      ok = false;
    } finally {
      this.syncing.delete(name);
    }
    if (this.registry.get(name)?.service === undefined) return this.forget(name);
    if (JSON.stringify(this.entries.get(name)) !== JSON.stringify(entry)) {
      this.entries.set(name, entry);
      this.generation++;
    }
    if (this.dirty.delete(name)) return this.schedule(name, 0);
    if (ok) {
      this.backoff.delete(name);
      this.schedule(name, REFRESH_MS);
    } else {
      const delay = this.backoff.get(name) ?? FIRST_RETRY_MS;
      this.backoff.set(name, Math.min(REFRESH_MS, delay * 2));
      this.schedule(name, delay);
    }
  }

  /** The Service's discovery by group version; throws when it cannot be had. */
  private async fetch(info: ApiServiceInfo): Promise<Map<string, APIVersionDiscovery>> {
    // What the proxy would answer: an unavailable APIService is a 503.
    if (!info.available || info.service === undefined) throw new Error('service unavailable');
    const key = serviceKey(info);
    const cached = this.documents.get(key);
    const endpoint = await this.routes.resolve(info.service);
    const headers: Record<string, string> = { Accept: ACCEPT_AGGREGATED };
    if (cached !== undefined && cached.etag !== '') headers['If-None-Match'] = cached.etag;
    const res = await this.transport.fetch(info, endpoint, '/apis', headers, FETCH_TIMEOUT_MS);
    if (res.status === 304 && cached !== undefined) return cached.byGroupVersion;
    const contentType = String(res.headers['content-type'] ?? '');
    if (res.status === 200 && /;\s*g=apidiscovery\.k8s\.io;\s*v=v2(beta1)?;\s*as=APIGroupDiscoveryList/.test(contentType)) {
      const byGroupVersion = parseAggregatedDiscovery(JSON.parse(res.body.toString('utf8')));
      this.documents.set(key, { etag: String(res.headers.etag ?? ''), byGroupVersion });
      return byGroupVersion;
    }
    if (res.status === 503) throw new Error(`service ${key} returned non-success response code: 503`);
    // No aggregated discovery: the legacy document of this group version only (not kept per Service).
    const legacy = await this.transport.fetch(info, endpoint, `/apis/${info.group}/${info.version}`, { Accept: 'application/json' }, FETCH_TIMEOUT_MS);
    if (legacy.status !== 200) throw new Error(`failed to download legacy discovery for /apis/${info.group}/${info.version}: ${legacy.body.toString('utf8')}`);
    const resources = resourcesFromLegacyList(JSON.parse(legacy.body.toString('utf8')));
    return new Map([[`${info.group}/${info.version}`, { version: info.version, resources, freshness: 'Current' as const }]]);
  }
}
