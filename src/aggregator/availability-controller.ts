import { isObject, jsonEqual, metadataOf, nowTimestamp, type Obj } from '../api/object-util.js';
import { WorkQueue, type WorkOutcome } from '../controllers/work-queue.js';
import { StorageError } from '../api/storage-error.js';
import type { Storage } from '../storage/storage.js';
import { goNetError } from '../webhook/webhook-client.js';
import { API_SERVICES_TYPE, apiServiceInfoOf, type ApiServiceInfo } from './api-service.js';
import type { ApiServiceRegistry } from './api-service-registry.js';
import type { ProxyTransport } from './proxy-transport.js';
import { ENDPOINT_SLICES_TYPE, ENDPOINTS_TYPE, SERVICES_TYPE, type ServiceRoutes } from './service-routes.js';

/** The `Available` condition the controller computes. */
interface Availability {
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

/** How often every APIService is checked again (kube's informer resync). */
const RESYNC_MS = 30_000;
const ATTEMPTS = 5;
/** kube's discovery check: a 5 s client timeout, and 6 s before an attempt counts as timed out. */
const CHECK_TIMEOUT_MS = 5000;
const ATTEMPT_TIMEOUT_MS = 6000;

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * kube-aggregator's remote availability controller: keeps the `Available` condition of every
 * APIService that names a service, with kube's reasons and messages:
 * `ServiceNotFound`, `ServiceAccessError`, and for ClusterIP Services `ServicePortError`,
 * `EndpointsAccessError`, `EndpointsNotFound` and `MissingEndpoints` (a Service with an Endpoints
 * object and no EndpointSlice is read as kube's mirroring controller would slice it); then a discovery
 * check, `GET /apis/GROUP/VERSION` as `system:kube-aggregator` in five parallel attempts, any 2xx
 * passing (`Passed`, `all checks passed`) and all failing `FailedDiscoveryCheck`.
 * An APIService is checked when it, its Service, or the Service's EndpointSlices or Endpoints change,
 * every 30 s, and again after a failure with kube's backoff (5 ms doubling to 30 s).
 *
 * As kube-apiserver runs one per server, Capstan runs one per process that runs controllers (one per
 * pod): the instances agree on what they see, write only when the condition differs (compare and
 * swap on the stored object), and the last writer's view is the one the proxy acts on.
 */
export class AvailabilityController {
  private readonly queue: WorkQueue<string>;
  private readonly abort = new AbortController();
  private resync: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly storage: Storage,
    private readonly registry: ApiServiceRegistry,
    private readonly routes: ServiceRoutes,
    private readonly transport: ProxyTransport,
    private readonly onError: (err: unknown) => void,
  ) {
    this.queue = new WorkQueue<string>(
      (name) => this.sync(name),
      (_name, err) => onError(err),
    );
  }

  /** Starts following the APIServices and the Services, EndpointSlices and Endpoints they name. */
  async start(): Promise<void> {
    const signal = this.abort.signal;
    this.registry.onChange((previous, current) => {
      if (previous?.service !== undefined) this.queue.add(previous.name);
      if (current?.service !== undefined) this.queue.add(current.name);
    });
    await this.registry.start();
    for (const type of [SERVICES_TYPE, ENDPOINT_SLICES_TYPE, ENDPOINTS_TYPE]) {
      const from = await this.storage.currentResourceVersion(type);
      await this.storage.watch(
        type,
        from,
        (e) => this.serviceChanged(type, e.key, e.json),
        signal,
        (err) => this.watchLost(type, err),
      );
    }
    this.running = this.queue.run(5, signal);
    this.resync = setInterval(() => this.enqueueAll(), RESYNC_MS);
    this.resync.unref();
    this.enqueueAll();
  }

  async stop(): Promise<void> {
    clearInterval(this.resync);
    this.abort.abort();
    await this.running;
  }

  private enqueueAll(): void {
    for (const info of this.registry.remotes()) this.queue.add(info.name);
  }

  private watchLost(type: string, err: StorageError): void {
    if (this.abort.signal.aborted) return;
    this.onError(err);
    // Follow the stream again from now, and check everything (what changed meanwhile is unknown).
    void this.storage
      .currentResourceVersion(type)
      .then((from) =>
        this.storage.watch(
          type,
          from,
          (e) => this.serviceChanged(type, e.key, e.json),
          this.abort.signal,
          (again) => this.watchLost(type, again),
        ),
      )
      .then(() => this.enqueueAll(), this.onError);
  }

  /** Queues the APIServices naming the Service a change of `type` (at `key`) concerns. */
  private serviceChanged(type: string, key: string, json: string): void {
    const slash = key.indexOf('/');
    const namespace = key.slice(0, slash);
    const remotes = this.registry.remotes().filter((info) => info.service?.namespace === namespace);
    if (remotes.length === 0) return;
    let name = key.slice(slash + 1);
    if (type === ENDPOINT_SLICES_TYPE) {
      const labels = metadataOf(JSON.parse(json) as Obj).labels;
      name = isObject(labels) && typeof labels['kubernetes.io/service-name'] === 'string' ? labels['kubernetes.io/service-name'] : '';
    }
    for (const info of remotes) if (info.service?.name === name) this.queue.add(info.name);
  }

  private async sync(name: string): Promise<WorkOutcome> {
    const info = this.registry.get(name);
    if (info?.service === undefined) return 'done';
    const availability = await this.check(info);
    await this.record(name, availability);
    return availability.reason === 'FailedDiscoveryCheck' || availability.status === 'Unknown' ? 'retry' : 'done';
  }

  /** kube's checks, in kube's order. */
  private async check(info: ApiServiceInfo): Promise<Availability> {
    const ref = info.service;
    if (ref === undefined) return { status: 'True', reason: 'Local', message: 'Local APIServices are always available' };
    const where = `service/${ref.name} in ${JSON.stringify(ref.namespace)}`;
    let service;
    try {
      service = await this.routes.service(ref.namespace, ref.name);
    } catch (err) {
      return { status: 'Unknown', reason: 'ServiceAccessError', message: `${where} cannot be checked due to: ${errorText(err)}` };
    }
    if (service === undefined) return { status: 'False', reason: 'ServiceNotFound', message: `${where} is not present` };
    if (service.type === 'ClusterIP') {
      const port = service.ports.find((p) => p.port === ref.port);
      if (port === undefined) return { status: 'False', reason: 'ServicePortError', message: `${where} is not listening on port ${ref.port}` };
      let slices;
      try {
        slices = await this.routes.slicesOrEndpoints(ref.namespace, ref.name);
      } catch (err) {
        return { status: 'Unknown', reason: 'EndpointsAccessError', message: `${where} cannot be checked due to: ${errorText(err)}` };
      }
      if (slices.length === 0) return { status: 'False', reason: 'EndpointsNotFound', message: `cannot find endpointslices for ${where}` };
      const ready = slices.some((s) => s.endpoints.some((e) => e.ready) && s.ports.some((p) => p.name === port.name && p.port !== undefined));
      if (!ready) {
        return {
          status: 'False',
          reason: 'MissingEndpoints',
          message: `endpointslices for ${where} have no addresses with port name ${JSON.stringify(port.name)}`,
        };
      }
    }
    const failure = await this.discoveryCheck(info);
    if (failure !== undefined) return { status: 'False', reason: 'FailedDiscoveryCheck', message: failure };
    return { status: 'True', reason: 'Passed', message: 'all checks passed' };
  }

  /** Five parallel GETs of the group version's discovery; undefined when one succeeds, else the last error. */
  private async discoveryCheck(info: ApiServiceInfo): Promise<string | undefined> {
    const ref = info.service;
    if (ref === undefined) return undefined;
    const path = info.name === 'v1.' ? `/api/${info.version}` : `/apis/${info.group}/${info.version}`;
    const attempt = async (): Promise<string | undefined> => {
      let destination;
      try {
        destination = await this.routes.resolve(ref);
      } catch (err) {
        return errorText(err);
      }
      const url = `https://${destination.location}${path}`;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(`timed out waiting for ${url}`), ATTEMPT_TIMEOUT_MS);
      });
      const answered = this.transport.fetch(info, destination, path, { Accept: 'application/json, */*' }, CHECK_TIMEOUT_MS).then(
        (res) => (res.status < 200 || res.status >= 300 ? `failing or missing response from ${url}: bad status from ${url}: ${res.status}` : undefined),
        (err: unknown) => {
          const why =
            err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')
              ? 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
              : err instanceof Error
                ? goNetError(err)
                : String(err);
          return `failing or missing response from ${url}: Get ${JSON.stringify(url)}: ${why}`;
        },
      );
      const result = await Promise.race([answered, timedOut]);
      clearTimeout(timer);
      return result;
    };
    const pending = Array.from({ length: ATTEMPTS }, () => attempt());
    let last: string | undefined;
    // Results are taken in the order they finish; the first success ends the check.
    const settled = pending.map((p, i) => p.then((r) => ({ r, i })));
    const open = new Set(settled.map((_, i) => i));
    while (open.size > 0) {
      const { r, i } = await Promise.race(settled.filter((_, j) => open.has(j)));
      open.delete(i);
      if (r === undefined) return undefined;
      last = r;
    }
    return last;
  }

  /** Writes the condition when it differs (kube's SetAPIServiceCondition and updateAPIServiceStatus). */
  private async record(name: string, availability: Availability): Promise<void> {
    for (;;) {
      const stored = await this.storage.get(API_SERVICES_TYPE, name);
      if (stored === undefined) return;
      const obj = JSON.parse(stored.json) as Obj;
      if (apiServiceInfoOf(obj).service === undefined) return;
      const status: Obj = isObject(obj.status) ? { ...obj.status } : {};
      const conditions = (Array.isArray(status.conditions) ? (status.conditions as unknown[]) : []).map((c) => (isObject(c) ? { ...c } : c));
      const existing = conditions.find((c): c is Obj => isObject(c) && c.type === 'Available');
      if (existing === undefined) {
        conditions.push({
          type: 'Available',
          status: availability.status,
          lastTransitionTime: nowTimestamp(),
          reason: availability.reason,
          message: availability.message,
        });
      } else {
        if (existing.status !== availability.status) {
          existing.status = availability.status;
          existing.lastTransitionTime = nowTimestamp();
        }
        existing.reason = availability.reason;
        existing.message = availability.message;
      }
      status.conditions = conditions;
      if (jsonEqual(status, obj.status)) return;
      try {
        await this.storage.update(API_SERVICES_TYPE, name, { ...obj, status }, stored.resourceVersion);
        return;
      } catch (err) {
        // Changed meanwhile (another instance, a user's status write): decide again on the new object.
        if (err instanceof StorageError && err.code === 'Conflict') continue;
        if (err instanceof StorageError && err.code === 'NotFound') return;
        throw err;
      }
    }
  }
}
