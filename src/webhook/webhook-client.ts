import { request as httpsRequest, Agent, type RequestOptions } from 'node:https';
import { request as httpRequest } from 'node:http';
import { isIP } from 'node:net';
import { genericResponse } from '../api/generic-response.js';
import type { Storage } from '../storage/storage.js';
import { bundleHasLeaf, LeafTrustingAgent } from './leaf-trusting-agent.js';

/**
 * Calls webhooks as kube-apiserver's webhook client manager does (k8s.io/apiserver/pkg/util/webhook):
 * admission webhooks and CRD conversion webhooks share it. A `WebhookClientConfig` names either a URL
 * or a Service; a Service is resolved through its EndpointSlices (then its Endpoints, which Capstan
 * has no mirroring controller to turn into slices) to one ready address, while TLS verifies the serving
 * certificate for `NAME.NAMESPACE.svc` against `caBundle`. Errors read as Go's HTTP client and
 * client-go word them (`Post "URL": dial tcp ...: connect: connection refused`), so callers wrap them
 * with their own prefix (`failed calling webhook "x": failed to call webhook: ...`).
 */

/** `admissionregistration.k8s.io/v1` and `apiextensions.k8s.io/v1` WebhookClientConfig. */
export interface WebhookClientConfig {
  url?: string;
  service?: { namespace: string; name: string; path?: string; port?: number };
  /** Base64 of PEM certificates trusted for the serving certificate; absent: the system roots. */
  caBundle?: string;
  /** Credentials a kubeconfig names (the token authentication webhook): never in admission configurations. */
  credentials?: WebhookCredentials;
}

/** A kubeconfig user's credentials and its cluster's TLS choice. */
export interface WebhookCredentials {
  /** PEM client certificate and key. */
  clientCertificate?: { cert: Buffer; key: Buffer };
  /** Sent as `Authorization: Bearer TOKEN`. */
  bearerToken?: string;
  /** The serving certificate is not verified (kubeconfig's insecure-skip-tls-verify). */
  insecureSkipTLSVerify?: boolean;
}

/** A `metav1.Status` as a webhook call failure carries it (code, reason, message). */
export interface WebhookStatus {
  code: number;
  reason: string;
  message: string;
}

/**
 * A webhook that could not be called or did not answer 2xx. `message` is Go's error text for the call
 * (`Post "https://...?timeout=10s": context deadline exceeded`); `status` is the Status kube's
 * dispatchers attach: the webhook's own Status for a non-2xx answer, else 503 "error calling webhook".
 */
export class WebhookCallError extends Error {
  constructor(
    message: string,
    readonly status: WebhookStatus,
    /** Whether the call ended because its timeout elapsed. */
    readonly timedOut = false,
  ) {
    super(message);
    this.name = 'WebhookCallError';
  }
}

/** A reachable address of a Service port. */
export interface ResolvedEndpoint {
  host: string;
  port: number;
}

/** Turns a Service reference into one address to dial; throws an Error whose message kube would show. */
export interface ServiceResolver {
  resolve(namespace: string, name: string, port: number): Promise<ResolvedEndpoint>;
}

/** One call: the body is sent as JSON; the answer is parsed JSON (`unknown`, for the caller to narrow). */
export interface WebhookCallOptions {
  /** Whole-call timeout in ms (kube: the webhook's timeoutSeconds); sent as `?timeout=Ns`. */
  timeoutMs: number;
  /** Aborts the call (the request ended). */
  signal?: AbortSignal;
}

const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
const MAX_AGENTS = 200;

/**
 * The webhook client. One keep-alive agent per trust root and server name (kube caches one REST client
 * per client config), so consecutive calls reuse TLS connections.
 */
export class WebhookClient {
  private readonly agents = new Map<string, Agent>();

  constructor(private readonly services: ServiceResolver) {}

