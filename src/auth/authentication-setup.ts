import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ServerConfig } from '../config/server-config.js';
import { StartupError } from '../config/startup-error.js';
import type { ServingSetup } from '../tls/serving-setup.js';
import type { Storage } from '../storage/storage.js';
import { AuthenticationChain } from './authentication-chain.js';
import type { TokenAuthenticator } from './authenticator.js';
import { ClientCertificateAuthenticator } from './client-certificates.js';
import { publicKeysFromPem } from './jwt.js';
import { RequestHeaderAuthenticator } from './request-header.js';
import { ServiceAccountAuthenticator } from './service-account-authenticator.js';
import { DEFAULT_ISSUER, ServiceAccountTokens } from './service-account-tokens.js';
import { TokenFile } from './token-file.js';
import { audienceAgnostic } from './audience-agnostic.js';
import { buildJwtSetup, loadJwtConfiguration } from './oidc/jwt-setup.js';
import { cachedTokenWebhook, TokenWebhookAuthenticator } from './token-webhook.js';
import { anonymousAuthUnderAuthorization } from './anonymous-auth-flag.js';
import { logger } from '../logging/logger.js';

/** The server's authentication: the request chain, and the service account token issuer. */
export interface AuthenticationSetup {
  chain: AuthenticationChain;
  tokens: ServiceAccountTokens;
  /** How long TokenRequests' tokens live (see TokenLifetimes). */
  lifetimes: TokenLifetimes;
}

/** kube's TokenRequest lifetime settings. */
export interface TokenLifetimes {
  /** The longest lifetime granted, in seconds (0: no limit). */
  maxSeconds: number;
  /** Whether pod-bound tokens of the default 3607 s for the API audiences are extended to a year. */
  extend: boolean;
}

function readOrExplain(flag: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new StartupError(`cannot read --${flag} ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** kube-apiserver's cache of token authentication: successes for 10 s, failures not at all. */
const TOKEN_CACHE = { successTtlMs: 10_000, failureTtlMs: 0 };

/**
 * Builds the authentication chain the flags describe (JWT issuers and the authentication
 * configuration file: see oidc/jwt-setup.ts; the token webhook: token-webhook.ts). `signal` stops
 * the background work (issuer discovery, file reloads, webhook connections). Service account tokens are signed with
 * `--service-account-signing-key-file`, else the key generated in `--cert-dir`, else (an in-process
 * server without HTTPS) a key generated for this process only.
 */
export function buildAuthentication(config: ServerConfig, storage: Storage, serving: ServingSetup | undefined, signal: AbortSignal): AuthenticationSetup {
  let signingKey: string;
  if (config.serviceAccountSigningKeyFile !== '') signingKey = readOrExplain('service-account-signing-key-file', config.serviceAccountSigningKeyFile);
  else if (serving !== undefined) signingKey = serving.certDir.serviceAccountKey;
  else signingKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const verifyKeys = config.serviceAccountKeyFiles.flatMap((path) => {
    try {
      return publicKeysFromPem(readOrExplain('service-account-key-file', path));
    } catch (err) {
      if (err instanceof StartupError) throw err;
      throw new StartupError(`invalid --service-account-key-file ${path}: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  const issuers = config.serviceAccountIssuers.length > 0 ? config.serviceAccountIssuers : [DEFAULT_ISSUER];
  let tokens: ServiceAccountTokens;
  try {
    if (verifyKeys.length === 0) verifyKeys.push(createPublicKey(signingKey));
    tokens = new ServiceAccountTokens(signingKey, verifyKeys, issuers, config.apiAudiences.length > 0 ? config.apiAudiences : issuers);
  } catch (err) {
    throw new StartupError(`invalid service account signing key: ${err instanceof Error ? err.message : String(err)}`);
  }
  const tokenAuthenticators: TokenAuthenticator[] = [];
  if (config.tokenAuthFile !== '') {
    try {
      tokenAuthenticators.push(audienceAgnostic(tokens.apiAudiences, new TokenFile(config.tokenAuthFile)));
    } catch (err) {
      throw new StartupError(`invalid --token-auth-file: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  tokenAuthenticators.push(new ServiceAccountAuthenticator(tokens, storage, config.serviceAccountLookup));
  // kube keeps the JWT issuers after service accounts (their unknown keys would make issuers be asked again), then the webhook.
  const authLog = (level: 'info' | 'error', message: string, fields?: Record<string, unknown>): void => logger.log(level, message, fields);
  const anonymousAuth = anonymousAuthUnderAuthorization(config.anonymousAuth, config.authorizationMode, (message) => logger.warn(message));
  const jwt = buildJwtSetup({ ...config, anonymousAuth }, issuers, authLog, signal);
  if (jwt.authenticator !== undefined) tokenAuthenticators.push(audienceAgnostic(tokens.apiAudiences, jwt.authenticator));
  if (config.tokenWebhook.configFile !== '') {
    try {
      const webhook = cachedTokenWebhook({
        ...config.tokenWebhook,
        apiAudiences: tokens.apiAudiences,
        log: (message, fields) => logger.error(message, fields),
      });
      signal.addEventListener('abort', webhook.close, { once: true });
      tokenAuthenticators.push(webhook.authenticator);
    } catch (err) {
      throw new StartupError(err instanceof Error ? err.message : String(err));
    }
  }
  const requestheaderRoots = serving?.requestheaderRoots();
  const chain = new AuthenticationChain({
    requestHeader:
      requestheaderRoots === undefined
        ? undefined
        : new RequestHeaderAuthenticator({
            roots: requestheaderRoots,
            allowedNames: config.requestheaderAllowedNames,
            usernameHeaders: config.requestheaderUsernameHeaders,
            uidHeaders: config.requestheaderUidHeaders,
            groupHeaders: config.requestheaderGroupHeaders,
            extraHeaderPrefixes: config.requestheaderExtraHeadersPrefix,
          }),
    clientCertificates: serving === undefined ? undefined : new ClientCertificateAuthenticator(() => serving.clientRoots()),
    tokens: tokenAuthenticators,
    anonymous: jwt.anonymous.enabled,
    anonymousPaths: jwt.anonymous.paths,
    apiAudiences: tokens.apiAudiences,
    tokenCache: TOKEN_CACHE,
  });
  const lifetimes = { maxSeconds: config.serviceAccountMaxTokenExpirationSeconds ?? 0, extend: config.serviceAccountExtendTokenExpiration ?? true };
  return { chain, tokens, lifetimes };
}

/**
 * The start-up refusals of the JWT, authentication configuration and token webhook flags, checked
 * without starting anything (the cluster primary checks them before forking workers).
 */
export function checkAuthenticationFlags(config: ServerConfig): void {
  loadJwtConfiguration(config, config.serviceAccountIssuers.length > 0 ? config.serviceAccountIssuers : [DEFAULT_ISSUER]);
  if (config.tokenWebhook.configFile === '') return;
  try {
    new TokenWebhookAuthenticator({ ...config.tokenWebhook, apiAudiences: [], log: () => undefined }).close();
  } catch (err) {
    throw new StartupError(err instanceof Error ? err.message : String(err));
  }
}
