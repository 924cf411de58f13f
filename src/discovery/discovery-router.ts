import { createHash } from 'node:crypto';
import { writeNotFoundPage } from '../codec/plain-text.js';
import express, { type Request, type Response } from 'express';
import { dump } from 'js-yaml';
import { notAcceptable } from '../api/errors.js';
import type { ResourceCatalog } from '../catalog/resource-catalog.js';
import { GenerationCache } from './discovery-cache.js';
import {
  aggregatedDiscoveryDocument,
  apiGroupDocument,
  apiGroupListDocument,
  apiResourceListDocument,
  apiVersionsDocument,
  type IsCustomResource,
} from './discovery-documents.js';
import { acceptsJson, DISCOVERY_MEDIA_TYPES, negotiateDiscovery, wantsPretty, type DiscoveryFormat } from './discovery-negotiation.js';
import { encodeCbor, fieldsOf } from '../codec/cbor/cbor-encoder.js';
import type { APIGroupDiscoveryList } from './discovery-types.js';
import type { DiscoveryExtension } from './discovery-extension.js';
import type { VersionInfo } from './version-info.js';

export type { VersionInfo } from './version-info.js';
export { DEFAULT_VERSION_INFO, defaultVersionInfo } from './version-info.js';

/** Options of {@link discoveryRouter}. */
export interface DiscoveryRouterOptions {
  /** The `/version` document. */
  version: VersionInfo;
  /**
   * `host:port` reported in `/api` `serverAddressByClientCIDRs` (kube's advertise address). Default:
   * the local address and port of the connection the request came in on.
   */
  serverAddress?: string;
  /** Custom resources get explicit group/version in aggregated `responseKind`, as kube's CRD handler does. */
  isCustomResource?: IsCustomResource;
  /** Group versions served by aggregated API servers, merged into `/apis` and `/apis/GROUP`. */
  extension?: DiscoveryExtension;
}

interface Encoded {
  body: Buffer;
}

/**
 * Which discovery document a path serves: `/api` and `/apis` (aggregated discovery too), the core
 * version's resources, a group, a group version's resources (CBOR too, with the gate on).
 */
type Route = 'root' | 'core' | 'group' | 'resources';

/** Go's `http.NotFound` body, which kube-apiserver returns for unknown discovery paths. */
/** kube's plain-text 404 (kept under this name for callers of the discovery router). */
export const writeNotFoundText = writeNotFoundPage;

/** Writes bytes directly (not `res.send`), so Express adds no ETag of its own. */
function writeBody(res: Response, status: number, contentType: string, body: Buffer): void {
  res.status(status);
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', String(body.length));
  res.end(body);
}

/** Encodes as kube's serializers do: compact JSON with a newline, indented JSON without, YAML with sorted keys. */
function encode(value: unknown, format: Pick<DiscoveryFormat, 'encoding' | 'pretty'>): Buffer {
  if (format.encoding === 'cbor') return encodeCbor(value, fieldsOf(value as Record<string, unknown>));
  if (format.encoding === 'yaml') return Buffer.from(dump(value, { sortKeys: true, lineWidth: -1, noRefs: true }), 'utf8');
  return Buffer.from(format.pretty ? JSON.stringify(value, null, 2) : `${JSON.stringify(value)}\n`, 'utf8');
}

function queryOf(req: Request): URLSearchParams {
  const q = req.originalUrl.indexOf('?');
  return new URLSearchParams(q < 0 ? '' : req.originalUrl.slice(q + 1));
}

