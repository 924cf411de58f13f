import type { AuthenticationResult, TokenAuthenticator } from './authenticator.js';

/**
 * kube's WrapAudienceAgnosticToken, for token authenticators that know no audiences (static tokens,
 * JWT issuers): their tokens are for the API server's audiences (`implicit`). A review asking only
 * for other audiences is not theirs (undefined); an accepted token is for the audiences both have.
 */
export function audienceAgnostic(implicit: readonly string[], inner: TokenAuthenticator): TokenAuthenticator {
  return {
    async authenticateToken(token: string, audiences?: string[]): Promise<AuthenticationResult> {
      const wanted = audiences ?? implicit;
      if (wanted.length === 0 || implicit.length === 0) return inner.authenticateToken(token);
      const granted = wanted.filter((a) => implicit.includes(a));
      if (granted.length === 0) return undefined;
      const result = await inner.authenticateToken(token);
      return result !== undefined && 'user' in result ? { ...result, audiences: granted } : result;
    },
  };
}
