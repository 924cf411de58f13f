import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { Agent, request as httpsRequest, type AgentOptions } from 'node:https';
import type { ClientRequest } from 'node:http';
import type { User } from '../api/user.js';
import { ReloadingFiles } from '../tls/reloading-files.js';
import { bundleHasLeaf, LeafTrustingAgent } from '../webhook/leaf-trusting-agent.js';
import { serviceServerName, type ApiServiceInfo } from './api-service.js';
import { endpointText, type Endpoint } from './service-routes.js';

/** The user kube's aggregator checks and downloads discovery and OpenAPI as. */
export const AGGREGATOR_USER: User = { name: 'system:kube-aggregator', uid: '', groups: ['system:masters'], extra: {} };

/** A buffered answer of an extension API server. */
export interface BackendResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** Largest discovery or OpenAPI document read from an extension server. */
const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;
const MAX_AGENTS = 100;

/** Escapes an extra key for an `X-Remote-Extra-` header name as client-go does (%-encoding). */
function headerKeyEscape(key: string): string {
  let out = '';
  for (const byte of Buffer.from(key, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9!#$&'*+\-.^_`|~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * client-go's SetAuthProxyHeaders: the user as `X-Remote-User`, `X-Remote-Uid` (kube 1.33+'s
 * RemoteRequestHeaderUID is on by default), one `X-Remote-Group` per group and one
 * `X-Remote-Extra-KEY` per extra value, replacing whatever the request carried under these names.
 */
export function setAuthProxyHeaders(headers: OutgoingHttpHeaders, user: User): void {
  for (const name of Object.keys(headers)) {
    const lower = name.toLowerCase();
    if (lower === 'x-remote-user' || lower === 'x-remote-uid' || lower === 'x-remote-group' || lower.startsWith('x-remote-extra-')) delete headers[name];
  }
  headers['X-Remote-User'] = user.name;
  if (user.uid !== '') headers['X-Remote-Uid'] = user.uid;
  if (user.groups.length > 0) headers['X-Remote-Group'] = [...user.groups];
  for (const [key, values] of Object.entries(user.extra)) if (values.length > 0) headers[`X-Remote-Extra-${headerKeyEscape(key)}`] = [...values];
}

/**
 * The TLS side of talking to extension API servers, as kube's aggregator builds it per APIService:
 * the server's certificate is verified for `NAME.NAMESPACE.svc` against the APIService's `caBundle`
 * (the system roots when empty; not at all with `insecureSkipTLSVerify`), and the aggregator presents
 * its proxy client certificate (`--proxy-client-cert-file`, re-read when it changes on disk). One
 * keep-alive agent per trust set, so consecutive requests reuse connections.
 */
export class ProxyTransport {
  private readonly agents = new Map<string, Agent>();
  private readonly byInfo = new WeakMap<ApiServiceInfo, Agent>();
  /** Agents no longer handed out, whose open connections (watches) are left to finish. */
  private readonly retired = new Set<Agent>();
  private readonly clientCertificate: ReloadingFiles | undefined;

  constructor(certFile: string, keyFile: string) {
    if (certFile !== '' && keyFile !== '') {
      this.clientCertificate = new ReloadingFiles([certFile, keyFile]);
      // A rotated certificate is used for new connections: agents made with the old one go.
      this.clientCertificate.onChange(() => this.retireAgents());
      this.clientCertificate.watch();
    }
  }

  /** The agent for an APIService's trust settings. */
  agentFor(info: ApiServiceInfo): Agent {
    // The APIService as read is replaced on every change: its agent is remembered with it.
    const known = this.byInfo.get(info);
    if (known !== undefined && !this.retired.has(known)) return known;
    const servername = info.service === undefined ? '' : serviceServerName(info.service);
    const key = `${servername}\n${info.insecureSkipTLSVerify}\n${info.caBundle}`;
    let agent = this.agents.get(key);
    if (agent !== undefined) {
      this.byInfo.set(info, agent);
      return agent;
    }
    if (this.agents.size >= MAX_AGENTS) this.retireAgents();
    const [cert, clientKey] = this.clientCertificate?.current() ?? [];
    const options: AgentOptions = { keepAlive: true, maxFreeSockets: 64, servername, cert, key: clientKey };
    if (info.insecureSkipTLSVerify) agent = new Agent({ ...options, rejectUnauthorized: false });
    else if (info.caBundle !== '' && bundleHasLeaf(info.caBundle)) agent = new LeafTrustingAgent({ ...options, ca: Buffer.from(info.caBundle) });
    else agent = new Agent(info.caBundle === '' ? options : { ...options, ca: info.caBundle });
    this.agents.set(key, agent);
    this.byInfo.set(info, agent);
    return agent;
  }

  /** Starts a request to the extension server at `endpoint` (the caller writes the body and ends it). */
  request(info: ApiServiceInfo, endpoint: Endpoint, method: string, path: string, headers: OutgoingHttpHeaders, signal?: AbortSignal): ClientRequest {
    return httpsRequest({
      host: endpoint.host,
      port: endpoint.port,
      method,
      path,
      headers: { ...headers, Host: endpointText(endpoint) },
      agent: this.agentFor(info),
      signal,
    });
  }

  /**
   * GETs `path` as the aggregator (`system:kube-aggregator` in `system:masters`) and reads the whole
   * answer (at most 64 MiB), within `timeoutMs`. Rejects with the network error.
   */
  fetch(
    info: ApiServiceInfo,
    endpoint: Endpoint,
    path: string,
    headers: OutgoingHttpHeaders,
    timeoutMs: number,
    user = AGGREGATOR_USER,
  ): Promise<BackendResponse> {
    const outgoing: OutgoingHttpHeaders = { ...headers };
    setAuthProxyHeaders(outgoing, user);
    const signal = AbortSignal.timeout(timeoutMs);
    const attempt = (retry: boolean): Promise<BackendResponse> =>
      new Promise<BackendResponse>((resolve, reject) => {
        const req = this.request(info, endpoint, 'GET', path, outgoing, signal);
        req.on('error', (err: NodeJS.ErrnoException) => {
          // A pooled connection the server closed meanwhile: once more on a new one, as Go's transport does.
          if (retry && req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) attempt(false).then(resolve, reject);
          else reject(err);
        });
        req.on('response', (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_DOCUMENT_BYTES) req.destroy(new Error(`the answer of ${path} is larger than ${MAX_DOCUMENT_BYTES} bytes`));
            else chunks.push(chunk);
          });
          res.on('error', reject);
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        });
        req.end();
      });
    return attempt(true);
  }

  /** Closes every connection and stops watching the certificate files. */
  stop(): void {
    this.clientCertificate?.stop();
    this.retireAgents();
    for (const agent of this.retired) agent.destroy();
    this.retired.clear();
  }

  /** New requests get new agents; the idle connections of the current ones are closed. */
  private retireAgents(): void {
    for (const agent of this.agents.values()) {
      for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
      this.retired.add(agent);
    }
    this.agents.clear();
  }
}
