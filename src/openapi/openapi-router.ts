import { Router, type Request, type Response } from 'express';
import { writeNotFoundPage } from '../codec/plain-text.js';
import { sendCachedDocument } from './cached-document.js';
import { chooseOffer, type MediaOffer } from './openapi-accept.js';
import { sharedOpenApiService, v3DocumentUrl, type OpenApiService } from './openapi-service.js';

export { OpenApiService, sharedOpenApiService, type OpenApiContribution } from './openapi-service.js';

/** Content types of /openapi/v2, in kube-openapi's preference order. */
const V2_JSON = 'application/json';
/** kube-openapi answers both protobuf names with the new one. */
const V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
const V2_OFFERS: readonly MediaOffer[] = [
  { type: 'application', subtype: 'json' },
  // What kubectl and client-go ask for.
  { type: 'application', subtype: 'com.github.proto-openapi.spec.v2@v1.0+protobuf' },
  { type: 'application', subtype: 'com.github.proto-openapi.spec.v2.v1.0+protobuf' },
];

/** v3 documents are served as JSON only; the gnostic v3 protobuf form is not implemented. */
const V3_OFFERS: readonly MediaOffer[] = [{ type: 'application', subtype: 'json' }];

const ONE_YEAR_MS = 365 * 24 * 60 * 60 * 1000;

async function serveV2(service: OpenApiService, req: Request, res: Response): Promise<void> {
  res.vary('Accept');
  const choice = chooseOffer(req.get('Accept'), V2_OFFERS);
  if (choice === undefined) {
    res.status(406).end();
    return;
  }
  if (choice === 0) sendCachedDocument(req, res, service.v2Json(), V2_JSON);
  else sendCachedDocument(req, res, await service.v2Protobuf(), V2_PROTOBUF);
}

function serveV3Index(service: OpenApiService, req: Request, res: Response): void {
  sendCachedDocument(req, res, service.v3Index(), 'application/json');
}

/** The v3 key from the wildcard parameter: Express 5 gives the path segments as an array. */
function keyParam(req: Request): string {
  const raw: unknown = (req.params as Record<string, unknown>)['key'];
  if (Array.isArray(raw)) return raw.filter((s): s is string => typeof s === 'string').join('/');
  return typeof raw === 'string' ? raw : '';
}

function serveV3Document(service: OpenApiService, req: Request, res: Response): void {
  res.vary('Accept');
  if (chooseOffer(req.get('Accept'), V3_OFFERS) === undefined) {
    res.status(406).end();
    return;
  }
  const key = keyParam(req);
  const doc = service.v3Document(key);
  if (doc === undefined) {
    writeNotFoundPage(res);
    return;
  }
  const hash = req.query['hash'];
  if (typeof hash === 'string' && hash !== '') {
    if (hash !== doc.hash) {
      // An outdated link from an older index: send the client to the current version.
      res.redirect(301, v3DocumentUrl(key, doc.hash));
      return;
    }
    // The URL names one immutable version of the document.
    res.setHeader('Cache-Control', 'public, immutable');
    res.setHeader('Expires', new Date(Date.now() + ONE_YEAR_MS).toUTCString());
  }
  sendCachedDocument(req, res, doc, 'application/json');
}

/**
 * Serves the OpenAPI documents as kube-apiserver 1.36 does:
 * - `GET /openapi/v2`: Swagger 2.0 as JSON, or as gnostic protobuf when the Accept header asks for
 *   `application/com.github.proto-openapi.spec.v2@v1.0+protobuf` (or `...spec.v2.v1.0+protobuf`);
 *   406 when neither is acceptable. The pre-1.14 aliases (`/swagger.json`, `/swagger-2.0.0.pb-v1`)
 *   are gone from kube-apiserver and are not served.
 * - `GET /openapi/v3`: the index of per-group-version documents with `?hash=` URLs.
 * - `GET /openapi/v3/KEY` (`api`, `api/v1`, `apis`, `apis/GROUP`, `apis/GROUP/VERSION`, ...): that
 *   OpenAPI 3.0 document as JSON; with a matching `?hash=` it is marked `Cache-Control: public,
 *   immutable`, with a stale one the answer is a 301 to the current URL; 404 for an unknown KEY.
 * Every answer carries an ETag and honours If-None-Match with 304. Documents are built on first
 * request and kept, so mounting the router costs nothing at start-up.
 *
 * @param service the documents to serve; the process-wide `sharedOpenApiService()` by default.
 */
export function openapiRouter(service: OpenApiService = sharedOpenApiService()): Router {
  const router = Router();
  // Express 5 passes a rejected promise to the error handler.
  router.get('/openapi/v2', (req, res) => serveV2(service, req, res));
  router.get('/openapi/v3', (req, res) => serveV3Index(service, req, res));
  router.get('/openapi/v3/*key', (req, res) => serveV3Document(service, req, res));
  return router;
}
