import { parseDuration } from './duration.js';
import type { FlagSpec } from './server-config.js';
import type { ExternalAuthenticationConfig, OidcFlags, TokenWebhookFlags } from './external-authentication-config.js';

function oidcDefaults(c: ExternalAuthenticationConfig): OidcFlags {
  return (c.oidc ??= {
    issuerUrl: '',
    clientId: '',
    caFile: '',
    usernameClaim: 'sub',
    usernamePrefix: '',
    groupsClaim: '',
    groupsPrefix: '',
    signingAlgs: ['RS256'],
    requiredClaims: {},
    flagsSet: false,
  });
}

function webhookDefaults(c: ExternalAuthenticationConfig): TokenWebhookFlags {
  return (c.tokenWebhook ??= { configFile: '', version: 'v1beta1', cacheTtlMs: 120_000 });
}

/**
 * An `--oidc-*` string flag. Defaults are applied with the empty value, which therefore does not
 * count as given (kube counts `--oidc-x=` as given: a difference nobody should meet).
 */
function oidcFlag(name: string, help: string, set: (o: OidcFlags, v: string) => void): FlagSpec {
  return {
    name,
    group: 'authentication',
    default: '',
    help,
    apply: (c, v) => {
      const o = oidcDefaults(c);
      if (v === '') return;
      o.flagsSet = true;
      set(o, v);
    },
  };
}

/** The OIDC, structured authentication, token webhook flags, with kube-apiserver's names and defaults. */
export const AUTHENTICATION_FLAGS: FlagSpec[] = [
  {
    name: 'authentication-config',
    group: 'authentication',
    default: '',
    help: 'AuthenticationConfiguration file (apiserver.config.k8s.io/v1, YAML or JSON): JWT issuers with CEL claim mappings and validation rules, and the anonymous authenticator. Reloaded when it changes. Mutually exclusive with the --oidc-* flags, and with --anonymous-auth when it has an anonymous section.',
    apply: (c, v) => {
      c.authenticationConfigFile = v;
    },
  },
  oidcFlag('oidc-issuer-url', 'The URL of the OpenID issuer (https only); with --oidc-client-id, JWTs it issued are accepted.', (o, v) => {
    o.issuerUrl = v;
  }),
  oidcFlag('oidc-client-id', 'The client ID the tokens must be issued to (their aud); required with --oidc-issuer-url.', (o, v) => {
    o.clientId = v;
  }),
  oidcFlag('oidc-ca-file', "CA bundle verifying the issuer's serving certificate (default: the host's roots).", (o, v) => {
    o.caFile = v;
  }),
  oidcFlag('oidc-username-claim', 'The claim holding the user name (default sub).', (o, v) => {
    o.usernameClaim = v;
  }),
  oidcFlag('oidc-username-prefix', "Prefix of user names. Default: the issuer URL and '#' unless the username claim is email; '-' for none.", (o, v) => {
    o.usernamePrefix = v;
  }),
  oidcFlag('oidc-groups-claim', 'The claim holding the groups (a string or an array of strings).', (o, v) => {
    o.groupsClaim = v;
  }),
  oidcFlag('oidc-groups-prefix', 'Prefix of every group from the groups claim.', (o, v) => {
    o.groupsPrefix = v;
  }),
  oidcFlag(
    'oidc-signing-algs',
    'Comma-separated signing algorithms accepted (default RS256): RS256, RS384, RS512, ES256, ES384, ES512, PS256, PS384, PS512.',
    (o, v) => {
      // A StringSlice flag: the first occurrence replaces the default, later ones add to it.
      const algs = v
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      o.signingAlgs = o.signingAlgsGiven === true ? [...o.signingAlgs, ...algs] : algs;
      o.signingAlgsGiven = true;
    },
  ),
  oidcFlag('oidc-required-claim', 'key=value: a claim the token must have with this string value; repeatable.', (o, v) => {
    const eq = v.indexOf('=');
    if (eq < 0) throw new Error(`invalid argument "${v}" for "--oidc-required-claim" flag: malformed pair, expect string=string`);
    o.requiredClaims[v.slice(0, eq)] = v.slice(eq + 1);
  }),
  {
    name: 'authentication-token-webhook-config-file',
    group: 'authentication',
    default: '',
    help: 'A kubeconfig naming a TokenReview webhook that authenticates bearer tokens the other authenticators do not know.',
    apply: (c, v) => {
      webhookDefaults(c).configFile = v;
    },
  },
  {
    name: 'authentication-token-webhook-version',
    group: 'authentication',
    default: 'v1beta1',
    help: 'The TokenReview version sent to and expected from the webhook: v1beta1 or v1.',
    apply: (c, v) => {
      webhookDefaults(c).version = v;
    },
  },
  {
    name: 'authentication-token-webhook-cache-ttl',
    group: 'authentication',
    default: '2m',
    help: "How long the webhook's answers are reused (authenticated or not; failed calls are not).",
    apply: (c, v) => {
      try {
        webhookDefaults(c).cacheTtlMs = parseDuration(v);
      } catch (err) {
        throw new Error(`invalid argument "${v}" for "--authentication-token-webhook-cache-ttl" flag: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
  },
];
