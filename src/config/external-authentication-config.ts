/** `--oidc-*`: one JWT issuer configured on the command line (kube's legacy OIDC flags). */
export interface OidcFlags {
  issuerUrl: string;
  clientId: string;
  caFile: string;
  /** Default `sub`. */
  usernameClaim: string;
  usernamePrefix: string;
  groupsClaim: string;
  groupsPrefix: string;
  /** Default `['RS256']`. */
  signingAlgs: string[];
  /** `--oidc-required-claim key=value`, repeatable. */
  requiredClaims: Record<string, string>;
  /** Whether --oidc-signing-algs was given (its later occurrences add to the list). */
  signingAlgsGiven?: boolean;
  /** Whether any `--oidc-*` flag was given (kube's FlagsSet: for the refusals at start). */
  flagsSet: boolean;
}

/** `--authentication-token-webhook-*`: bearer tokens reviewed by a remote service. */
export interface TokenWebhookFlags {
  /** A kubeconfig naming the webhook ('' = none). */
  configFile: string;
  /** The TokenReview version sent: kube's default v1beta1, or v1 (anything else is refused at start). */
  version: string;
  /** How long the webhook's answers (authenticated or not) are reused; kube's default 2 minutes. */
  cacheTtlMs: number;
}

/** The authentication settings beyond certificates, static and service account tokens. */
export interface ExternalAuthenticationConfig {
  /** `--authentication-config`: an AuthenticationConfiguration file ('' = none). */
  authenticationConfigFile: string;
  oidc: OidcFlags;
  tokenWebhook: TokenWebhookFlags;
  /** Whether `--anonymous-auth` was given (it may not be with the configuration file's anonymous section). */
  anonymousAuthFlagSet: boolean;
}
