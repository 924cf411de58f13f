import { statSync } from 'node:fs';
import { isObject, type Obj } from '../api/object-util.js';
import type { User } from '../api/user.js';
import { WebhookCallError, WebhookClient, type WebhookClientConfig } from '../webhook/webhook-client.js';
import type { AuthenticationResult, TokenAuthenticator } from './authenticator.js';
import { CachedTokenAuthenticator } from './token-cache.js';
import { readWebhookConfig } from './webhook-authorizer.js';
import { stringElements } from '../api/values.js';

/**
 * kube's webhook token authenticator (`--authentication-token-webhook-config-file`): a bearer token
 * no other authenticator accepted is POSTed in a TokenReview (authentication.k8s.io v1beta1 by
 * default, or v1) to the service a kubeconfig names, with the audiences the token must be for. Its
 * `status.authenticated` user is the request's user (for the audiences both sides agree on); a
 * refusal with `status.error` is an authentication error, one without is not this authenticator's.
 * A failed call is retried as kube retries it (connection resets, 500, 504 and 429 answers; five
 * attempts, backoff from 0.5 s by 1.5 with 20% jitter), then is an error. Answers (not failed calls)
 * are cached for `--authentication-token-webhook-cache-ttl`.
 */

export interface TokenWebhookOptions {
  configFile: string;
  version: string;
  cacheTtlMs: number;
  /** The API server's audiences: tokens are for them unless a TokenReview asks for others. */
  apiAudiences: readonly string[];
  log: (message: string, fields: Record<string, unknown>) => void;
}

const TIMEOUT_MS = 30_000;
const BACKOFF = { durationMs: 500, factor: 1.5, jitter: 0.2, steps: 5 };

/** The webhook's answer: its TokenReview status. */
interface ReviewStatus {
  authenticated: boolean;
  user: User;
  audiences: string[];
  error: string;
}

function statusOf(body: unknown): ReviewStatus {
  const status: Obj = isObject(body) && isObject(body.status) ? body.status : {};
  const user: Obj = isObject(status.user) ? status.user : {};
  const extra: Record<string, string[]> = {};
  if (isObject(user.extra)) for (const [k, v] of Object.entries(user.extra)) extra[k] = stringElements(v);
  return {
    authenticated: status.authenticated === true,
    user: {
      name: typeof user.username === 'string' ? user.username : '',
      uid: typeof user.uid === 'string' ? user.uid : '',
      groups: stringElements(user.groups),
      extra,
    },
    audiences: stringElements(status.audiences),
    error: typeof status.error === 'string' ? status.error : '',
  };
}

/** kube's DefaultShouldRetry for the answers Capstan's webhook client reports. */
function shouldRetry(err: WebhookCallError): boolean {
  if (err.message.endsWith('read: connection reset by peer')) return true;
  return ['InternalError', 'Timeout', 'TooManyRequests'].includes(err.status.reason);
}

export class TokenWebhookAuthenticator implements TokenAuthenticator {
  private readonly target: WebhookClientConfig;
  private readonly client = new WebhookClient({
    resolve: () => Promise.reject(new Error('the token webhook is named by URL')),
  });

  /** Reads the kubeconfig; throws an Error with kube's message when it cannot be used. */
  constructor(private readonly options: TokenWebhookOptions) {
    try {
      statSync(options.configFile);
    } catch {
      throw new Error(`stat ${options.configFile}: no such file or directory`);
    }
    let endpoint;
    try {
      endpoint = readWebhookConfig(options.configFile);
    } catch (err) {
      throw new Error(`error loading config file "${options.configFile}": ${err instanceof Error ? err.message : String(err)}`);
    }
    if (options.version !== 'v1' && options.version !== 'v1beta1') {
      throw new Error(`unsupported authentication webhook version "${options.version}", supported versions are "v1", "v1beta1"`);
    }
    const { ca, cert, key } = endpoint.tls;
    this.target = {
      url: endpoint.url.href,
      caBundle: Buffer.isBuffer(ca) ? ca.toString('base64') : undefined,
      credentials: {
        clientCertificate: Buffer.isBuffer(cert) && Buffer.isBuffer(key) ? { cert, key } : undefined,
        bearerToken: endpoint.token === '' ? undefined : endpoint.token,
        insecureSkipTLSVerify: endpoint.tls.rejectUnauthorized === false,
      },
    };
  }

  async authenticateToken(token: string, audiences?: string[]): Promise<AuthenticationResult> {
    const wanted = audiences ?? [...this.options.apiAudiences];
    const spec: Obj = { token };
    if (wanted.length > 0) spec.audiences = wanted;
    const review = { kind: 'TokenReview', apiVersion: `authentication.k8s.io/${this.options.version}`, metadata: {}, spec, status: { user: {} } };
    let body: unknown;
    try {
      body = await this.call(review);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.options.log('Failed to make webhook authenticator request', { err: message });
      return { error: message };
    }
    const status = statusOf(body);
    let granted: string[] | undefined;
    if (wanted.length > 0) {
      const got = status.audiences.length > 0 ? status.audiences : this.options.apiAudiences;
      granted = wanted.filter((a) => got.includes(a));
      if (granted.length === 0) return undefined;
    }
    if (!status.authenticated) return status.error === '' ? undefined : { error: status.error };
    return granted === undefined ? { user: status.user } : { user: status.user, audiences: granted };
  }

  /** One review, retried with kube's backoff while the failure is one kube retries. */
  private async call(review: object): Promise<unknown> {
    let wait = BACKOFF.durationMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.client.post(this.target, review, { timeoutMs: TIMEOUT_MS });
      } catch (err) {
        if (!(err instanceof WebhookCallError) || !shouldRetry(err) || attempt >= BACKOFF.steps) throw err;
      }
      await new Promise((resolve) => setTimeout(resolve, wait * (1 + Math.random() * BACKOFF.jitter)));
      wait *= BACKOFF.factor;
    }
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.client.close();
  }
}

/** The webhook behind kube's cache of its answers: authenticated and refused ones alike, for `cacheTtlMs`. */
export function cachedTokenWebhook(options: TokenWebhookOptions): { authenticator: TokenAuthenticator; close: () => void } {
  const webhook = new TokenWebhookAuthenticator(options);
  const authenticator = new CachedTokenAuthenticator(webhook, { successTtlMs: options.cacheTtlMs, failureTtlMs: options.cacheTtlMs, cacheErrors: false });
  return { authenticator, close: () => webhook.close() };
}
