import { KubeletClient } from '../kubelet/kubelet-client.js';
import { setMaxListeners } from 'node:events';
import { authFilter } from './auth-filter.js';
import { authorizerFor, parseAuthorizationModes, type Authorizer } from '../auth/authorizer.js';
import { RbacAuthorizer } from '../auth/rbac/rbac-authorizer.js';
import { WebhookAuthorizer } from '../auth/webhook-authorizer.js';
import { WatchedPolicy } from '../auth/rbac/rbac-policy.js';
import { NodeAuthorizer } from '../auth/node/node-authorizer.js';
import { NodeGraph } from '../auth/node/node-graph.js';
import { ensureBootstrapPolicy } from '../auth/rbac/bootstrap-policy.js';
import type { Authenticator } from '../auth/authenticator.js';
import { buildAuthentication, type AuthenticationSetup } from '../auth/authentication-setup.js';
import { auditIdFilter } from '../auth/audit-id.js';
import { AuditLog } from '../audit/audit-log.js';
import { oidcDiscoveryRouter } from '../auth/oidc-discovery.js';
import { ServingSetup } from '../tls/serving-setup.js';
import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Server as TlsServer, TLSSocket } from 'node:tls';
import type { AddressInfo, Socket } from 'node:net';
import { admissionChain } from '../admission/admission-chain.js';
import { webhookAdmission } from '../admission/webhook-admission.js';
import { MutatingAdmissionPolicyPlugin } from '../admission/policy/mutating-policy-admission.js';
import { ValidatingAdmissionPolicyPlugin } from '../admission/policy/validating-policy-admission.js';
import { listenOrExplain } from '../config/startup-error.js';
import type { ServerConfig } from '../config/server-config.js';
import { writeError } from '../codec/response-writer.js';
import { errorLogger, requestLogger } from './request-logger.js';
import { compressionLayer, responseCompression } from './response-compression.js';
import { headerBytesPreserving } from './header-bytes.js';
import { requestPipeline } from './request-pipeline.js';
import { logger } from '../logging/logger.js';
import { metricsMiddleware, metricsRouter } from '../metrics/metrics-router.js';
import { setStorageStatsCollector, type StoredTypeStats } from '../metrics/metrics.js';
import { storageTypeOf } from '../api/resource-info.js';
import { queryBool } from '../api/request-options.js';
import { DEFAULT_VERSION_INFO, discoveryRouter } from '../discovery/discovery-router.js';
import type { ServerContext } from '../rest/server-context.js';
import { byRequestKind, notFoundHandler, resourceHandler, watchersFirstLayer } from '../handlers/resource-router.js';
import { requestUser } from '../handlers/http-scope.js';
import { HealthChecks } from '../health/health-checks.js';
import { healthRouter } from '../health/health-router.js';
import { requestDeadlineFilter } from './request-deadline.js';
import { controllerManagerFor } from '../controllers/controller-manager.js';
import { clusterSigningConfig } from '../controllers/cluster-signing.js';
import { CrdRegistrar } from '../controllers/crd-registrar.js';
import { authenticationTrustPublisher } from './authentication-trust.js';
import { FlowControlConfigController } from '../controllers/flowcontrol-config-controller.js';
import { ApiserverIdentityLease } from '../controllers/apiserver-identity-lease.js';
import { openapiRouter, sharedOpenApiService } from '../openapi/openapi-router.js';
import { servedPathFilter } from '../openapi/served-paths.js';
import { ResourceCatalog } from '../catalog/resource-catalog.js';
import type { Storage } from '../storage/storage.js';
import { advertiseAddressFor, bootstrapCluster } from './bootstrap.js';
import { electedServerControllers } from './elected-controllers.js';
import { ensureLocalApiServices } from './bootstrap-apiservices.js';
import { ServiceNetwork } from '../services/service-allocation.js';
import { FlowControl } from '../flowcontrol/flow-control.js';
import { readTlsThroughStream } from './tls-read-pausing.js';
import { acceptRequest, installClientErrorHandler, lingerOnEarlyAnswer, MAX_HEADER_BYTES } from './http-framing.js';
import { LISTEN_BACKLOG } from './listen-backlog.js';
import { expressRequests, goAway, isHttp2 } from './http2-requests.js';
import { closeIdleConnections, secureServer } from './secure-server.js';
import type { ClientConnections } from './client-connections.js';
import { parsedRequestOf, parseRequest } from '../api/parsed-request.js';
import { Lifecycle } from './lifecycle.js';
import { Aggregator } from '../aggregator/aggregator.js';
import { withFrontProxyDefaults } from '../aggregator/front-proxy-defaults.js';

