import { IncomingMessage, ServerResponse } from 'node:http';
import { Http2ServerRequest, Http2ServerResponse } from 'node:http2';

/**
 * Requests and responses as the Express app's, over HTTP/1 and HTTP/2. Express's methods live on
 * its prototypes, which inherit from HTTP/1's classes; Node's HTTP/2 compatibility API makes objects
 * with the methods of HTTP/1's (`headers`, `setHeader`, `writeHead`, `write`, `end`) on classes of
 * its own. The servers make every request and response on a copy of the app's prototypes stacked on
 * the class Node would have used (see expressRequests), so an HTTP/2 request keeps its getters and no
 * object is re-parented while it is served, as `app.handle` would do.
 *
 * What the rest of the server can rely on for an HTTP/2 request: `req.httpVersionMajor` is 2;
 * `req.headers` also holds the pseudo-headers (`:authority`, `:path`, ...); `res.flushHeaders()`
 * sends the headers; `req.socket` reads through to the TLS connection but must not be written to,
 * paused or destroyed (it is shared by every stream of the connection).
 */

/** The app as Express exposes it: the prototypes it gives requests and responses. */
export interface ExpressLike {
  request: object;
  response: object;
}

/** Whether a request arrived over HTTP/2. */
export function isHttp2(req: IncomingMessage | Http2ServerRequest): req is Http2ServerRequest {
  return req.httpVersionMajor === 2;
}

/** The chain of `proto`'s own layers down to (not including) `base`, outermost first. */
function layersAbove(proto: object, base: object): object[] {
  const layers: object[] = [];
  let p: object | null = proto;
  while (p !== null && p !== base && p !== Object.prototype) {
    layers.push(p);
    p = Object.getPrototypeOf(p) as object | null;
  }
  return layers;
}

/** The same layers as `proto` has above `oldBase`, stacked on `newBase`. */
function rebase(proto: object, oldBase: object, newBase: object, extra: PropertyDescriptorMap = {}): object {
  let result = Object.create(newBase, extra) as object;
  for (const layer of layersAbove(proto, oldBase).reverse()) result = Object.create(result, Object.getOwnPropertyDescriptors(layer)) as object;
  return result;
}

const DISTINCT = Symbol('capstan.headersDistinct');

/** What HTTP/1's request has and HTTP/2's compatibility request lacks, that the server uses. */
const REQUEST_ADDITIONS: PropertyDescriptorMap = {
  // Each header's values as a list, pseudo-headers left out (HTTP/1's `headersDistinct`).
  headersDistinct: {
    get(this: Http2ServerRequest & { [DISTINCT]?: Record<string, string[]> }): Record<string, string[]> {
      let distinct = this[DISTINCT];
      if (distinct === undefined) {
        distinct = Object.create(null) as Record<string, string[]>;
        for (const [name, value] of Object.entries(this.headers)) {
          if (name.startsWith(':') || value === undefined) continue;
          distinct[name] = Array.isArray(value) ? value : [value];
        }
        this[DISTINCT] = distinct;
      }
      return distinct;
    },
    configurable: true,
  },
};

/** What HTTP/1's response has and HTTP/2's compatibility response lacks, that the server uses. */
const RESPONSE_ADDITIONS: PropertyDescriptorMap = {
  flushHeaders: {
    value(this: Http2ServerResponse): void {
      if (!this.headersSent) this.writeHead(this.statusCode);
    },
    writable: true,
    configurable: true,
  },
};

/** What Express's router sets on a request before its first middleware (used by `expressRequests`). */
interface RoutedRequest {
  res: ServerResponse;
  originalUrl?: string;
  baseUrl?: string;
}

/** The classes the servers make requests and responses with (Node's server options of these names). */
export interface AppClasses {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
  Http2ServerRequest: typeof Http2ServerRequest;
  Http2ServerResponse: typeof Http2ServerResponse;
}

/**
 * Methods stacked on the app's response prototype, each layer made from the prototype below it
 * (whose methods it calls): `http1` for HTTP/1.1 responses only, then `both`, in order, for HTTP/1
 * and HTTP/2 ones. A method of a prototype costs a response nothing of its own, where a wrapper set
 * on each response would change its shape.
 */
