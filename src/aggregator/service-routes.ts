import { isObject, type Obj } from '../api/object-util.js';
import type { StorageError } from '../api/storage-error.js';
import type { Storage } from '../storage/storage.js';
import type { ServiceReference } from './api-service.js';
import { asString } from '../api/values.js';

/** An address to dial. */
export interface Endpoint {
  host: string;
  port: number;
}

/** An address to dial, and the `host:port` kube's resolver names for it (a cluster IP is reached through an endpoint). */
export interface Destination extends Endpoint {
  location: string;
}

/** A Service that cannot be routed to; the message is kube's resolver error. */
export class RouteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RouteError';
  }
}

export const SERVICES_TYPE = 'services';
export const ENDPOINT_SLICES_TYPE = 'endpointslices.discovery.k8s.io';
export const ENDPOINTS_TYPE = 'endpoints';
const WATCHED_TYPES = [SERVICES_TYPE, ENDPOINT_SLICES_TYPE, ENDPOINTS_TYPE];

/** A Service port as the routes read it. */
export interface ServicePortInfo {
  name: string;
  port: number;
}

/** The fields of a Service the aggregator reads. */
export interface ServiceInfo {
  name: string;
  type: string;
  clusterIP: string;
  externalName: string;
  ports: ServicePortInfo[];
}

/** One EndpointSlice of a Service: its ports and whether each endpoint is ready. */
export interface SliceInfo {
  ports: { name: string; port: number | undefined }[];
  endpoints: { address: string; ready: boolean }[];
}

/** What one routing decision found: addresses to pick from (and the location kube names), or kube's error. */
type Route = { endpoints: Endpoint[]; location?: string } | { error: string };

/** Reads a stored Service leniently. */
export function serviceInfoOf(obj: Obj): ServiceInfo {
  const spec = isObject(obj.spec) ? obj.spec : {};
  const metadata = isObject(obj.metadata) ? obj.metadata : {};
  const ports = (Array.isArray(spec.ports) ? spec.ports : [])
    .filter(isObject)
    .map((p) => ({ name: asString(p.name), port: typeof p.port === 'number' ? p.port : 0 }));
  return {
    name: asString(metadata.name),
    type: asString(spec.type) || 'ClusterIP',
    clusterIP: asString(spec.clusterIP),
    externalName: asString(spec.externalName),
    ports,
  };
}

/** Reads a stored EndpointSlice leniently (a missing `ready` condition counts as ready, as in kube). */
export function sliceInfoOf(obj: Obj): SliceInfo {
  const ports = (Array.isArray(obj.ports) ? obj.ports : [])
    .filter(isObject)
    .map((p) => ({ name: asString(p.name), port: typeof p.port === 'number' ? p.port : undefined }));
  const endpoints = (Array.isArray(obj.endpoints) ? obj.endpoints : []).filter(isObject).flatMap((e) => {
    const addresses = Array.isArray(e.addresses) ? e.addresses.filter((a): a is string => typeof a === 'string') : [];
    const conditions = isObject(e.conditions) ? e.conditions : {};
    return addresses.length === 0 ? [] : [{ address: addresses[0], ready: conditions.ready !== false }];
  });
  return { ports, endpoints };
}

function namespaceOf(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? '' : key.slice(0, slash);
}

function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Where the routes go for `default/kubernetes:443`: Capstan itself, as kube's loopback resolver does. */
export type LoopbackEndpoint = () => Endpoint | undefined;

/**
 * Turns an APIService's service reference into an address to dial, as kube-aggregator's service
 * resolvers do:
 * - with endpoint routing (`--enable-aggregator-routing=true`): a ready endpoint of the Service's
 *   EndpointSlices whose port has the Service port's name (the Service's Endpoints when it has no
 *   slice: Capstan runs no EndpointSlice mirroring controller);
 * - without it (kube's default), the Service's cluster IP and port, or an ExternalName Service's name.
 *   Capstan has no service network, so it reaches a cluster IP the way kube-proxy would route it:
 *   to a ready endpoint of that Service port (its target port); a Service without one is dialled at
 *   the cluster IP itself, for networks that route it.
 * Decisions are cached per Service and port until a Service, EndpointSlice or Endpoints of the
 * same namespace changes (the change streams say so), so a request costs a map lookup. Errors are
 * kube's resolver messages (`service "x" not found`, `no endpoints available for service "x"`).
 */
