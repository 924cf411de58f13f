import { isIP } from 'node:net';
import { parseDuration } from './duration.js';
import type { FlagSpec, ServingConfig } from './server-config.js';
import { boolFlag, listFlag } from './flag-values.js';

function port(name: string, v: string): number {
  if (!/^\d+$/.test(v) || Number(v) > 65535) throw new Error(`invalid argument "${v}" for "--${name}" flag: must be a port between 0 and 65535`);
  return Number(v);
}

function isLoopback(address: string): boolean {
  return (isIP(address) === 4 && address.startsWith('127.')) || address === '::1';
}

/** A repeatable flag (kube's stringArray): every occurrence adds to the list. */
function appendTo(c: Record<string, unknown>, field: string, v: string): void {
  const current = Array.isArray(c[field]) ? (c[field] as string[]) : [];
  c[field] = v === '' ? current : [...current, v];
}

/** `--port`: 0 picks a free port. `--insecure-port`: 0 turns the port off, as in kube-apiserver (envtest passes `--insecure-port=0`). */
function insecurePort(name: string, zeroTurnsOff: boolean) {
  return (c: ServingConfig, v: string): void => {
    const n = v === '' ? undefined : port(name, v);
    c.port = n === 0 && zeroTurnsOff ? undefined : n;
  };
}

