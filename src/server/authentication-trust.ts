import { randomUUID, X509Certificate } from 'node:crypto';
import { canonicalize, nowTimestamp, type Obj } from '../api/object-util.js';
import { StorageError } from '../api/storage-error.js';
import type { Storage } from '../storage/storage.js';
import type { ServerConfig } from '../config/server-config.js';
import type { ServingSetup } from '../tls/serving-setup.js';

/**
 * The `kube-system/extension-apiserver-authentication` ConfigMap, as kube-apiserver's cluster
 * authentication trust controller keeps it: the client CA bundle this server trusts
 * (`client-ca-file`) and, with front-proxy authentication, its CA, allowed names and headers
 * (`requestheader-*`, string lists as JSON). Components that delegate authentication to the server
 * (kube-controller-manager, kube-scheduler, aggregated API servers with `--authentication-kubeconfig`)
 * read it to verify client certificates. Several servers over one storage each merge what they trust
 * into it (certificates and names are unioned, certificates expired over five minutes ago dropped).
 */

const TYPE = 'configmaps';
const NAMESPACE = 'kube-system';
const NAME = 'extension-apiserver-authentication';
const RESYNC_MS = 60_000;

/** What this server trusts for client authentication. */
export interface AuthenticationTrust {
  /** PEM certificates verifying client certificates. */
  clientCA: string[];
  /** Front-proxy authentication (`--requestheader-*`), when its CA is set. */
  requestHeader?: {
    ca: string[];
    usernameHeaders: string[];
    uidHeaders: string[];
    groupHeaders: string[];
    extraHeaderPrefixes: string[];
    allowedNames: string[];
  };
}

function certificatesOf(bundle: string | undefined): string[] {
  return bundle?.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
}

/** `lhs` then `rhs` without repeats (by DER bytes) and without certificates expired over five minutes ago. */
function combineCertificates(lhs: string[], rhs: string[]): string {
  const cutoff = Date.now() - 5 * 60_000;
  const seen = new Set<string>();
  const out: string[] = [];
  for (const pem of [...lhs, ...rhs]) {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(pem);
    } catch {
      continue;
    }
    if (Date.parse(cert.validTo) <= cutoff) continue;
    const der = cert.raw.toString('base64');
    if (seen.has(der)) continue;
    seen.add(der);
    const lines = der.match(/.{1,64}/g) ?? [];
    out.push(`-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`);
  }
  return out.join('');
}