export class ServiceRoutes {
  private readonly routes = new Map<string, Promise<Route>>();
  private watching: Promise<void> | undefined;
  private watchAbort = new AbortController();

  constructor(
    private readonly storage: Storage,
    private readonly options: { endpointRouting: boolean; loopback?: LoopbackEndpoint; signal: AbortSignal; onError: (err: unknown) => void },
  ) {
    options.signal.addEventListener('abort', () => this.watchAbort.abort(), { once: true });
  }

  /** One address for the reference (a random one of the ready endpoints); throws RouteError. */
  async resolve(ref: ServiceReference): Promise<Destination> {
    if (ref.namespace === 'default' && ref.name === 'kubernetes' && ref.port === 443) {
      const self = this.options.loopback?.();
      if (self !== undefined) return { ...self, location: hostPort(self.host, self.port) };
    }
    await this.watch();
    const key = `${ref.namespace}/${ref.name}:${ref.port}`;
    let route = this.routes.get(key);
    if (route === undefined) {
      route = this.compute(ref);
      this.routes.set(key, route);
      // A failed read is not kept: the next request reads again.
      route.catch(() => this.routes.get(key) === route && this.routes.delete(key));
    }
    const decided = await route;
    if ('error' in decided) throw new RouteError(decided.error);
    const chosen = decided.endpoints[Math.floor(Math.random() * decided.endpoints.length)];
    return { ...chosen, location: decided.location ?? hostPort(chosen.host, chosen.port) };
  }

  /** The Service, or undefined when it does not exist. */
  async service(namespace: string, name: string): Promise<ServiceInfo | undefined> {
    const stored = await this.storage.get(SERVICES_TYPE, `${namespace}/${name}`);
    return stored === undefined ? undefined : serviceInfoOf(JSON.parse(stored.json) as Obj);
  }

  /** The EndpointSlices of a Service (label `kubernetes.io/service-name`). */
  async slices(namespace: string, name: string): Promise<SliceInfo[]> {
    const list = await this.storage.list(ENDPOINT_SLICES_TYPE, { namespace });
    const out: SliceInfo[] = [];
    for (const item of list.items) {
      const slice = JSON.parse(item.json) as Obj;
      const metadata = isObject(slice.metadata) ? slice.metadata : {};
      const labels = isObject(metadata.labels) ? metadata.labels : {};
      if (labels['kubernetes.io/service-name'] === name) out.push(sliceInfoOf(slice));
    }
    return out;
  }

  /**
   * The Service's EndpointSlices, or its Endpoints object as slices (one per subset) when it has
   * none: what kube's EndpointSlice mirroring controller would have made of it.
   */
  async slicesOrEndpoints(namespace: string, name: string): Promise<SliceInfo[]> {
    const slices = await this.slices(namespace, name);
    return slices.length > 0 ? slices : this.endpointsAsSlices(namespace, name);
  }

  /** The Service's Endpoints object as slices (one per subset), for Services without EndpointSlices. */
  private async endpointsAsSlices(namespace: string, name: string): Promise<SliceInfo[]> {
    const stored = await this.storage.get(ENDPOINTS_TYPE, `${namespace}/${name}`);
    if (stored === undefined) return [];
    const eps = JSON.parse(stored.json) as Obj;
    const subsets = (Array.isArray(eps.subsets) ? eps.subsets : []).filter(isObject);
    return subsets.map((s) => ({
      ports: (Array.isArray(s.ports) ? s.ports : [])
        .filter(isObject)
        .map((p) => ({ name: asString(p.name), port: typeof p.port === 'number' ? p.port : undefined })),
      endpoints: (Array.isArray(s.addresses) ? s.addresses : []).filter(isObject).map((a) => ({ address: asString(a.ip), ready: true })),
    }));
  }

