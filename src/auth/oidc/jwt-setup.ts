import { readFileSync } from 'node:fs';
import type { ServerConfig } from '../../config/server-config.js';
import { StartupError } from '../../config/startup-error.js';
import { parseAuthenticationConfiguration, type AuthenticationConfiguration, type JwtAuthenticatorSpec } from './authentication-configuration.js';
import { ANONYMOUS_FLAG_CONFLICT, invalidConfigurationMessage, validateAuthenticationConfiguration } from './authentication-config-validation.js';
import { AuthenticationConfigReloader } from './authentication-config-reloader.js';
import { SIGNING_ALGORITHMS } from './jws.js';
import type { AuthLog } from './jwt-authenticator.js';
import { buildJwtAuthenticatorSet, checkJwtAuthenticator, JwtAuthentication } from './jwt-authentication.js';

/** What `--authentication-config` and the `--oidc-*` flags configure. */
export interface JwtSetup {
  /** The JWT token authenticator (undefined: no issuer configured and no file to reload). */
  authenticator?: JwtAuthentication;
  /** The anonymous authenticator: on or off, and the only request paths it serves when listed. */
  anonymous: { enabled: boolean; paths?: ReadonlySet<string> };
}

/** Go's wording of a file that cannot be read (`open PATH: no such file or directory`). */
export function goFileError(path: string, err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return `open ${path}: no such file or directory`;
  if (code === 'EACCES') return `open ${path}: permission denied`;
  if (code === 'EISDIR') return `read ${path}: is a directory`;
  return err instanceof Error ? err.message : String(err);
}

/** kube's JWT authenticator made from the `--oidc-*` flags. */
function specFromFlags(config: ServerConfig): JwtAuthenticatorSpec {
  const o = config.oidc;
  let usernamePrefix = o.usernamePrefix;
  // kube's legacy rule: without a prefix, names from claims other than email get the issuer's.
  if (usernamePrefix === '' && o.usernameClaim !== 'email') usernamePrefix = `${o.issuerUrl}#`;
  if (o.usernamePrefix === '-') usernamePrefix = '';
  let certificateAuthority = '';
  if (o.caFile !== '') {
    try {
      certificateAuthority = readFileSync(o.caFile, 'utf8');
    } catch (err) {
      throw new StartupError(goFileError(o.caFile, err));
    }
  }
  return {
    issuer: { url: o.issuerUrl, audiences: [o.clientId], certificateAuthority, audienceMatchPolicy: '', egressSelectorType: '' },
    claimValidationRules: Object.entries(o.requiredClaims).map(([claim, requiredValue]) => ({ claim, requiredValue, expression: '', message: '' })),
    claimMappings: {
      username: { claim: o.usernameClaim, prefix: usernamePrefix, expression: '' },
      groups: o.groupsClaim === '' ? { claim: '', expression: '' } : { claim: o.groupsClaim, prefix: o.groupsPrefix, expression: '' },
      uid: { claim: '', expression: '' },
      extra: [],
    },
    userValidationRules: [],
  };
}

/** The configuration read and checked at start. */
interface LoadedJwtConfiguration {
  file: string;
  text: string;
  parsed: AuthenticationConfiguration;
  signingAlgs: readonly string[];
  anonymous: JwtSetup['anonymous'];
}

/**
 * Reads and checks the flags and the file, in kube-apiserver's order and with its messages:
 * `authentication-config file and oidc-* flags are mutually exclusive`, `failed to load authentication
 * configuration from file "F": ...`, `anonymous: Forbidden: --anonymous-auth flag cannot be set ...`,
 * `invalid authentication configuration: ...`, then each issuer's own checks (`issuer.url: ... must
 * not overlap with disallowed issuers`). Throws StartupError; starts nothing.
 */
export function loadJwtConfiguration(config: ServerConfig, serviceAccountIssuers: readonly string[]): LoadedJwtConfiguration {
  const file = config.authenticationConfigFile;
  const oidc = config.oidc;
  if (file === '') {
    if (oidc.flagsSet && (oidc.issuerUrl === '' || oidc.clientId === '')) {
      throw new StartupError('oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set');
    }
  } else if (oidc.flagsSet) throw new StartupError('authentication-config file and oidc-* flags are mutually exclusive');
  let text = '';
  let parsed: AuthenticationConfiguration = { jwt: [] };
  let signingAlgs: readonly string[] = SIGNING_ALGORITHMS;
  if (file !== '') {
    try {
      text = readFileSync(file, 'utf8');
      parsed = parseAuthenticationConfiguration(text);
    } catch (err) {
      throw new StartupError(`failed to load authentication configuration from file "${file}": ${goFileError(file, err)}`);
    }
  } else if (oidc.issuerUrl !== '' && oidc.clientId !== '') {
    parsed = { jwt: [specFromFlags(config)] };
    signingAlgs = oidc.signingAlgs;
  }
  let anonymous: JwtSetup['anonymous'] = { enabled: config.anonymousAuth };
  if (parsed.anonymous !== undefined) {
    if (config.anonymousAuthFlagSet) throw new StartupError(ANONYMOUS_FLAG_CONFLICT);
    const paths = parsed.anonymous.conditions.map((c) => c.path);
    anonymous = { enabled: parsed.anonymous.enabled, paths: paths.length > 0 ? new Set(paths) : undefined };
  }
  // kube validates the file here without the service account issuers (they are checked per issuer below).
  const errors = validateAuthenticationConfiguration(parsed, []);
  if (errors.length > 0) throw new StartupError(invalidConfigurationMessage(errors));
  for (const spec of parsed.jwt) {
    const checked = checkJwtAuthenticator(spec, { signingAlgs, disallowedIssuers: serviceAccountIssuers });
    if (typeof checked === 'string') throw new StartupError(checked);
  }
  return { file, text, parsed, signingAlgs, anonymous };
}

/**
 * The JWT authenticators and anonymous settings of the flags and the file (see
 * loadJwtConfiguration for the refusals). The file is then watched and reloaded until `signal` aborts.
 */
export function buildJwtSetup(config: ServerConfig, serviceAccountIssuers: readonly string[], log: AuthLog, signal: AbortSignal): JwtSetup {
  const { file, text, parsed, signingAlgs, anonymous } = loadJwtConfiguration(config, serviceAccountIssuers);
  if (parsed.jwt.length === 0 && file === '') return { anonymous };
  const build = { signingAlgs, disallowedIssuers: serviceAccountIssuers, log, signal };
  let authenticator: JwtAuthentication;
  try {
    authenticator = new JwtAuthentication(buildJwtAuthenticatorSet(parsed.jwt, build));
  } catch (err) {
    throw new StartupError(err instanceof Error ? err.message : String(err));
  }
  signal.addEventListener('abort', () => authenticator.stop(), { once: true });
  if (file !== '')
    new AuthenticationConfigReloader({ path: file, initialText: text, initial: parsed, authentication: authenticator, build, log, signal }).start();
  return { authenticator, anonymous };
}