  /**
   * POSTs `body` (JSON) to the webhook and returns its parsed JSON answer. Throws WebhookCallError for
   * every failure to get a 2xx JSON answer within the timeout; never throws anything else.
   */
  async post(config: WebhookClientConfig, body: unknown, options: WebhookCallOptions): Promise<unknown> {
    const target = this.targetOf(config, options.timeoutMs);
    const started = Date.now();
    const signal = options.signal ? AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]) : AbortSignal.timeout(options.timeoutMs);
    let dial: ResolvedEndpoint;
    try {
      dial = target.service ? await this.services.resolve(target.service.namespace, target.service.name, target.service.port) : target.dial;
    } catch (err) {
      throw new WebhookCallError(`Post "${target.url}": ${err instanceof Error ? err.message : String(err)}`, unavailable());
    }
    const payload = Buffer.from(JSON.stringify(body));
    const remaining = options.timeoutMs - (Date.now() - started);
    if (remaining <= 0 || signal.aborted) throw new WebhookCallError(`Post "${target.url}": context deadline exceeded`, unavailable(), true);
    // Go's transport sends a request again, once, when a kept-alive connection it reused was closed
    // by the server before any answer (the server stopped, or timed the idle connection out): the
    // answer is then the new connection's (a refused dial when the server is gone).
    const post = (mayRetry: boolean): Promise<unknown> =>
      new Promise<unknown>((resolve, reject) => {
        const opts: RequestOptions = {
          method: 'POST',
          host: dial.host,
          port: dial.port,
          path: target.path,
          headers: {
            'Content-Type': 'application/json',
            Accept: 'application/json, */*',
            'Content-Length': payload.length,
            Host: target.hostHeader,
            ...(config.credentials?.bearerToken === undefined ? {} : { Authorization: `Bearer ${config.credentials.bearerToken}` }),
          },
          signal,
        };
        const send = target.secure ? httpsRequest : httpRequest;
        if (target.secure) opts.agent = this.agentFor(config.caBundle, target.serverName, config.credentials);
        let answered = false;
        const req = send(opts, (res) => {
          answered = true;
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_RESPONSE_BYTES) {
              req.destroy(new Error('webhook response is too large'));
              return;
            }
            chunks.push(chunk);
          });
          res.on('error', (err) => reject(callError(target.url, err, signal)));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const code = res.statusCode ?? 0;
            const contentType = String(res.headers['content-type'] ?? '');
            if (code < 200 || code > 299) {
              reject(new WebhookCallError(...statusErrorOf(code, contentType, text)));
              return;
            }
            try {
              resolve(JSON.parse(text) as unknown);
            } catch (err) {
              const why = err instanceof Error ? err.message : String(err);
              reject(new WebhookCallError(`couldn't get version/kind; json parse error: ${why}`, unavailable()));
            }
          });
        });
        req.on('error', (err) => {
          if (mayRetry && req.reusedSocket && !answered && isClosedConnection(err) && !signal.aborted) resolve(post(false));
          else reject(callError(target.url, err, signal));
        });
        req.end(payload);
      });
    return post(true);
  }

  private targetOf(config: WebhookClientConfig, timeoutMs: number): Target {
    // client-go rounds the timeout up to whole seconds for the query parameter.
    const query = `?timeout=${Math.ceil(timeoutMs / 1000)}s`;
    if (config.service) {
      const port = config.service.port ?? 443;
      const serverName = `${config.service.name}.${config.service.namespace}.svc`;
      const path = normalizePath(config.service.path ?? '') + query;
      return {
        url: `https://${serverName}:${port}${path}`,
        secure: true,
        serverName,
        hostHeader: `${serverName}:${port}`,
        path,
        service: { namespace: config.service.namespace, name: config.service.name, port },
        dial: { host: '', port: 0 },
      };
    }
    if (config.url === undefined || config.url === '') {
      throw new WebhookCallError('webhook configuration must have either service or URL', unavailable());
    }
    let u: URL;
    try {
      u = new URL(config.url);
    } catch (err) {
      throw new WebhookCallError(`Unparsable URL: ${err instanceof Error ? err.message : String(err)}`, unavailable());
    }
    const secure = u.protocol === 'https:';
    const port = u.port === '' ? (secure ? 443 : 80) : Number(u.port);
    const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
    const path = normalizePath(u.pathname) + query;
    return {
      url: `${u.protocol}//${u.host}${path}`,
      secure,
      serverName: isIP(host) === 0 ? host : '',
      hostHeader: u.host,
      path,
      dial: { host, port },
    };
  }

  private agentFor(caBundle: string | undefined, serverName: string, credentials?: WebhookCredentials): Agent {
    const identity = credentials?.clientCertificate;
    const insecure = credentials?.insecureSkipTLSVerify === true;
    const key = `${serverName}\n${caBundle ?? ''}\n${identity?.cert.toString('base64') ?? ''}\n${String(insecure)}`;
    let agent = this.agents.get(key);
    if (agent === undefined) {
      const ca = caBundle ? Buffer.from(caBundle, 'base64') : undefined;
      const options = {
        keepAlive: true,
        maxSockets: 100,
        ca,
        servername: serverName || undefined,
        ALPNProtocols: ['http/1.1'],
        ...(identity === undefined ? {} : { cert: identity.cert, key: identity.key }),
        ...(insecure ? { rejectUnauthorized: false } : {}),
      };
      // A bundle holding the serving certificate itself (envtest's) is trusted as Go trusts it.
      agent = ca !== undefined && bundleHasLeaf(ca.toString('utf8')) ? new LeafTrustingAgent({ ...options, ca }) : new Agent(options);
      if (this.agents.size >= MAX_AGENTS) {
        const oldest = this.agents.keys().next();
        if (!oldest.done) {
          this.agents.get(oldest.value)?.destroy();
          this.agents.delete(oldest.value);
        }
      }
      this.agents.set(key, agent);
    }
    return agent;
  }

  /** Closes every kept-alive connection. */
  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