function stringList(json: string | undefined): string[] {
  if (json === undefined || json === '') return [];
  try {
    const parsed: unknown = JSON.parse(json);
    return Array.isArray(parsed) ? parsed.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}

function combineStrings(existing: string | undefined, required: string[]): string {
  return JSON.stringify([...new Set([...stringList(existing), ...required])]);
}

/** The ConfigMap's data: what is there merged with what `trust` requires, keys sorted as Go writes a map. */
export function mergedTrustData(existing: Record<string, string>, trust: AuthenticationTrust): Record<string, string> {
  const data = unsortedTrustData(existing, trust);
  return Object.fromEntries(Object.entries(data).sort(([a], [b]) => (a < b ? -1 : 1)));
}

function unsortedTrustData(existing: Record<string, string>, trust: AuthenticationTrust): Record<string, string> {
  const data: Record<string, string> = {};
  const clientCA = combineCertificates(certificatesOf(existing['client-ca-file']), trust.clientCA);
  if (clientCA !== '') data['client-ca-file'] = clientCA;
  const rh = trust.requestHeader;
  const existingRhCA = certificatesOf(existing['requestheader-client-ca-file']);
  const rhCA = combineCertificates(existingRhCA, rh?.ca ?? []);
  if (rhCA === '') return data;
  data['requestheader-username-headers'] = combineStrings(existing['requestheader-username-headers'], rh?.usernameHeaders ?? []);
  const uid = combineStrings(existing['requestheader-uid-headers'], rh?.uidHeaders ?? []);
  if (uid !== '[]') data['requestheader-uid-headers'] = uid;
  data['requestheader-group-headers'] = combineStrings(existing['requestheader-group-headers'], rh?.groupHeaders ?? []);
  data['requestheader-extra-headers-prefix'] = combineStrings(existing['requestheader-extra-headers-prefix'], rh?.extraHeaderPrefixes ?? []);
  data['requestheader-client-ca-file'] = rhCA;
  data['requestheader-allowed-names'] = combineStrings(existing['requestheader-allowed-names'], rh?.allowedNames ?? []);
  return data;
}

/** The managedFields entry kube-apiserver's writes leave: an Update owning each data key. */
function managerEntry(data: Record<string, string>): Obj {
  const fields: Obj = { '.': {} };
  for (const k of Object.keys(data).sort()) fields[`f:${k}`] = {};
  return { apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': fields }, manager: 'kube-apiserver', operation: 'Update', time: nowTimestamp() };
}

/** `managedFields` with kube-apiserver's entry replaced by one for `data`. */
function withManagerEntry(managedFields: unknown, data: Record<string, string>): Obj[] {
  const others = Array.isArray(managedFields) ? (managedFields as Obj[]).filter((e) => e.manager !== 'kube-apiserver' || e.operation !== 'Update') : [];
  return [...others, managerEntry(data)];
}

function sameData(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

/**
 * Keeps the ConfigMap holding what this server trusts: written at `start`, then checked every
 * minute (a deleted or edited ConfigMap is restored, another server's additions kept).
 */
export class AuthenticationTrustPublisher {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly storage: Storage,
    private readonly trust: () => AuthenticationTrust,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Writes the ConfigMap (errors go to `onError`), then keeps it. */
  async start(): Promise<void> {
    await this.syncReported();
    if (!this.stopped) this.timer = setInterval(() => void this.syncReported(), RESYNC_MS).unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  private async syncReported(): Promise<void> {
    try {
      await this.sync();
    } catch (err) {
      this.onError(err);
    }
  }

  /** One read-merge-write, retried on a conflicting write by another server. */
  async sync(): Promise<void> {
    const key = `${NAMESPACE}/${NAME}`;
    for (let attempt = 0; attempt < 5; attempt++) {
      const stored = await this.storage.get(TYPE, key);
      if (stored === undefined) {
        const data = mergedTrustData({}, this.trust());
        const metadata = {
          name: NAME,
          namespace: NAMESPACE,
          uid: randomUUID(),
          creationTimestamp: nowTimestamp(),
          managedFields: withManagerEntry(undefined, data),
        };
        try {
          await this.storage.create(TYPE, key, canonicalize({ metadata, data }, 'ConfigMap', 'v1'));
          return;
        } catch (err) {
          if (err instanceof StorageError && err.code === 'AlreadyExists') continue;
          throw err;
        }
      }
      const obj = JSON.parse(stored.json) as Obj;
      const existing = (typeof obj.data === 'object' && obj.data !== null ? obj.data : {}) as Record<string, string>;
      const data = mergedTrustData(existing, this.trust());
      if (sameData(existing, data)) return;
      try {
        const metadata = { ...(obj.metadata as Obj), managedFields: withManagerEntry((obj.metadata as Obj | undefined)?.managedFields, data) };
        await this.storage.update(TYPE, key, { ...obj, metadata, data }, stored.resourceVersion);
        return;
      } catch (err) {
        if (err instanceof StorageError && (err.code === 'Conflict' || err.code === 'NotFound')) continue;
        throw err;
      }
    }
  }
}

/** What the server trusts for client certificates and front-proxy requests, as of the last reload of its files. */
function authenticationTrustOf(config: ServerConfig, serving: ServingSetup): AuthenticationTrust {
  const rhCA = serving.requestheaderRootsPem();
  return {
    clientCA: serving.clientRootsPem(),
    requestHeader:
      rhCA === undefined
        ? undefined
        : {
            ca: rhCA,
            usernameHeaders: config.requestheaderUsernameHeaders,
            uidHeaders: config.requestheaderUidHeaders,
            groupHeaders: config.requestheaderGroupHeaders,
            extraHeaderPrefixes: config.requestheaderExtraHeadersPrefix,
            allowedNames: config.requestheaderAllowedNames,
          },
  };
}

/** The publisher of an HTTPS server (undefined without HTTPS: no client certificates to trust). */
export function authenticationTrustPublisher(
  config: ServerConfig,
  storage: Storage,
  serving: ServingSetup | undefined,
  onError: (err: unknown) => void,
): AuthenticationTrustPublisher | undefined {
  return serving === undefined ? undefined : new AuthenticationTrustPublisher(storage, () => authenticationTrustOf(config, serving), onError);
}
