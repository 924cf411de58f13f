import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { ServerConfig } from '../config/server-config.js';
import type { DiscoveryExtension } from '../discovery/discovery-extension.js';
import { logger } from '../logging/logger.js';
import type { OpenApiService } from '../openapi/openapi-service.js';
import type { Storage } from '../storage/storage.js';
import { AggregatedGroups } from './aggregated-groups.js';
import { ApiServiceRegistry } from './api-service-registry.js';
import { AvailabilityController } from './availability-controller.js';
import { OpenApiAggregation } from './openapi-aggregation.js';
import { aggregatedPathOf, aggregatorProxy, type ProxyDependencies } from './proxy-handler.js';
import { ProxyTransport } from './proxy-transport.js';
import { RemoteDiscovery } from './remote-discovery.js';
import { ServiceRoutes, type LoopbackEndpoint } from './service-routes.js';
import { serveUpgradeRequests, upgradeFilteringIncomingMessage } from './upgrade-requests.js';

/**
 * The aggregation layer of one server process (kube-aggregator in front of Capstan's own API):
 * the watched APIServices, the proxy to extension API servers, their discovery and OpenAPI merged
 * into this server's, and (where controllers run) the availability controller. The
 * `extension-apiserver-authentication` ConfigMap extension servers read is kept by
 * server/authentication-trust.ts. Costs nothing per request while no APIService names a service.
 */
export class Aggregator {
  private readonly abort = new AbortController();
  readonly registry: ApiServiceRegistry;
  private readonly routes: ServiceRoutes;
  private readonly transport: ProxyTransport;
  private readonly discovery: RemoteDiscovery;
  private readonly openapiAggregation: OpenApiAggregation;
  private availability: AvailabilityController | undefined;
  /** Enders of the open proxied watches and upgraded connections. */
  private readonly streams = new Set<() => void>();

  constructor(
    private readonly storage: Storage,
    private readonly config: ServerConfig,
    openapi: OpenApiService,
    loopback: LoopbackEndpoint,
  ) {
    const onError = (error: unknown): void => logger.warn('aggregator: watch failed', { error });
    this.registry = new ApiServiceRegistry(storage, this.abort.signal, onError);
    this.routes = new ServiceRoutes(storage, { endpointRouting: config.enableAggregatorRouting, loopback, signal: this.abort.signal, onError });
    this.transport = new ProxyTransport(config.proxyClientCertFile, config.proxyClientKeyFile);
    this.discovery = new RemoteDiscovery(this.registry, this.routes, this.transport);
    this.openapiAggregation = new OpenApiAggregation(this.registry, this.routes, this.transport, openapi);
  }

  /** The proxy middleware (after authentication and authorization, before the local handlers). */
  proxy(userOf: ProxyDependencies['userOf']): RequestHandler {
    return aggregatorProxy({
      userOf,
      registry: this.registry,
      routes: this.routes,
      transport: this.transport,
      rejectForwardingRedirects: this.config.aggregatorRejectForwardingRedirect,
      streams: this.streams,
    });
  }

  /** The aggregated group versions, for the discovery documents. */
  discoveryExtension(): DiscoveryExtension {
    return new AggregatedGroups(this.registry, this.discovery);
  }

  /**
   * The request class servers use so that only upgrades of aggregated paths, and of the paths
   * `alsoClaim` names (pod and service proxies), leave the HTTP parser.
   */
  incomingMessageClass(alsoClaim: (url: string) => boolean = () => false): typeof IncomingMessage {
    return upgradeFilteringIncomingMessage((url) => {
      if (alsoClaim(url)) return true;
      if (!this.registry.hasRemote) return false;
      const path = aggregatedPathOf(url);
      return path !== undefined && this.registry.remote(path.group, path.version) !== undefined;
    });
  }

  /** Serves `server`'s upgrade requests (aggregated paths) through `handle`. */
  serveUpgrades(server: Server, handle: (req: IncomingMessage, res: ServerResponse) => void): void {
    serveUpgradeRequests(server, handle);
  }

  /** Lists and watches the APIServices; resolves once they are known. */
  async start(): Promise<void> {
    await this.registry.start();
  }

  /**
   * Starts what kube-apiserver runs once per server: the availability controller and the
   * authentication ConfigMap publisher (`info`).
   */
  async startControllers(): Promise<void> {
    const onError = (error: unknown): void => logger.warn('aggregator controller', { error });
    this.availability = new AvailabilityController(this.storage, this.registry, this.routes, this.transport, onError);
    await this.availability.start();
  }

  /**
   * The first step of shutdown: stops the controllers and refreshes and ends open proxied watches
   * (cleanly) and upgraded connections; other proxied requests go on until `stop`.
   */
  async endStreams(): Promise<void> {
    this.abort.abort();
    this.discovery.stop();
    this.openapiAggregation.stop();
    for (const end of [...this.streams]) end();
    await this.availability?.stop();
  }

  /** Closes every connection to extension servers (once the server has drained). */
  async stop(): Promise<void> {
    await this.endStreams();
    this.transport.stop();
  }
}
