import { randomUUID, X509Certificate } from 'node:crypto';
import { canonicalize, isObject, jsonEqual, nowTimestamp, type Obj } from '../api/object-util.js';
import { StorageError } from '../api/storage-error.js';
import type { Storage } from '../storage/storage.js';
import { pemCertificates } from '../tls/reloading-files.js';

export const AUTHENTICATION_CONFIGMAP_NAMESPACE = 'kube-system';
export const AUTHENTICATION_CONFIGMAP_NAME = 'extension-apiserver-authentication';
const KEY = `${AUTHENTICATION_CONFIGMAP_NAMESPACE}/${AUTHENTICATION_CONFIGMAP_NAME}`;

/** What this server tells extension API servers about authenticating its clients and itself. */
export interface ClusterAuthenticationInfo {
  /** PEM bundle verifying client certificates ('' for none). */
  clientCA: () => string;
  /** PEM bundle verifying the front proxy (the aggregator), '' when front-proxy authentication is off. */
  requestheaderCA: () => string;
  requestheaderUsernameHeaders: string[];
  requestheaderUidHeaders: string[];
  requestheaderGroupHeaders: string[];
  requestheaderExtraHeadersPrefix: string[];
  requestheaderAllowedNames: string[];
}

const RESYNC_MS = 60_000;
/** kube keeps certificates until five minutes after they expire. */
const EXPIRY_SLACK_MS = 5 * 60_000;

function jsonList(text: string | undefined): string[] {
  if (text === undefined || text === '') return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter((s): s is string => typeof s === 'string') : [];
  } catch {
    return [];
  }
}

function unique(lhs: string[], rhs: string[]): string[] {
  return [...new Set([...lhs, ...rhs])];
}

/** Certificates of both bundles, the existing ones first, without duplicates or long-expired ones, re-encoded. */
function combineBundles(lhs: string, rhs: string, now: number): string {
  const seen = new Set<string>();
  let out = '';
  for (const pem of [...pemCertificates(lhs), ...pemCertificates(rhs)]) {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(pem);
    } catch {
      continue;
    }
    if (Date.parse(cert.validTo) <= now - EXPIRY_SLACK_MS) continue;
    const der = cert.raw.toString('base64');
    if (seen.has(der)) continue;
    seen.add(der);
    const lines = der.match(/.{1,64}/g) ?? [];
    out += `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
  }
  return out;
}

/**
 * The ConfigMap data kube's cluster authentication trust controller writes: what is already there
 * combined with this server's (so servers with different settings sharing a store all end up
 * listed): `client-ca-file`, and with a front-proxy CA the `requestheader-*` keys (header lists and
 * allowed names as JSON arrays; `requestheader-uid-headers` only when some are configured).
 */
export function authenticationConfigMapData(existing: Record<string, string>, info: ClusterAuthenticationInfo, now = Date.now()): Record<string, string> {
  const data: Record<string, string> = {};
  const clientCA = combineBundles(existing['client-ca-file'] ?? '', info.clientCA(), now);
  if (clientCA !== '') data['client-ca-file'] = clientCA;
  const requestheaderCA = combineBundles(existing['requestheader-client-ca-file'] ?? '', info.requestheaderCA(), now);
  if (requestheaderCA === '') return data;
  data['requestheader-username-headers'] = JSON.stringify(unique(jsonList(existing['requestheader-username-headers']), info.requestheaderUsernameHeaders));
  const uid = unique(jsonList(existing['requestheader-uid-headers']), info.requestheaderUidHeaders);
  if (uid.length > 0) data['requestheader-uid-headers'] = JSON.stringify(uid);
  data['requestheader-group-headers'] = JSON.stringify(unique(jsonList(existing['requestheader-group-headers']), info.requestheaderGroupHeaders));
  data['requestheader-extra-headers-prefix'] = JSON.stringify(
    unique(jsonList(existing['requestheader-extra-headers-prefix']), info.requestheaderExtraHeadersPrefix),
  );
  data['requestheader-client-ca-file'] = requestheaderCA;
  data['requestheader-allowed-names'] = JSON.stringify(unique(jsonList(existing['requestheader-allowed-names']), info.requestheaderAllowedNames));
  // Keys in the order kube's JSON encoding of a map gives them.
  return Object.fromEntries(Object.entries(data).sort(([a], [b]) => (a < b ? -1 : 1)));
}

function stringData(obj: Obj): Record<string, string> {
  const data = isObject(obj.data) ? obj.data : {};
  return Object.fromEntries(Object.entries(data).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/**
 * Publishes `kube-system/extension-apiserver-authentication` as kube-apiserver does, for extension
 * API servers to configure their delegated authentication from: at start, once a minute, and
 * whenever the ConfigMap changes (a deleted one comes back). Writes only on a difference, create if
 * absent or compare and swap, so every process that runs it converges on the same object.
 */
export class AuthenticationConfigMapPublisher {
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly storage: Storage,
    private readonly info: ClusterAuthenticationInfo,
    private readonly onError: (err: unknown) => void,
  ) {}

  async start(): Promise<void> {
    const from = await this.storage.currentResourceVersion('configmaps');
    await this.storage.watch(
      'configmaps',
      from,
      (e) => {
        if (e.key === KEY) this.enqueue();
      },
      this.abort.signal,
      this.onError,
    );
    this.timer = setInterval(() => this.enqueue(), RESYNC_MS);
    this.timer.unref();
    this.enqueue();
    await this.queue;
  }

  stop(): void {
    clearInterval(this.timer);
    this.abort.abort();
  }

  private enqueue(): void {
    this.queue = this.queue.then(() => this.sync()).catch(this.onError);
  }

  private async sync(): Promise<void> {
    if (this.abort.signal.aborted) return;
    const stored = await this.storage.get('configmaps', KEY);
    try {
      if (stored === undefined) {
        const data = authenticationConfigMapData({}, this.info);
        const metadata = {
          name: AUTHENTICATION_CONFIGMAP_NAME,
          namespace: AUTHENTICATION_CONFIGMAP_NAMESPACE,
          uid: randomUUID(),
          creationTimestamp: nowTimestamp(),
        };
        await this.storage.create('configmaps', KEY, canonicalize({ metadata, data }, 'ConfigMap', 'v1'));
        return;
      }
      const cm = JSON.parse(stored.json) as Obj;
      const data = authenticationConfigMapData(stringData(cm), this.info);
      if (jsonEqual(cm.data, data)) return;
      await this.storage.update('configmaps', KEY, { ...cm, data }, stored.resourceVersion);
    } catch (err) {
      // Another process wrote first: its change comes back as an event and is looked at again.
      if (err instanceof StorageError && (err.code === 'AlreadyExists' || err.code === 'Conflict' || err.code === 'NotFound')) return;
      throw err;
    }
  }
}
