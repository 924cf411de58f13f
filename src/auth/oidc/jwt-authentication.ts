import type { AuthenticationResult, TokenAuthenticator } from '../authenticator.js';
import type { JwtAuthenticatorSpec } from './authentication-configuration.js';
import { validateJwtAuthenticator, type CompiledJwtRules } from './authentication-config-validation.js';
import { SIGNING_ALGORITHMS } from './jws.js';
import { JwtAuthenticator, type AuthLog } from './jwt-authenticator.js';
import { goQuote, aggregateText } from '../../validation/field-errors.js';

/**
 * The JWT authenticators of one configuration, asked in order as kube's fail-on-error union asks
 * them: the first that recognises the token (its issuer) decides, success or error. Stopping the
 * set ends its discovery retries and key fetches.
 */
export class JwtAuthenticatorSet {
  constructor(
    private readonly members: JwtAuthenticator[],
    private readonly controller: AbortController,
  ) {}

  async authenticate(token: string): Promise<AuthenticationResult> {
    for (const member of this.members) {
      const result = await member.authenticateToken(token);
      if (result !== undefined) return result;
    }
    return undefined;
  }

  /** Settles once every issuer's first discovery attempt has ended. */
  async firstAttempts(): Promise<void> {
    await Promise.all(this.members.map((m) => m.firstAttempt));
  }

  /** kube's health check of the set: the aggregated errors of issuers not yet initialized. */
  healthError(): string | undefined {
    const errors = this.members.map((m) => m.healthError()).filter((e): e is string => e !== undefined);
    return errors.length === 0 ? undefined : aggregateText(errors);
  }

  stop(): void {
    this.controller.abort();
  }
}

export interface JwtBuildOptions {
  /** Algorithms accepted (the flags' list, or every one with the configuration file). */
  signingAlgs: readonly string[];
  /** Issuers a JWT authenticator may not have: the service account issuers. */
  disallowedIssuers: readonly string[];
  log: AuthLog;
  /** The server's lifetime: stopping it stops the set. */
  signal: AbortSignal;
}

/**
 * Builds the authenticators of `jwt` as kube's oidc.New does, throwing an Error with kube's message
 * for the first that cannot be built (`issuer.url: Invalid value: ...: URL must not overlap with
 * disallowed issuers: [...]`, `oidc: unsupported signing alg: "HS256"`, `oidc: egress lookup required
 * with egress selector type "controlplane"`: Capstan has no egress selector configuration).
 */
export function buildJwtAuthenticatorSet(jwt: readonly JwtAuthenticatorSpec[], options: JwtBuildOptions): JwtAuthenticatorSet {
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  options.signal.addEventListener('abort', stop, { once: true });
  controller.signal.addEventListener('abort', () => options.signal.removeEventListener('abort', stop), { once: true });
  const members: JwtAuthenticator[] = [];
  try {
    for (const spec of jwt) {
      const checked = checkJwtAuthenticator(spec, options);
      if (typeof checked === 'string') throw new Error(checked);
      members.push(new JwtAuthenticator({ spec, rules: checked, signingAlgs: options.signingAlgs, signal: controller.signal, log: options.log }));
    }
  } catch (err) {
    controller.abort();
    throw err;
  }
  return new JwtAuthenticatorSet(members, controller);
}

/** kube's oidc.New checks of one issuer: its compiled rules, or the message of the first problem. */
export function checkJwtAuthenticator(
  spec: JwtAuthenticatorSpec,
  options: Pick<JwtBuildOptions, 'signingAlgs' | 'disallowedIssuers'>,
): CompiledJwtRules | string {
  const { errors, rules } = validateJwtAuthenticator(spec, '', options.disallowedIssuers);
  if (errors.length > 0) return aggregateText(errors);
  for (const alg of options.signingAlgs) {
    if (!SIGNING_ALGORITHMS.includes(alg)) return `oidc: unsupported signing alg: ${goQuote(alg)}`;
  }
  // Capstan has no --egress-selector-config-file: kube without one refuses any egress selector type.
  if (spec.issuer.egressSelectorType !== '') return `oidc: egress lookup required with egress selector type ${goQuote(spec.issuer.egressSelectorType)}`;
  return rules;
}

/**
 * The JWT token authenticator of the chain: the current set, replaced when the configuration file
 * is reloaded.
 */
export class JwtAuthentication implements TokenAuthenticator {
  constructor(private current: JwtAuthenticatorSet) {}

  authenticateToken(token: string): Promise<AuthenticationResult> {
    return this.current.authenticate(token);
  }

  /** Puts `next` in place and returns the set it replaces (for the caller to stop later). */
  swap(next: JwtAuthenticatorSet): JwtAuthenticatorSet {
    const previous = this.current;
    this.current = next;
    return previous;
  }

  /** Stops the current set. */
  stop(): void {
    this.current.stop();
  }
}