/** A running Capstan API server. */
export interface CapstanServer {
  app: Express;
  /** The plain-HTTP loopback server when `--insecure-port` is on, else the HTTPS one. */
  http: Server;
  context: ServerContext;
  health: HealthChecks;
  /** URL clients reach the server at: the plain-HTTP loopback port when served, else the HTTPS one (the primary's listeners when connections are handed in). */
  url: string;
  /** `https://host:port` of the secure port, when served. */
  secureUrl: string | undefined;
  /** The server that serves connections arriving on local port `port` (handed-in connections). */
  serverForPort(port: number): Server | undefined;
  /** Asks one HTTP/2 client to reconnect (see SecureServer.shedSession); false when none carried requests. */
  shedConnection(share: number, settling?: ReadonlySet<string>): boolean;
  /** Sends GOAWAY on HTTP/2 connection `session`, as numbered to HandedConnections.clients (see SecureServer.moveSession). */
  moveConnection(session: number): boolean;
  /** Serving certificates and CAs (undefined without HTTPS). */
  serving: ServingSetup | undefined;
  /** Authentication chain and service account token issuer. */
  authentication: AuthenticationSetup;
  /** Graceful shutdown: readyz fails, waits the shutdown delay, ends watches, drains, closes storage. */
  close(): Promise<void>;
}

/** Compression applies to get and list responses, never to watch streams (they must flush per event). */
function isWatchRequest(req: Request): boolean {
  return queryBool(parsedRequestOf(req).query, 'watch') || req.path.includes('/watch/');
}

/** Whether a request's answer is a stream of another origin: a proxied answer or a container's log. */
function isStreamedSubresource(req: Request): boolean {
  const subresource = parsedRequestOf(req).info?.subresource;
  return subresource === 'proxy' || subresource === 'log';
}

/**
 * Subresources that take over an upgrade request's connection: a pod's, service's or node's proxy
 * and a pod's streams to its kubelet (spliced to the backend), a pod's log (served as a WebSocket).
 */
const UPGRADED_SUBRESOURCES = new Map<string, readonly string[]>([
  ['pods', ['proxy', 'exec', 'attach', 'portforward', 'log']],
  ['services', ['proxy']],
  ['nodes', ['proxy']],
]);

/** Whether an upgrade request's target splices upgraded connections (see UPGRADED_SUBRESOURCES). */
function isProxyUpgradeTarget(url: string): boolean {
  const info = parseRequest('GET', url).info;
  return info !== undefined && info.group === '' && (UPGRADED_SUBRESOURCES.get(info.resource)?.includes(info.subresource ?? '') ?? false);
}

/**
 * Builds the Express app and HTTP server over `storage`: discovery, OpenAPI, health, and every resource
 * path. Runs bootstrap (system namespaces and objects, APF configuration, local APIServices) as a
 * post-start hook. What kube-apiserver does in every instance (its identity Lease, the APF
 * configuration and FlowSchema status) runs when `instanceControllers` is set (one process per
 * instance). The controllers of kube-controller-manager that Capstan has run under one leader
 * election across every process on the storage: the in-server ones (namespaces, default
 * ServiceAccounts, kube-root-ca.crt, legacy tokens, policy status, role aggregation; see
 * elected-controllers.ts) and those `--controllers` enables (garbage collector, disruption, ...).
 */
