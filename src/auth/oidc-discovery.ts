import { Router, type Request, type Response } from 'express';
import type { ServiceAccountTokens } from './service-account-tokens.js';

/**
 * kube-apiserver's service account issuer discovery: `/.well-known/openid-configuration` and
 * `/openid/v1/jwks` (media type `application/jwk-set+json`), both cacheable for an hour. Served
 * when the issuer is an https URL, as kube serves them.
 */
export function oidcDiscoveryRouter(tokens: ServiceAccountTokens, jwksUri: () => string): Router {
  const router = Router();
  let issuerIsUrl = false;
  try {
    issuerIsUrl = new URL(tokens.issuer).protocol === 'https:';
  } catch {
    issuerIsUrl = false;
  }
  if (!issuerIsUrl) return router;
  const send = (res: Response, type: string, body: object): void => {
    res.setHeader('Cache-Control', 'public, max-age=3600');
    res.setHeader('Content-Type', type);
    res.end(JSON.stringify(body));
  };
  router.get('/.well-known/openid-configuration', (_req: Request, res: Response) => send(res, 'application/json', tokens.openidConfiguration(jwksUri())));
  router.get('/openid/v1/jwks', (_req: Request, res: Response) => send(res, 'application/jwk-set+json', tokens.jwks()));
  return router;
}