/** The serving and authentication flags, with kube-apiserver's names. */
export const SERVING_FLAGS: FlagSpec[] = [
  {
    name: 'secure-port',
    group: 'serving',
    default: '6443',
    help: 'The port on which to serve HTTPS with authentication and authorization (0: a free one).',
    apply: (c, v) => {
      c.securePort = port('secure-port', v);
    },
  },
  {
    name: 'insecure-port',
    group: 'serving',
    default: '',
    help: "Also serve plain HTTP on this port of --insecure-bind-address (loopback only), where every request is the local administrator (system:masters), as kube-apiserver's old insecure port. Off unless given; 0: off, as in kube-apiserver.",
    apply: insecurePort('insecure-port', true),
  },
  {
    name: 'port',
    group: 'serving',
    default: '',
    help: "Same as --insecure-port (Capstan's earlier name for its plain-HTTP port), except that 0 picks a free port.",
    apply: insecurePort('port', false),
  },
  {
    name: 'insecure-bind-address',
    group: 'serving',
    default: '127.0.0.1',
    help: 'Loopback address of the plain-HTTP port (127.0.0.0/8 or ::1): it is never reachable from other hosts.',
    apply: (c, v) => {
      if (!isLoopback(v)) throw new Error(`invalid argument "${v}" for "--insecure-bind-address" flag: must be a loopback address (127.0.0.0/8 or ::1)`);
      c.insecureBindAddress = v;
    },
  },
  {
    name: 'tls-cert-file',
    group: 'serving',
    default: '',
    help: 'PEM serving certificate (followed by intermediates); without it a CA and serving certificate are generated in --cert-dir. Reloaded when it changes.',
    apply: (c, v) => {
      c.tlsCertFile = v;
    },
  },
  {
    name: 'tls-private-key-file',
    group: 'serving',
    default: '',
    help: 'PEM private key of --tls-cert-file.',
    apply: (c, v) => {
      c.tlsPrivateKeyFile = v;
    },
  },
  {
    name: 'cert-dir',
    group: 'serving',
    default: '.capstan/pki',
    help: 'Directory of the generated CA (ca.crt), serving certificate (apiserver.crt), admin client certificate (admin.crt) and service account signing key, created on first start and reused. A serving pair already there (apiserver.crt, apiserver.key, as envtest writes it) is served as kube-apiserver does, and the other files are added beside it.',
    apply: (c, v) => {
      c.certDir = v;
    },
  },
  {
    name: 'client-ca-file',
    group: 'authentication',
    default: '',
    help: "CA bundle verifying client certificates (CN: user name, O: groups). The --cert-dir CA, which signs the admin kubeconfig's certificate, is always trusted too.",
    apply: (c, v) => {
      c.clientCAFile = v;
    },
  },
  {
    name: 'token-auth-file',
    group: 'authentication',
    default: '',
    help: 'Static bearer tokens, kube\'s CSV: token,user,uid,"group1,group2".',
    apply: (c, v) => {
      c.tokenAuthFile = v;
    },
  },
  {
    name: 'disable-http2-serving',
    group: 'serving',
    default: 'false',
    help: 'true: the secure port offers only HTTP/1.1. By default it also offers HTTP/2 (ALPN h2), which Go clients (kubectl, client-go) use, multiplexing their requests over one connection as they do with kube-apiserver.',
    apply: (c, v) => {
      c.disableHttp2Serving = boolFlag('disable-http2-serving', v);
    },
  },
  {
    name: 'http2-max-streams-per-connection',
    group: 'serving',
    default: '0',
    help: "The most requests a client may have in flight on one HTTP/2 connection (0: 1000; kube-apiserver's default is 100, see docs/serving-and-security.md).",
    apply: (c, v) => {
      if (!/^\d+$/.test(v))
        throw new Error(`invalid argument "${v}" for "--http2-max-streams-per-connection" flag: strconv.ParseInt: parsing "${v}": invalid syntax`);
      c.http2MaxStreamsPerConnection = Number(v);
    },
  },
  {
    name: 'goaway-chance',
    group: 'serving',
    default: '0',
    help:
      'The fraction of HTTP/2 requests whose connection is told to go away (GOAWAY) as the request arrives: the request and the others already in flight on it (watches too) finish there, and the client opens a new connection for its next ones. ' +
      "With --workers the primary hands a new connection to the least busy worker, so clients' long-lived connections move off a busy worker; behind a load balancer they spread over the pods. " +
      'Between 0 (off, the default) and 0.02; kube-apiserver suggests starting at 0.001.',
    apply: (c, v) => {
      const n = Number(v);
      if (v.trim() === '' || !Number.isFinite(n))
        throw new Error(`invalid argument "${v}" for "--goaway-chance" flag: strconv.ParseFloat: parsing "${v}": invalid syntax`);
      if (n < 0 || n > 0.02) throw new Error('--goaway-chance can not be less than 0 or greater than 0.02');
      c.goawayChance = n;
    },
  },
  {
    name: 'anonymous-auth',
    group: 'authentication',
    default: '',
    help: 'Requests without credentials are system:anonymous in group system:unauthenticated (default true; false: 401). Turned off, as in kube-apiserver, when --authorization-mode includes AlwaysAllow. Not with an --authentication-config that has an anonymous section.',
    apply: (c, v) => {
      if (v !== '' && v !== 'true' && v !== 'false') throw new Error(`invalid argument "${v}" for "--anonymous-auth" flag: must be true or false`);
      c.anonymousAuth = v !== 'false';
      // Given or not matters: kube refuses the flag beside the configuration file's anonymous section.
      c.anonymousAuthFlagSet = v !== '';
    },
  },
  {
    name: 'service-account-key-file',
    group: 'authentication',
    default: '',
    help: 'PEM file of public (or private) RSA/ECDSA keys verifying service account tokens; repeatable. Default: the signing key.',
    apply: (c, v) => appendTo(c as unknown as Record<string, unknown>, 'serviceAccountKeyFiles', v),
  },
  {
    name: 'service-account-signing-key-file',
    group: 'authentication',
    default: '',
    help: 'PEM private key (RSA: RS256, ECDSA P-256: ES256) signing service account tokens. Default: one generated in --cert-dir.',
    apply: (c, v) => {
      c.serviceAccountSigningKeyFile = v;
    },
  },
  {
    name: 'service-account-issuer',
    group: 'authentication',
    default: '',
    help: 'Issuer (iss) of service account tokens; repeatable, the first is used in new tokens, all are accepted. Default: https://kubernetes.default.svc.cluster.local.',
    apply: (c, v) => appendTo(c as unknown as Record<string, unknown>, 'serviceAccountIssuers', v),
  },
  {
    name: 'service-account-jwks-uri',
    group: 'authentication',
    default: '',
    help: 'jwks_uri of the OIDC discovery document (default: https://ADDRESS:PORT/openid/v1/jwks of this server).',
    apply: (c, v) => {
      c.serviceAccountJwksUri = v;
    },
  },
  {
    name: 'service-account-lookup',
    group: 'authentication',
    default: 'true',
    help: 'Refuse service account tokens whose ServiceAccount (or bound Pod, Secret, Node) no longer exists.',
    apply: (c, v) => {
      if (v !== 'true' && v !== 'false') throw new Error(`invalid argument "${v}" for "--service-account-lookup" flag: must be true or false`);
      c.serviceAccountLookup = v === 'true';
    },
  },
  {
    name: 'service-account-max-token-expiration',
    group: 'authentication',
    default: '0s',
    help: 'Longest validity of a token from a TokenRequest; a longer request gets this much (and a warning). Between 1h and 2^32s; 0: no limit.',
    apply: (c, v) => {
      const ms = parseDuration(v);
      if (ms !== 0 && (ms < 3_600_000 || ms > 2 ** 32 * 1000))
        throw new Error('the service-account-max-token-expiration must be between 1 hour and 2^32 seconds');
      c.serviceAccountMaxTokenExpirationSeconds = Math.floor(ms / 1000);
    },
  },
  {
    name: 'service-account-extend-token-expiration',
    group: 'authentication',
    default: 'true',
    help: 'Tokens bound to a pod, asked for the 3607 s the ServiceAccount plugin requests, for the API audiences, are valid for a year (a warnafter claim marks the requested end), ignoring --service-account-max-token-expiration.',
    apply: (c, v) => {
      if (v !== 'true' && v !== 'false') throw new Error(`invalid argument "${v}" for "--service-account-extend-token-expiration" flag: must be true or false`);
      c.serviceAccountExtendTokenExpiration = v === 'true';
    },
  },
  {
    name: 'api-audiences',
    group: 'authentication',
    default: '',
    help: 'Comma-separated audiences a token must carry one of (default: the service account issuers).',
    apply: (c, v) => {
      c.apiAudiences = listFlag(v);
    },
  },
  {
    name: 'requestheader-client-ca-file',
    group: 'authentication',
    default: '',
    help: 'CA bundle verifying front-proxy client certificates; a request with such a certificate is the user its --requestheader-* headers name.',
    apply: (c, v) => {
      c.requestheaderClientCAFile = v;
    },
  },
  {
    name: 'requestheader-allowed-names',
    group: 'authentication',
    default: '',
    help: 'Common names allowed for front-proxy client certificates (empty: any signed by the requestheader CA).',
    apply: (c, v) => {
      c.requestheaderAllowedNames = listFlag(v);
    },
  },
  {
    name: 'requestheader-username-headers',
    group: 'authentication',
    default: '',
    help: 'Request headers carrying the user name (X-Remote-User is common); the first non-empty one is used.',
    apply: (c, v) => {
      c.requestheaderUsernameHeaders = listFlag(v);
    },
  },
  {
    name: 'requestheader-uid-headers',
    group: 'authentication',
    default: '',
    help: 'Request headers carrying the user UID (X-Remote-Uid is common).',
    apply: (c, v) => {
      c.requestheaderUidHeaders = listFlag(v);
    },
  },
  {
    name: 'requestheader-group-headers',
    group: 'authentication',
    default: '',
    help: 'Request headers carrying groups, every value (X-Remote-Group is common).',
    apply: (c, v) => {
      c.requestheaderGroupHeaders = listFlag(v);
    },
  },
  {
    name: 'requestheader-extra-headers-prefix',
    group: 'authentication',
    default: '',
    help: 'Prefixes of request headers carrying extra user attributes (X-Remote-Extra- is common).',
    apply: (c, v) => {
      c.requestheaderExtraHeadersPrefix = listFlag(v);
    },
  },
];