export interface StartOptions {
  /** Who requests act as (default: every request is the administrator, in system:masters). */
  authenticator?: Authenticator;
  /** What requests may do (default: `--authorization-mode`'s chain); tests inject finer ones. */
  authorizer?: Authorizer;
  /** Compete for the controller manager's lease with the in-server controllers too (default true; false: only `--controllers`' ones). */
  runControllers?: boolean;
  /** Do what every kube-apiserver instance does beside serving (identity Lease, APF configuration) in this process (default: `runControllers`; one process per instance). */
  instanceControllers?: boolean;
  /** Clock for continue tokens (tests). */
  now?: () => number;
  bookmarkIntervalMs?: number;
  maxWatchBacklogBytes?: number;
  /**
   * Serve connections handed in by a cluster primary that owns the listening socket, instead of
   * binding `config.port`. The HTTP server then never listens; its caller injects each socket
   * (`http.emit('connection', socket)`).
   */
  handedConnections?: HandedConnections;
}

/** The primary's listener, for a server whose connections are handed in (see StartOptions). */
export interface HandedConnections {
  /** URL of the primary's listener: the server's URL. */
  url: string;
  /** Port of the primary's listener (announced in the `kubernetes` Service). */
  port: number;
  /** The primary's HTTPS port, when it serves one (connections arriving there are TLS). */
  securePort?: number;
  /** `https://host:port` of the primary's secure listener. */
  secureUrl?: string;
  /** Called once the shutdown delay is over, as the server starts draining: send no new connections. */
  onDraining?(): void;
  /** Told which client each HTTP/2 connection of the secure port serves (the primary keeps a client's connections together). */
  clients?: ClientConnections;
  /**
   * Called once every connection has closed: the server takes no more connections. May return a
   * promise that settles once connections already on their way (claimed, not yet granted) have
   * arrived or been refused; those that arrive are served before the server counts as closed.
   */
  onClosed?(): void | Promise<void>;
}

/** The Webhook mode's authorizer, with kube's refusals of a config file without the mode and the mode without one. */
function webhookAuthorizerFor(config: ServerConfig, modes: readonly string[]): WebhookAuthorizer | undefined {
  const webhook = config.authorizationWebhook;
  if (!modes.includes('Webhook')) {
    if (webhook.configFile !== '') throw new Error('cannot specify --authorization-webhook-config-file without mode Webhook');
    return undefined;
  }
  if (webhook.configFile === '') throw new Error("authorization-mode Webhook's authorization config file not passed");
  return new WebhookAuthorizer(webhook);
}

