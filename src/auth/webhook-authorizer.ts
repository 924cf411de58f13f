import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { dirname, isAbsolute, join } from 'node:path';
import { load as loadYaml } from 'js-yaml';
import { isObject, type Obj } from '../api/object-util.js';
import type { AuthorizationAttributes, Authorizer, Decision } from './authorizer.js';
import { stringField } from '../api/values.js';

/** `--authorization-webhook-*` settings. */
export interface WebhookAuthorizerOptions {
  /** A kubeconfig naming the webhook's server and the credentials to call it with. */
  configFile: string;
  /** The SubjectAccessReview version sent: v1 or v1beta1 (kube's default). */
  version: 'v1' | 'v1beta1';
  /** How long allowed and not-allowed answers are reused (kube's defaults: 5 minutes and 30 seconds). */
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  /** Per call (kube: 30 s). */
  timeoutMs?: number;
}

interface Endpoint {
  url: URL;
  tls: RequestOptions;
  token: string;
}

/** The first entry of `list` named `name` (or the first entry), as kubeconfig sections are. */
function named(list: unknown, name: string, field: string): Obj {
  const items = Array.isArray(list) ? list.filter(isObject) : [];
  const hit = items.find((i) => i.name === name) ?? items[0];
  return hit !== undefined && isObject(hit[field]) ? hit[field] : {};
}

/** Reads the webhook's kubeconfig: server, CA, client certificate and key, or token (file paths relative to it). */
export function readWebhookConfig(file: string): Endpoint {
  const config: unknown = loadYaml(readFileSync(file, 'utf8'));
  if (!isObject(config)) throw new Error(`${file}: not a kubeconfig`);
  const current = stringField(config, 'current-context');
  const context = named(config.contexts, current, 'context');
  const cluster = named(config.clusters, stringField(context, 'cluster'), 'cluster');
  const user = named(config.users, stringField(context, 'user'), 'user');
  const server = stringField(cluster, 'server');
  if (server === '') throw new Error(`${file}: no server for the authorization webhook`);
  const path = (p: string): string => (isAbsolute(p) ? p : join(dirname(file), p));
  const bytes = (dataKey: string, fileKey: string, from: Obj): Buffer | undefined => {
    if (stringField(from, dataKey) !== '') return Buffer.from(stringField(from, dataKey), 'base64');
    if (stringField(from, fileKey) !== '') return readFileSync(path(stringField(from, fileKey)));
    return undefined;
  };
  const tls: RequestOptions = {
    ca: bytes('certificate-authority-data', 'certificate-authority', cluster),
    cert: bytes('client-certificate-data', 'client-certificate', user),
    key: bytes('client-key-data', 'client-key', user),
    rejectUnauthorized: cluster['insecure-skip-tls-verify'] !== true,
  };
  const tokenFile = stringField(user, 'tokenFile');
  const token = stringField(user, 'token') || (tokenFile !== '' ? readFileSync(path(tokenFile), 'utf8').trim() : '');
  return { url: new URL(server), tls, token };
}

/** The SubjectAccessReview kube's webhook authorizer sends for `a`. */
export function webhookReview(a: AuthorizationAttributes, version: 'v1' | 'v1beta1'): Obj {
  const spec: Obj = { user: a.user.name };
  if (a.user.uid !== '') spec.uid = a.user.uid;
  if (a.user.groups.length > 0) spec[version === 'v1' ? 'groups' : 'group'] = a.user.groups;
  if (Object.keys(a.user.extra).length > 0) spec.extra = a.user.extra;
  if (a.resourceRequest) {
    spec.resourceAttributes = {
      namespace: a.namespace,
      verb: a.verb,
      group: a.apiGroup,
      version: a.apiVersion,
      resource: a.resource,
      subresource: a.subresource,
      name: a.name,
    };
  } else {
    spec.nonResourceAttributes = { path: a.path, verb: a.verb };
  }
  return {
    apiVersion: `authorization.k8s.io/${version}`,
    kind: 'SubjectAccessReview',
    metadata: { creationTimestamp: null },
    spec,
    status: { allowed: false },
  };
}

/**
 * kube's Webhook authorization mode: asks a remote service with a SubjectAccessReview per request.
 * Its `allowed` allows, its `denied` refuses outright (no later mode is asked), otherwise it has no
 * opinion with the service's reason. Answers are reused for the configured TTLs, as kube reuses
 * them. A failed call has no opinion and reports the failure as an evaluation error.
 */
export class WebhookAuthorizer implements Authorizer {
  private readonly endpoint: Endpoint;
  private readonly cache = new Map<string, { decision: Decision; expires: number }>();

  constructor(private readonly options: WebhookAuthorizerOptions) {
    this.endpoint = readWebhookConfig(options.configFile);
  }

  async authorize(attrs: AuthorizationAttributes): Promise<Decision> {
    const review = webhookReview(attrs, this.options.version);
    const key = JSON.stringify(review.spec);
    const now = Date.now();
    const cached = this.cache.get(key);
    if (cached !== undefined && cached.expires > now) return cached.decision;
    let status: Obj;
    try {
      status = await this.call(review);
    } catch (err) {
      return { allowed: false, reason: '', evaluationError: `Post "${this.endpoint.url.href}": ${err instanceof Error ? err.message : String(err)}` };
    }
    const decision: Decision = { allowed: status.allowed === true, reason: stringField(status, 'reason') };
    if (!decision.allowed && status.denied === true) decision.denied = true;
    const ttl = decision.allowed ? this.options.authorizedTtlMs : this.options.unauthorizedTtlMs;
    if (ttl > 0) {
      if (this.cache.size >= 10_000) this.cache.clear();
      this.cache.set(key, { decision, expires: now + ttl });
    }
    return decision;
  }

  private call(review: Obj): Promise<Obj> {
    const { url, tls, token } = this.endpoint;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (token !== '') headers.authorization = `Bearer ${token}`;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(url, { method: 'POST', headers, timeout: this.options.timeoutMs ?? 30_000, ...(url.protocol === 'https:' ? tls : {}) }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('error', reject);
        res.on('end', () => {
          if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) > 299) {
            reject(new Error(`the webhook answered ${String(res.statusCode)}: ${text.slice(0, 200)}`));
            return;
          }
          try {
            const body: unknown = JSON.parse(text);
            resolve(isObject(body) && isObject(body.status) ? body.status : {});
          } catch {
            reject(new Error('the webhook answered something other than JSON'));
          }
        });
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject);
      req.end(JSON.stringify(review));
    });
  }
}