interface Target {
  /** The URL as Go prints it in errors. */
  url: string;
  secure: boolean;
  /** Name the serving certificate must hold ('' for an IP URL: Node then checks IP SANs). */
  serverName: string;
  hostHeader: string;
  path: string;
  service?: { namespace: string; name: string; port: number };
  dial: ResolvedEndpoint;
}

/**
 * The request path as client-go's REST client builds it: rooted, and cleaned as Go's path.Join
 * cleans it (repeated slashes and `.`/`..` segments resolved; envtest's webhook URLs have `//path`).
 * A trailing slash is kept.
 */
function normalizePath(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const cleaned = `/${segments.join('/')}`;
  return path.endsWith('/') && cleaned !== '/' ? `${cleaned}/` : cleaned;
}

function unavailable(): WebhookStatus {
  return { code: 503, reason: 'ServiceUnavailable', message: 'error calling webhook' };
}

/** Whether a request failed because its connection was closed under it (reset, or written after the close). */
function isClosedConnection(err: Error): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}

/** Go's wording for a transport failure, behind `Post "URL": `. */
function callError(url: string, err: Error, signal: AbortSignal): WebhookCallError {
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    const timedOut = reason instanceof DOMException && reason.name === 'TimeoutError';
    return new WebhookCallError(`Post "${url}": ${timedOut ? 'context deadline exceeded' : 'context canceled'}`, unavailable(), timedOut);
  }
  return new WebhookCallError(`Post "${url}": ${goNetError(err)}`, unavailable());
}

const CERT_ERRORS: Record<string, string> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'x509: certificate signed by unknown authority',
  SELF_SIGNED_CERT_IN_CHAIN: 'x509: certificate signed by unknown authority',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'x509: certificate signed by unknown authority',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'x509: certificate signed by unknown authority',
  UNABLE_TO_GET_ISSUER_CERT: 'x509: certificate signed by unknown authority',
  CERT_SIGNATURE_FAILURE: 'x509: certificate signed by unknown authority',
  CERT_HAS_EXPIRED: 'x509: certificate has expired or is not yet valid',
  CERT_NOT_YET_VALID: 'x509: certificate has expired or is not yet valid',
};