  /** Ready endpoints of the slices' port named `portName`. */
  private readyEndpoints(slices: SliceInfo[], portName: string): Endpoint[] {
    const out: Endpoint[] = [];
    for (const slice of slices) {
      const port = slice.ports.find((p) => p.name === portName)?.port;
      if (port === undefined) continue;
      for (const e of slice.endpoints) if (e.ready && e.address !== '') out.push({ host: e.address, port });
    }
    return out;
  }

  private async endpointsOf(namespace: string, name: string, portName: string): Promise<Endpoint[]> {
    return this.readyEndpoints(await this.slicesOrEndpoints(namespace, name), portName);
  }

  private async compute(ref: ServiceReference): Promise<Route> {
    const svc = await this.service(ref.namespace, ref.name);
    if (svc === undefined) return { error: `service "${ref.name}" not found` };
    const routable = svc.type === 'ClusterIP' || svc.type === 'NodePort' || svc.type === 'LoadBalancer';
    if (this.options.endpointRouting) {
      if (!routable) return { error: `unsupported service type "${svc.type}"` };
      const port = svc.ports.find((p) => p.port === ref.port);
      if (port === undefined) return { error: `no service port ${ref.port} found for service "${svc.name}"` };
      const endpoints = await this.endpointsOf(ref.namespace, ref.name, port.name);
      return endpoints.length > 0 ? { endpoints } : { error: `no endpoints available for service "${ref.name}"` };
    }
    if (svc.type === 'ExternalName') return { endpoints: [{ host: svc.externalName, port: ref.port }] };
    if (!routable) return { error: `unsupported service type "${svc.type}"` };
    if (svc.type === 'ClusterIP' && svc.clusterIP === 'None') return { error: 'cannot route to service with ClusterIP "None"' };
    const port = svc.ports.find((p) => p.port === ref.port);
    if (port === undefined) return { error: `no service port ${ref.port} found for service "${svc.name}"` };
    // What kube-proxy would do with a connection to clusterIP:port.
    const endpoints = await this.endpointsOf(ref.namespace, ref.name, port.name);
    return { endpoints: endpoints.length > 0 ? endpoints : [{ host: svc.clusterIP, port: port.port }], location: hostPort(svc.clusterIP, port.port) };
  }

  /** Follows the change streams of Services, EndpointSlices and Endpoints (once, on first use). */
  private watch(): Promise<void> {
    if (this.watching !== undefined) return this.watching;
    if (this.options.signal.aborted) return Promise.resolve();
    const signal = this.watchAbort.signal;
    const lost = (err: StorageError): void => {
      if (signal !== this.watchAbort.signal) return;
      // History lost: forget every decision and follow the streams again.
      this.options.onError(err);
      this.watchAbort.abort();
      this.watchAbort = new AbortController();
      this.routes.clear();
      this.watching = undefined;
    };
    const watching = Promise.all(
      WATCHED_TYPES.map(async (type) => {
        const from = await this.storage.currentResourceVersion(type);
        await this.storage.watch(type, from, (e) => this.invalidate(namespaceOf(e.key)), signal, lost);
      }),
    ).then(() => undefined);
    this.watching = watching;
    // A watch that could not start is tried again by the next request.
    watching.catch(() => this.watching === watching && (this.watching = undefined));
    return watching;
  }

  private invalidate(namespace: string): void {
    if (this.routes.size === 0) return;
    const prefix = `${namespace}/`;
    for (const key of [...this.routes.keys()]) if (key.startsWith(prefix)) this.routes.delete(key);
  }
}

/** `host:port` as Go prints a dial address. */
export function endpointText(e: Endpoint): string {
  return hostPort(e.host, e.port);
}