export async function startServer(given: ServerConfig, storage: Storage, options: StartOptions = {}): Promise<CapstanServer> {
  // First: a bad audit policy stops the start before any other work, as in kube.
  const auditLog = AuditLog.fromConfig(given);
  const config = await withFrontProxyDefaults(given);
  // Components start in order and stop in reverse: the audit log closes last, storage just before it.
  const lifecycle = new Lifecycle();
  if (auditLog !== undefined) await lifecycle.start('audit log', { stop: () => auditLog.close() });
  await lifecycle.start('storage', { stop: () => storage.close() });
  const catalog = ResourceCatalog.builtIn(config.runtimeConfig);
  const shutdown = new AbortController();
  // Every open watch listens for shutdown (and stops listening when it ends): any number is fine.
  setMaxListeners(0, shutdown.signal);
  const modes = parseAuthorizationModes(config.authorizationMode);
  // RBAC decides from this process's own watched copy of the RBAC objects, listed before serving.
  // Escalation checks of RBAC writes resolve rules from it whatever the modes.
  const rbacPolicy = await lifecycle.start('rbac policy', new WatchedPolicy(storage, (error) => logger.warn('RBAC policy watch failed', { error })));
  const rbac = new RbacAuthorizer(rbacPolicy);
  // The Node mode decides from this process's own graph of pods, volumes and attachments, built before serving.
  const nodeGraph = modes.includes('Node') ? new NodeGraph(storage, (error) => logger.warn('node authorizer graph watch failed', { error })) : undefined;
  if (nodeGraph !== undefined) await lifecycle.start('node authorizer graph', nodeGraph);
  const node = nodeGraph === undefined ? undefined : new NodeAuthorizer(nodeGraph);
  const authorizer = options.authorizer ?? authorizerFor(modes, { rbac, webhook: webhookAuthorizerFor(config, modes), node });
  const serving = config.securePort === undefined ? undefined : await ServingSetup.load(config);
  if (serving !== undefined) await lifecycle.start('serving certificates', serving);
  const authentication = buildAuthentication(config, storage, serving, shutdown.signal);
  const webhooks = webhookAdmission(storage, catalog, authorizer, (error) => logger.warn('cannot watch webhook configurations', { error }));
  const policyError = (error: unknown): void => logger.warn('admission policies: watch failed', { error });
  const mutatingPolicies = new MutatingAdmissionPolicyPlugin(catalog, storage, authorizer, shutdown.signal, policyError);
  const validatingPolicies = new ValidatingAdmissionPolicyPlugin(catalog, storage, authorizer, shutdown.signal, policyError);
  const context: ServerContext = {
    authentication,
    authorizer,
    rbacRules: rbac.resolver,
    catalog: catalog,
    storage,
    admission: admissionChain(config.enableAdmissionPlugins, config.disableAdmissionPlugins, {
      storage,
      webhooks,
      mutatingPolicies,
      validatingPolicies,
      authorizer,
      signal: shutdown.signal,
    }),
    featureGates: config.featureGates,
    limits: config.limits,
    historyMs: config.watchCacheHistoryMs,
    minRequestTimeoutSeconds: config.minRequestTimeoutSeconds,
    shutdownSignal: shutdown.signal,
    now: options.now ?? Date.now,
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
    maxWatchBacklogBytes: options.maxWatchBacklogBytes ?? 16 * 1024 * 1024,
    serviceNetwork: new ServiceNetwork(storage, config.serviceClusterIPRange, config.serviceNodePortRange),
    kubelet: new KubeletClient(config),
  };
  setStorageStatsCollector(async () => {
    const stats: Record<string, StoredTypeStats> = {};
    for (const info of catalog.all()) {
      const type = storageTypeOf(info);
      if (stats[type] === undefined && info.verbs.includes('list')) stats[type] = await storage.stats(type);
    }
    return stats;
  });
  const health = new HealthChecks({ livezGracePeriodMs: config.livezGracePeriodMs });
  health.addStorageChecks(async () => {
    if (!(await storage.ready())) throw new Error('storage is not reachable');
  });
  const bootstrapHook = health.addPostStartHook('start-capstan-bootstrap');
  const rbacHook = health.addPostStartHook('rbac/bootstrap-roles');

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // Every request passes these stages in order (see request-pipeline.ts and serveApp below).
  const stages: RequestHandler[] = [];
  stages.push(auditIdFilter());
  // In a terminal (text lines) request lines are detail, shown at --log-level=debug; JSON logs carry them at info.
  stages.push(requestLogger({ level: logger.format === 'text' ? 'debug' : 'info' }));
  stages.push(metricsMiddleware({ isServed: (g, v, r) => catalog.get(g, v, r) !== undefined }));
  stages.push((_req: Request, res: Response, next: NextFunction) => {
    res.setHeader('Cache-Control', 'no-cache, private');
    // Error Status objects may be negotiated as CBOR only with the gate on (see writeError).
    if (config.featureGates.CBORServingAndStorage) res.locals.cborServing = true;
    next();
  });
  if (config.featureGates.APIResponseCompression) {
    // Streams bypass it: watches (it would wrap every event write) and container logs (they must flow
    // as written). Proxied answers pass as the backend sent them (kube compresses only the API objects
    // it encodes itself).
    stages.push(responseCompression((req) => !isWatchRequest(req) && !isStreamedSubresource(req)));
  }
  // Overload protection (APF or the in-flight limits) runs between impersonation and authorization, as in kube.
  const flowControl = await lifecycle.start('flow control', new FlowControl({ config, storage, catalog }));
  // kube's request deadline: covers authentication, a wait in an APF queue, authorization and the handler.
  stages.push(requestDeadlineFilter(config.requestTimeoutMs, (g, v, r) => catalog.get(g, v, r) !== undefined));
  stages.push(authFilter(options.authenticator ?? authentication.chain, authorizer, auditLog, flowControl.filter));
  const openapi = sharedOpenApiService(`runtime-config:${config.runtimeConfig.text}`, servedPathFilter(catalog));
  // Requests for group versions of extension API servers go there, once authorized here.
  let loopbackPort: number | undefined;
  const aggregator = new Aggregator(storage, config, openapi, () =>
    loopbackPort === undefined ? undefined : { host: config.bindAddress === '0.0.0.0' ? '127.0.0.1' : config.bindAddress, port: loopbackPort },
  );
  // Its connections to extension servers close once the HTTP servers have drained.
  await lifecycle.start('aggregator connections', { stop: () => aggregator.stop() });
  stages.push(aggregator.proxy(requestUser));
  let jwksUri = config.serviceAccountJwksUri;
  // Paths without a resource: none of these routers serves a resource path, so a resource
  // request goes straight to its handler and is never matched against their routes.
  const nonResourcePaths = express.Router();
  nonResourcePaths.use(oidcDiscoveryRouter(authentication.tokens, () => jwksUri));
  nonResourcePaths.use(healthRouter(health));
  nonResourcePaths.use(flowControl.debugRouter());
  nonResourcePaths.use(metricsRouter());
  nonResourcePaths.use(
    discoveryRouter(catalog, { version: DEFAULT_VERSION_INFO, isCustomResource: (info) => info.custom === true, extension: aggregator.discoveryExtension() }),
  );
  nonResourcePaths.use(openapiRouter(openapi));
  stages.push(byRequestKind(resourceHandler(context), nonResourcePaths));
  const notFound = notFoundHandler(context);
  stages.push(notFound);
  const pipeline = requestPipeline(stages);
  const logError = errorLogger();

  // Requests and responses are made on the app's prototypes (see expressRequests).
  // Above Express's methods: the header bytes of HTTP/1.1 answers, the decision to gzip a large
  // answer, a write's answer held until watchers have its change (outermost).
  const appObjects = expressRequests(app, aggregator.incomingMessageClass(isProxyUpgradeTarget), {
    http1: headerBytesPreserving,
    both: [compressionLayer, watchersFirstLayer],
  });
  const serverOptions = {
    keepAliveTimeout: 65_000,
    requestTimeout: 0,
    maxHeaderSize: MAX_HEADER_BYTES,
    IncomingMessage: appObjects.classes.IncomingMessage,
    ServerResponse: appObjects.classes.ServerResponse,
  };
  // Errors are logged, then answered as Status objects; a request no stage answered gets the 404.
  const serveApp = (req: IncomingMessage, res: ServerResponse): void => {
    appObjects.prepare(req, res);
    const request = req as Request;
    const response = res as Response;
    pipeline(request, response, (err?: unknown) => {
      if (err === undefined || err === null) notFound(request, response);
      else logError(err, request, response, () => writeError(response, err));
    });
  };
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    // An HTTP/2 stream ends alone; its connection is shared and never lingers.
    if (!isHttp2(req)) lingerOnEarlyAnswer(req);
    if (acceptRequest(req, res)) serveApp(req, res);
  };
  const plain = config.port === undefined ? undefined : createServer(serverOptions, handler);
  // Client certificates are asked for, never required: kube's authenticators decide what they prove.
  const secureServing =
    serving === undefined
      ? undefined
      : secureServer(
          { ...serving.secureContextOptions(), requestCert: true, rejectUnauthorized: false },
          serverOptions,
          config.disableHttp2Serving
            ? undefined
            : {
                maxStreamsPerConnection: config.http2MaxStreamsPerConnection,
                Http2ServerRequest: appObjects.classes.Http2ServerRequest,
                Http2ServerResponse: appObjects.classes.Http2ServerResponse,
              },
          handler,
          options.handedConnections?.clients,
        );
  const secure = secureServing?.server;
  serving?.watch(() => (secure as unknown as TlsServer | undefined)?.setSecureContext(serving.secureContextOptions()));
  const servers: Server[] = [...(plain === undefined ? [] : [plain]), ...(secure === undefined ? [] : [secure])];
  if (servers.length === 0) throw new Error('nothing to serve: neither --secure-port nor --insecure-port is set');
  const http = servers[0];
  const handed = options.handedConnections;
  const connections = new Set<Socket>();
  let onNoConnections: (() => void) | undefined;
  // Once draining, every response closes its connection (as kube-apiserver's Go server does during
  // shutdown) instead of leaving it idle until it is destroyed.
  let draining = false;
  /** When each connection that has not carried a request yet was opened. */
  const openedAt = new WeakMap<Socket, number>();
  const goawayChance = config.goawayChance;
  for (const server of servers) {
    installClientErrorHandler(server);
    aggregator.serveUpgrades(server, handler);
    server.on(server === plain ? 'connection' : 'secureConnection', (socket: Socket) => {
      // An HTTP/2 session reads its connection itself.
      if (server !== plain && (socket as TLSSocket).alpnProtocol !== 'h2') readTlsThroughStream(socket);
      connections.add(socket);
      // An HTTP/2 connection is closed by its GOAWAY, never as a spare one.
      if ((socket as TLSSocket).alpnProtocol !== 'h2') openedAt.set(socket, Date.now());
      socket.on('close', () => {
        connections.delete(socket);
        if (connections.size === 0) onNoConnections?.();
      });
    });
    server.prependListener('request', (req, res) => {
      openedAt.delete(req.socket);
      // HTTP/2 connections get a GOAWAY when draining starts (closeSessions) instead.
      if (isHttp2(req)) {
        if (goawayChance > 0 && Math.random() < goawayChance) goAway(req);
        return;
      }
      if (draining) res.setHeader('Connection', 'close');
      // A response begun before draining (a watch the shutdown ends) leaves its connection idle:
      // close it then, rather than when the last connections are destroyed seconds later.
      else res.once('finish', () => draining && setImmediate(() => closeIdleConnections(server)));
    });
  }
  const listen = async (server: Server, host: string, port: number): Promise<number> => {
    await listenOrExplain(
      host,
      port,
      () =>
        new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen({ port, host, backlog: LISTEN_BACKLOG }, () => {
            server.off('error', reject);
            resolve();
          });
        }),
    );
    return (server.address() as AddressInfo).port;
  };
  const urlOf = (scheme: string, host: string, port: number): string => `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let url = '';
  let port = 0;
  let secureUrl: string | undefined;
  let securePort: number | undefined;
  let plainPort: number | undefined;
  const listenAll = async (): Promise<void> => {
    if (handed === undefined) {
      // The plain port first: a test asking for a taken port sees that port named.
      if (plain !== undefined && config.port !== undefined) plainPort = await listen(plain, config.insecureBindAddress, config.port);
      if (secure !== undefined && config.securePort !== undefined) {
        securePort = await listen(secure, config.bindAddress, config.securePort);
        secureUrl = urlOf('https', config.bindAddress, securePort);
      }
      url = plainPort !== undefined ? urlOf('http', config.insecureBindAddress, plainPort) : (secureUrl ?? '');
      port = securePort ?? plainPort ?? 0;
      loopbackPort = securePort;
    } else {
      // Node starts tracking connections (idle ones closed on shutdown, the headers timeout) when a
      // server starts listening; these never bind, so they are started here.
      for (const server of servers) server.emit('listening');
      url = handed.url;
      secureUrl = handed.secureUrl;
      securePort = handed.securePort;
      port = handed.securePort ?? handed.port;
      plainPort = handed.securePort === handed.port ? undefined : handed.port;
      loopbackPort = handed.securePort;
    }
  };
  /** Resolves once every connection is closed: idle ones at once, others after their response or within 5 s. */
  const drain = (): Promise<void> =>
    new Promise<void>((resolve) => {
      if (handed === undefined) {
        let open = servers.length;
        for (const server of servers)
          server.close(() => {
            if (--open === 0) resolve();
          });
      } else {
        // A server that never listened reports closed at once; drained means no connection left.
        // Connections handed in while draining count too, until the last one closes.
        const closed = async (): Promise<void> => {
          onNoConnections = undefined;
          await handed.onClosed?.();
          // A connection granted while closing is served first; then the server is closed.
          if (connections.size === 0) resolve();
          else onNoConnections = () => resolve();
        };
        onNoConnections = () => {
          void closed();
        };
        for (const server of servers) server.close();
        if (connections.size === 0) onNoConnections();
      }
      for (const server of servers) closeIdleConnections(server);
      secureServing?.closeSessions();
      // Node never counts a connection without a request as idle, but clients open spare ones (Go's
      // transport does): close each once it has been open a second without a request.
      for (const s of connections) {
        const opened = openedAt.get(s);
        if (opened !== undefined) setTimeout(() => openedAt.has(s) && s.destroy(), Math.max(0, opened + 1000 - Date.now())).unref();
      }
      setTimeout(() => {
        for (const s of connections) s.destroy();
      }, 5000).unref();
    });
  await lifecycle.start('http servers', { start: listenAll, stop: drain });
  // Stopped before the servers drain: every open watch (and every policy cache's) ends, so draining can finish.
  await lifecycle.start('open watches', { stop: () => shutdown.abort() });
  const serverForPort = (localPort: number): Server | undefined =>
    localPort === securePort && secure !== undefined ? secure : localPort === plainPort ? plain : undefined;

  // Every process serves the custom resources of the stored CRDs (and races the others on their status).
  await lifecycle.start('crd registrar', new CrdRegistrar(context, { openapi, onError: (msg, error) => logger.warn(msg, { error }) }));
  await lifecycle.start('admission webhooks', { start: () => webhooks.start(), stop: () => webhooks.close() });
  // Every process proxies the APIServices it watches; on shutdown, proxied watches end before the drain.
  await lifecycle.start('aggregator', { start: () => aggregator.start(), stop: () => aggregator.endStreams() });
  // Every process watches the admission policies; writes wait until the first lists are cached.
  await lifecycle.start('admission policies', { start: () => Promise.all([mutatingPolicies.start(), validatingPolicies.start()]) });
  const advertised = config.advertiseAddress || advertiseAddressFor(config.bindAddress);
  if (jwksUri === '') jwksUri = securePort === undefined ? '' : `${urlOf('https', advertised, securePort)}/openid/v1/jwks`;
  await bootstrapCluster(storage, { address: advertised, port }, config.serviceClusterIPRange);
  await ensureLocalApiServices(storage, catalog);
  await ensureBootstrapPolicy(storage);
  rbacHook.done();
  const authenticationTrust = authenticationTrustPublisher(config, storage, serving, (error) =>
    logger.warn('cannot write kube-system/extension-apiserver-authentication', { error }),
  );
  if (authenticationTrust !== undefined) await lifecycle.start('extension-apiserver-authentication', authenticationTrust);
  if (options.instanceControllers ?? options.runControllers !== false) {
    await lifecycle.start('flow control configuration', new FlowControlConfigController(storage));
    await lifecycle.start('apiserver identity lease', new ApiserverIdentityLease(storage, { peerAddress: `${advertised}:${port}` }));
    // kube-aggregator's availability controller runs in every instance (stopped by the aggregator's endStreams).
    await lifecycle.start('aggregator controllers', { start: () => aggregator.startControllers() });
  }
  // Every process is a candidate; the elected one runs every controller of the manager (started
  // before this resolves when this process wins the first election).
  const elected = options.runControllers === false ? [] : electedServerControllers(context, { config, serving, tokens: authentication.tokens });
  const controllerManager = controllerManagerFor(context, config.controllers, undefined, { signing: clusterSigningConfig(config, serving) }, elected);
  if (controllerManager !== undefined) await lifecycle.start('controller manager', controllerManager);
  bootstrapHook.done();

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      health.startShutdown();
      if (config.shutdownDelayMs > 0) await new Promise((r) => setTimeout(r, config.shutdownDelayMs));
      draining = true;
      handed?.onDraining?.();
      await lifecycle.stopAll();
    })();
    return closing;
  };
  const shedConnection = (share: number, settling?: ReadonlySet<string>): boolean => secureServing?.shedSession(share, settling) ?? false;
  const moveConnection = (session: number): boolean => secureServing?.moveSession(session) ?? false;
  return { app, http, context, health, url, secureUrl, serverForPort, shedConnection, moveConnection, serving, authentication, close };
}