export interface ResponseLayers {
  http1?: (base: object) => PropertyDescriptorMap;
  both?: ReadonlyArray<(base: object) => PropertyDescriptorMap>;
}

/** Requests and responses made the app's (see {@link expressRequests}). */
export interface ExpressRequests {
  /** Servers given these classes make requests and responses that need no new prototype. */
  readonly classes: AppClasses;
  /** Makes one request and its response the app's. */
  prepare(req: IncomingMessage, res: ServerResponse): void;
}

/** A subclass of `base` whose instances inherit from `proto` (whose chain must lead to `base`'s prototype). */
function classOn<T extends abstract new (...args: never[]) => object>(base: T, proto: object): T {
  const made = class extends (base as unknown as new (...args: unknown[]) => object) {};
  Object.setPrototypeOf(made.prototype, proto);
  return made as unknown as T;
}

/**
 * Makes requests and responses the app's, as `app.handle` and its router do before the first
 * middleware mounted at `/`: the app's prototypes (Express's methods, the app's settings through
 * `req.app`), the responses' topped by `responseLayers`, HTTP/1 requests' based on `http1Request`
 * (the servers' request class), HTTP/2 ones with the prototypes rebased on the HTTP/2 classes;
 * then `req.res`, `res.req`, `res.locals`, `req.originalUrl` and `req.baseUrl`. The server runs its
 * stages on them itself (see request-pipeline.ts): the router's dispatch cost a request about 15 µs
 * for one layer.
 *
 * Servers made with `classes` create requests and responses on those prototypes from the start; a
 * request or response made otherwise (an upgrade's response) gets them here, as Express would.
 */
export function expressRequests(app: ExpressLike, http1Request: typeof IncomingMessage, responseLayers: ResponseLayers = {}): ExpressRequests {
  const h1Request = rebase(app.request, IncomingMessage.prototype, http1Request.prototype);
  let h1Response = Object.create(app.response, responseLayers.http1?.(app.response) ?? {}) as object;
  const h2Request = rebase(app.request, IncomingMessage.prototype, Http2ServerRequest.prototype, REQUEST_ADDITIONS);
  let h2Response = rebase(app.response, ServerResponse.prototype, Http2ServerResponse.prototype, RESPONSE_ADDITIONS);
  for (const layer of responseLayers.both ?? []) {
    h1Response = Object.create(h1Response, layer(h1Response)) as object;
    h2Response = Object.create(h2Response, layer(h2Response)) as object;
  }
  const classes: AppClasses = {
    IncomingMessage: classOn(http1Request, h1Request),
    ServerResponse: classOn(ServerResponse, h1Response),
    Http2ServerRequest: classOn(Http2ServerRequest, h2Request),
    Http2ServerResponse: classOn(Http2ServerResponse, h2Response),
  };
  const protos = {
    h1Request: classes.IncomingMessage.prototype,
    h1Response: classes.ServerResponse.prototype,
    h2Request: classes.Http2ServerRequest.prototype,
    h2Response: classes.Http2ServerResponse.prototype,
  };
  const prepare = (req: IncomingMessage, res: ServerResponse): void => {
    const http2 = isHttp2(req);
    const requestProto = http2 ? protos.h2Request : protos.h1Request;
    const responseProto = http2 ? protos.h2Response : protos.h1Response;
    if (Object.getPrototypeOf(req) !== requestProto) Object.setPrototypeOf(req, requestProto);
    if (Object.getPrototypeOf(res) !== responseProto) Object.setPrototypeOf(res, responseProto);
    const routed = req as IncomingMessage & RoutedRequest;
    routed.res = res;
    (res as ServerResponse & { req: IncomingMessage }).req = req;
    const withLocals = res as ServerResponse & { locals?: Record<string, unknown> };
    if (withLocals.locals === undefined) withLocals.locals = Object.create(null) as Record<string, unknown>;
    routed.originalUrl ??= req.url;
    routed.baseUrl = '';
  };
  return { classes, prepare };
}

/**
 * Tells the client to open a new connection for its next requests (GOAWAY, as kube-apiserver's
 * `--goaway-chance`): this request and every other stream already open on the connection, watches
 * included, finish on it; the session closes once they have.
 */
export function goAway(req: Http2ServerRequest): void {
  const session = req.stream.session;
  if (session !== undefined && !session.closed && !session.destroyed) session.close();
}