/** Go's net/http wording of a transport error (`dial tcp 127.0.0.1:1: connect: connection refused`, x509 failures). */
export function goNetError(err: Error): string {
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number; host?: string; reason?: string; hostname?: string };
  const addr = e.address !== undefined ? `${e.address.includes(':') ? `[${e.address}]` : e.address}:${e.port ?? ''}` : '';
  switch (e.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${addr}: connect: connection refused`;
    case 'ECONNRESET':
      return 'read: connection reset by peer';
    case 'EHOSTUNREACH':
      return `dial tcp ${addr}: connect: no route to host`;
    case 'ENETUNREACH':
      return `dial tcp ${addr}: connect: network is unreachable`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `dial tcp: lookup ${e.hostname ?? ''}: no such host`;
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `tls: failed to verify certificate: x509: ${altNameMessage(e.reason ?? e.message)}`;
    default:
      if (e.code !== undefined && CERT_ERRORS[e.code] !== undefined) return `tls: failed to verify certificate: ${CERT_ERRORS[e.code]}`;
      // A plain-HTTP server answering a TLS client: OpenSSL reads its answer as a record of a wrong version.
      if (e.code === 'EPROTO' && e.message.includes('wrong version number')) return 'tls: first record does not look like a TLS handshake';
      if (e.code?.startsWith('ERR_SSL') === true || e.code?.startsWith('EPROTO') === true) return `remote error: tls: ${e.message}`;
      return e.message;
  }
}

/** Node: "Host: a. is not in the cert's altnames: DNS:b" ; Go: "certificate is valid for b, not a". */
function altNameMessage(reason: string): string {
  const m = /Host: (.*?)\.? is not in the cert's altnames: (.*)$/.exec(reason) ?? /IP: (.*?) is not in the cert's list: (.*)$/.exec(reason);
  if (m === null) return `certificate is not valid: ${reason}`;
  const names = m[2]
    .split(/,\s*/)
    .map((n) => n.replace(/^(DNS|IP Address):/, ''))
    .join(', ');
  return `certificate is valid for ${names}, not ${m[1]}`;
}

/** client-go's error for a non-2xx answer: the Status the webhook sent, or its generic server response. */
function statusErrorOf(code: number, contentType: string, text: string): [string, WebhookStatus] {
  if (contentType.includes('json')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === 'object' && parsed !== null && (parsed as Record<string, unknown>).kind === 'Status') {
        const s = parsed as Record<string, unknown>;
        const message = typeof s.message === 'string' ? s.message : '';
        const status = { code: typeof s.code === 'number' ? s.code : code, reason: typeof s.reason === 'string' ? s.reason : '', message };
        return [message, status];
      }
    } catch {
      // Not a Status: the generic answer below.
    }
  }
  const serverMessage = contentType.startsWith('text/') ? text.slice(0, 4096).trim() : 'unknown';
  const [reason, message] = genericResponse(code, serverMessage);
  return [message, { code, reason, message }];
}

/**
 * Resolves Service references from storage as kube's endpoint service resolver does: the Service must
 * be ClusterIP, NodePort or LoadBalancer and have the port; the address is a ready endpoint of an
 * EndpointSlice port with that Service port's name (falling back to the Service's Endpoints).
 */
export class StorageServiceResolver implements ServiceResolver {
  constructor(private readonly storage: Storage) {}

  async resolve(namespace: string, name: string, port: number): Promise<ResolvedEndpoint> {
    const stored = await this.storage.get('services', `${namespace}/${name}`);
    if (stored === undefined) throw new Error(`service "${name}" not found`);
    const svc = JSON.parse(stored.json) as { spec?: { type?: string; ports?: { name?: string; port?: number }[] } };
    const type = svc.spec?.type ?? 'ClusterIP';
    if (type !== 'ClusterIP' && type !== 'NodePort' && type !== 'LoadBalancer') throw new Error(`unsupported service type "${type}"`);
    const svcPort = (svc.spec?.ports ?? []).find((p) => p.port === port);
    if (svcPort === undefined) throw new Error(`no service port ${port} found for service "${name}"`);
    const portName = svcPort.name ?? '';
    const fromSlices = await this.fromSlices(namespace, name, portName);
    const candidates = fromSlices.length > 0 ? fromSlices : await this.fromEndpoints(namespace, name, portName);
    if (candidates.length === 0) throw new Error(`no endpoints available for service "${name}"`);
    return candidates[Math.floor(Math.random() * candidates.length)];
  }

  private async fromSlices(namespace: string, name: string, portName: string): Promise<ResolvedEndpoint[]> {
    const list = await this.storage.list('endpointslices.discovery.k8s.io', { namespace });
    const out: ResolvedEndpoint[] = [];
    for (const item of list.items) {
      const slice = JSON.parse(item.json) as {
        metadata?: { labels?: Record<string, string> };
        ports?: { name?: string; port?: number }[];
        endpoints?: { addresses?: string[]; conditions?: { ready?: boolean } }[];
      };
      if (slice.metadata?.labels?.['kubernetes.io/service-name'] !== name) continue;
      const p = (slice.ports ?? []).find((sp) => (sp.name ?? '') === portName && sp.port !== undefined);
      if (p?.port === undefined) continue;
      for (const ep of slice.endpoints ?? []) {
        if (ep.conditions?.ready === false || ep.addresses === undefined || ep.addresses.length === 0) continue;
        out.push({ host: ep.addresses[0], port: p.port });
      }
      if (out.length > 0) return out;
    }
    return out;
  }

  private async fromEndpoints(namespace: string, name: string, portName: string): Promise<ResolvedEndpoint[]> {
    const stored = await this.storage.get('endpoints', `${namespace}/${name}`);
    if (stored === undefined) return [];
    const eps = JSON.parse(stored.json) as { subsets?: { addresses?: { ip?: string }[]; ports?: { name?: string; port?: number }[] }[] };
    const out: ResolvedEndpoint[] = [];
    for (const subset of eps.subsets ?? []) {
      const p = (subset.ports ?? []).find((sp) => (sp.name ?? '') === portName && sp.port !== undefined);
      if (p?.port === undefined) continue;
      for (const a of subset.addresses ?? []) if (a.ip !== undefined) out.push({ host: a.ip, port: p.port });
    }
    return out;
  }
}