function localServerAddress(req: Request): string {
  let host = req.socket.localAddress ?? '127.0.0.1';
  if (host.startsWith('::ffff:')) host = host.slice('::ffff:'.length);
  const port = req.socket.localPort ?? 0;
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * How kube words a 406 on a discovery path: `/apis` and `/apis/GROUP` answer from its own handler
 * (`only the following media types are accepted: ...`); `/version`, `/api`, `/api/VERSION` and
 * `/apis/GROUP/VERSION` are go-restful routes (`406: Not Acceptable` and the representations the
 * route declares, with empty details). Both are indented JSON.
 */
type NotAcceptableStyle = { kind: 'handler' } | { kind: 'route'; representations: readonly string[] };

function writeNotAcceptable(res: Response, style: NotAcceptableStyle): void {
  const status =
    style.kind === 'handler'
      ? notAcceptable(DISCOVERY_MEDIA_TYPES).toStatus()
      : {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `406: Not Acceptable\n\nAvailable representations: ${style.representations.join(', ')}`,
          reason: 'NotAcceptable',
          details: {},
          code: 406,
        };
  writeBody(res, 406, 'application/json', Buffer.from(JSON.stringify(status, null, 2), 'utf8'));
}

/** Whether CBOR is served (the CBORServingAndStorage gate, marked on the response by the server). */
function cborServing(res: Response): boolean {
  return (res.locals as { cborServing?: boolean }).cborServing === true;
}

/**
 * Serves `/version`, `/api`, `/api/VERSION`, `/apis`, `/apis/GROUP` and `/apis/GROUP/VERSION` as
 * kube-apiserver 1.36 does. Documents are derived from the registry on request and cached per
 * registry generation, so resources added or removed at run time show up on the next request.
 * `/api` and `/apis` answer the aggregated apidiscovery.k8s.io/v2 document when the Accept header
 * asks for it first, with an ETag (`If-None-Match` gives 304), `Vary: Accept` and
 * `Cache-Control: public`. Unknown groups and versions get kube's `404 page not found` text.
 */
export function discoveryRouter(catalog: ResourceCatalog, options: DiscoveryRouterOptions): express.Router {
  const router = express.Router();
  const extension = options.extension;
  // Both counters only grow, so their sum moves whenever either does.
  const source =
    extension === undefined
      ? catalog
      : {
          get generation(): number {
            return catalog.generation + extension.generation();
          },
        };
  const cache = new GenerationCache<Encoded | undefined>(source);
  const etags = new GenerationCache<string>(source);
  const aggregated = new GenerationCache<APIGroupDiscoveryList>(source);
  const versionBody = Buffer.from(JSON.stringify(options.version, null, 2), 'utf8');

  /** Serves one document, negotiating plain vs aggregated and the encoding. */
  function serve(req: Request, res: Response, path: string, route: Route, build: () => unknown, variant = '', customGroupVersion = false): void {
    const allowAggregated = route === 'root';
    // A custom resource group version is served by kube's CRD discovery handler: no CBOR there.
    const allowCbor = route === 'resources' && !customGroupVersion && cborServing(res);
    const format = negotiateDiscovery(req.get('accept'), allowAggregated, wantsPretty(queryOf(req), req.get('user-agent')), allowCbor);
    if (!format) {
      const handler = path === '/apis' || route === 'group' || customGroupVersion;
      writeNotAcceptable(
        res,
        handler ? { kind: 'handler' } : { kind: 'route', representations: allowCbor ? [...DISCOVERY_MEDIA_TYPES, 'application/cbor'] : DISCOVERY_MEDIA_TYPES },
      );
      return;
    }
    if (format.aggregated) {
      serveAggregated(req, res, path, format);
      return;
    }
    const key = `${path}|${variant}|${format.encoding}|${format.pretty ? 'pretty' : 'compact'}`;
    const encoded = cache.get(key, () => {
      const doc = build();
      return doc === undefined ? undefined : { body: encode(doc, format) };
    });
    if (!encoded) {
      writeNotFoundText(res);
      return;
    }
    writeBody(res, 200, format.contentType, encoded.body);
  }

  function serveAggregated(req: Request, res: Response, path: string, format: DiscoveryFormat): void {
    const doc = aggregated.get(path, () => {
      const local = aggregatedDiscoveryDocument(catalog, path === '/api', options.isCustomResource);
      return extension === undefined || path === '/api' ? local : { ...local, items: extension.aggregatedItems(local.items) };
    });
    // One ETag per document whatever the encoding: Vary: Accept keeps caches from mixing encodings.
    const etag = etags.get(path, () => `"${createHash('sha512').update(JSON.stringify(doc)).digest('hex').toUpperCase()}"`);
    res.setHeader('ETag', etag);
    res.setHeader('Vary', 'Accept');
    res.setHeader('Cache-Control', 'public');
    if (req.get('if-none-match') === etag) {
      res.status(304).end();
      return;
    }
    const key = `${path}|aggregated|${format.encoding}|${format.pretty ? 'pretty' : 'compact'}`;
    const encoded = cache.get(key, () => ({ body: encode(doc, format) }));
    writeBody(res, 200, format.contentType, encoded?.body ?? encode(doc, format));
  }

  router.get('/version', (req, res) => {
    if (!acceptsJson(req.get('accept'))) writeNotAcceptable(res, { kind: 'route', representations: ['application/json'] });
    else writeBody(res, 200, 'application/json', versionBody);
  });

  router.get('/api', (req, res) => {
    const address = options.serverAddress ?? localServerAddress(req);
    serve(req, res, '/api', 'root', () => apiVersionsDocument(catalog, address), address);
  });

  router.get('/api/:version', (req, res) => {
    const { version } = req.params;
    serve(req, res, `/api/${version}`, 'core', () => apiResourceListDocument(catalog, '', version));
  });

  router.get('/apis', (req, res) => {
    serve(req, res, '/apis', 'root', () => {
      const local = apiGroupListDocument(catalog);
      return extension === undefined ? local : { ...local, groups: extension.groupList(local.groups) };
    });
  });

  router.get('/apis/:group', (req, res) => {
    const { group } = req.params;
    serve(req, res, `/apis/${group}`, 'group', () =>
      extension === undefined ? apiGroupDocument(catalog, group) : extension.group(group, apiGroupDocument(catalog, group)),
    );
  });

  router.get('/apis/:group/:version', (req, res) => {
    const { group, version } = req.params;
    const resources = [...catalog.resourcesOf(group, version)];
    const custom = resources.length > 0 && resources.every((info) => info.custom === true);
    serve(req, res, `/apis/${group}/${version}`, 'resources', () => apiResourceListDocument(catalog, group, version), '', custom);
  });

  return router;
}
