/**
 * How kube-apiserver reaches a node's kubelet (kube's NodeConnectionInfoGetter): the node's address
 * of the first preferred type its status lists, the port its status names (else `--kubelet-port`),
 * HTTPS presenting `--kubelet-client-certificate` and verifying the kubelet's certificate against
 * `--kubelet-certificate-authority` only when one is given (kube verifies nothing without it).
 */
import { Agent } from 'node:https';
import { ApiError, notFound } from '../api/errors.js';
import { arrayField, numberField, objectElements, objectField, stringField, type Obj } from '../api/values.js';
import type { KubeletClientConfig } from '../config/server-config.js';
import { ReloadingFiles } from '../tls/reloading-files.js';

/** Where one kubelet answers. */
export interface KubeletConnection {
  scheme: 'https';
  /** The address as the node lists it (a host name or an IP). */
  hostname: string;
  port: number;
  /** `hostname:port` as a URL host (an IPv6 address in brackets). */
  address: string;
  /** The agent for requests that verify the kubelet as configured. */
  agent: Agent;
  /** The agent for `insecureSkipTLSVerifyBackend` (pod logs only): the kubelet's certificate is not verified. */
  insecureAgent: Agent;
  /** The same TLS settings for a connection of its own (an upgraded stream never returns to a pool). */
  tls: KubeletTls;
}

/** The client side of TLS with a kubelet. */
export interface KubeletTls {
  cert?: string;
  key?: string;
  ca?: string;
  rejectUnauthorized: boolean;
}

/** A node's addresses as Go's %v prints a []NodeAddress: `[{InternalIP 10.0.0.1} {Hostname n1}]`. */
function goAddressList(addresses: Obj[]): string {
  return `[${addresses.map((a) => `{${stringField(a, 'type')} ${stringField(a, 'address')}}`).join(' ')}]`;
}

/** The TLS agents of the kubelet client; a rotated client certificate is used for new connections. */
export class KubeletClient {
  private agents: { verified: Agent; insecure: Agent; tls: KubeletTls } | undefined;
  private readonly files: ReloadingFiles | undefined;

  constructor(private readonly config: KubeletClientConfig) {
    const paths = [config.kubeletClientCertificate, config.kubeletClientKey, config.kubeletCertificateAuthority].filter((p) => p !== '');
    if (paths.length > 0) {
      this.files = new ReloadingFiles(paths);
      this.files.onChange(() => this.retire());
      this.files.watch();
    }
  }

  /** The kubelet of `node` (a Node object), or kube's 500 when it lists no address of a preferred type. */
  connectionOf(node: Obj): KubeletConnection {
    const addresses = objectElements(arrayField(objectField(node, 'status'), 'addresses'));
    let hostname: string | undefined;
    for (const type of this.config.kubeletPreferredAddressTypes) {
      const match = addresses.find((a) => stringField(a, 'type') === type);
      if (match === undefined) continue;
      hostname = stringField(match, 'address');
      break;
    }
    if (hostname === undefined) throw new ApiError(500, '', `no preferred addresses found; known addresses: ${goAddressList(addresses)}`);
    const statusPort = numberField(objectField(objectField(objectField(node, 'status'), 'daemonEndpoints'), 'kubeletEndpoint'), 'Port');
    const port = statusPort > 0 ? statusPort : this.config.kubeletPort;
    const { verified, insecure, tls } = this.agentsNow();
    const address = `${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}`;
    return { scheme: 'https', hostname, port, address, agent: verified, insecureAgent: insecure, tls };
  }

  /** Stops watching the certificate files. */
  close(): void {
    this.files?.stop();
    this.retire();
  }

  private agentsNow(): { verified: Agent; insecure: Agent; tls: KubeletTls } {
    if (this.agents !== undefined) return this.agents;
    const contents = this.files?.current() ?? [];
    let i = 0;
    const cert = this.config.kubeletClientCertificate !== '' ? contents[i++] : undefined;
    const key = this.config.kubeletClientKey !== '' ? contents[i++] : undefined;
    const ca = this.config.kubeletCertificateAuthority !== '' ? contents[i++] : undefined;
    const tls: KubeletTls = ca === undefined ? { cert, key, rejectUnauthorized: false } : { cert, key, ca, rejectUnauthorized: true };
    const pooled = { keepAlive: true, maxFreeSockets: 64 };
    this.agents = {
      verified: new Agent({ ...pooled, ...tls }),
      insecure: new Agent({ ...pooled, cert, key, rejectUnauthorized: false }),
      tls,
    };
    return this.agents;
  }

  private retire(): void {
    // Open streams keep their connections (idle ones never keep the process alive); new requests get new agents.
    this.agents = undefined;
  }
}

/** kube's node lookup for a kubelet connection: a missing node is a 404 that names it as a pod (kube's words). */
export function nodeNotFound(name: string): ApiError {
  return notFound({ group: '', resource: 'pods' }, name);
}
