/**
 * kube-apiserver's rule that `--anonymous-auth` cannot be combined with the AlwaysAllow authorizer:
 * with AlwaysAllow among the authorization modes, anonymous requests would be allowed to do anything,
 * so kube turns the flag off (even when given explicitly) and warns. Only the flag is affected: an
 * AuthenticationConfiguration's `anonymous` section is taken as written.
 *
 * Returns the effective value of `--anonymous-auth`; `warn` is called when it was turned off.
 */
export function anonymousAuthUnderAuthorization(anonymousAuth: boolean, authorizationMode: string, warn: (message: string) => void): boolean {
  if (!anonymousAuth) return false;
  const alwaysAllow = authorizationMode.split(',').some((m) => m.trim() === 'AlwaysAllow');
  if (!alwaysAllow) return true;
  warn('AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to false. You should use a different authorizer');
  return false;
}
