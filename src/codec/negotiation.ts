import { ApiError, notAcceptable, type StatusObject } from '../api/errors.js';
import { parseAccept, type MediaType } from './media-type.js';
import { type TablePrinter } from './table-printer.js';

/** The representation a response carries. */
export type Representation = 'object' | 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';

export interface OutputFormat {
  /** Wire encoding. */
  encoding: 'json' | 'yaml' | 'protobuf' | 'cbor';
  representation: Representation;
  /** The Content-Type header of the response. */
  contentType: string;
  /** Pretty-print JSON (`?pretty=true`). */
  pretty: boolean;
  /** The Table columns of the answer's kind (set by the handler; undefined: Name and Created At). */
  printer?: TablePrinter;
}

const PLAIN_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
const CBOR = 'application/cbor';

/** Options of negotiateOutput beyond the Accept header and target. */
export interface NegotiationOptions {
  /** `?pretty=true`. */
  pretty?: boolean;
  /**
   * The type has a protobuf message (built-in types). A function is asked only when the Accept header
   * names protobuf: finding out loads the protobuf runtime, which a JSON client never needs.
   */
  protobuf?: boolean | (() => boolean);
  /** The CBORServingAndStorage feature gate is on: `application/cbor` (and cbor-seq watches) are served. */
  cbor?: boolean;
  /**
   * The route is one of kube's go-restful routes (built-in resources), whose declared media types
   * are checked first: an Accept naming none of them answers go-restful's own 406.
   */
  restfulRoute?: boolean;
  /**
   * The resource's storage converts objects to Tables (default true). kube's access and token
   * reviews and the pod binding, pod eviction and token request subresources do not: an Accept
   * asking only for a Table is then 406.
   */
  table?: boolean;
}

/**
 * The media types a built-in resource route declares it produces, as kube-apiserver 1.36 lists them
 * in go-restful's 406 ("Available representations: ..."): CBOR ones only with the gate on.
 */
export function routeProduces(target: Target, cbor: boolean): string[] {
  const plain = cbor ? [...PLAIN_TYPES, CBOR] : PLAIN_TYPES;
  if (target === 'object') return plain;
  const streams = ['application/json;stream=watch', 'application/vnd.kubernetes.protobuf;stream=watch'];
  return [...plain, ...streams, ...(cbor ? ['application/cbor-seq'] : [])];
}

/**
 * go-restful's 406 for an Accept that names none of a route's media types: its message, `details: {}`,
 * and (written by response-writer) an indented JSON body.
 */
export class RouteNotAcceptableError extends ApiError {
  constructor(produces: string[]) {
    super(406, 'NotAcceptable', `406: Not Acceptable\n\nAvailable representations: ${produces.join(', ')}`, {});
  }

  override toStatus(): StatusObject {
    const { code, ...rest } = super.toStatus();
    return { ...rest, details: {}, code };
  }
}

/** go-restful's 415 for a PATCH whose Content-Type (or its absence) the route does not declare. */
export class RouteUnsupportedMediaTypeError extends ApiError {
  constructor() {
    super(415, 'UnsupportedMediaType', '415: Unsupported Media Type', {});
  }

  override toStatus(): StatusObject {
    const { code, ...rest } = super.toStatus();
    return { ...rest, details: {}, code };
  }
}

/**
 * Whether go-restful lets the request reach the handler: some Accept entry, parameters and quality
 * removed, is `*\/*` or exactly one of the produced types.
 */
function routeAccepts(accept: string | undefined, produces: string[]): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  for (const part of accept.split(',')) {
    const semi = part.indexOf(';');
    const type = (semi < 0 ? part : part.slice(0, semi)).trim();
    if (type === '*/*' || type === 'application/*' || produces.includes(type)) return true;
  }
  return false;
}

/** What the request path can return: an object, a list, or a watch stream. */
export type Target = 'object' | 'list' | 'watch';

function encodingOf(type: string, protobuf: boolean | (() => boolean), cbor: boolean): OutputFormat['encoding'] | undefined {
  if (type === 'application/json' || type === '*/*' || type === 'application/*') return 'json';
  if (type === 'application/yaml') return 'yaml';
  if (type === PROTOBUF && (typeof protobuf === 'function' ? protobuf() : protobuf)) return 'protobuf';
  if (type === CBOR && cbor) return 'cbor';
  return undefined;
}

const PROTOBUF = 'application/vnd.kubernetes.protobuf';

function baseType(encoding: OutputFormat['encoding'], target: Target): string {
  if (encoding === 'cbor') return target === 'watch' ? 'application/cbor-seq' : CBOR;
  if (encoding === 'protobuf') return target === 'watch' ? `${PROTOBUF};stream=watch` : PROTOBUF;
  return encoding === 'yaml' ? 'application/yaml' : 'application/json';
}

/**
 * Chooses the response format from the Accept header: JSON, YAML, Protobuf (for types with a protobuf
 * message, `protobuf`) or, with the CBORServingAndStorage gate (`cbor`), CBOR (`application/cbor`;
 * watches are then `application/cbor-seq`), and the Table and metadata-only representations of
 * `meta.k8s.io/v1` (kube serves no Table in CBOR; metadata-only CBOR is plain `application/cbor`).
 * Throws 406 NotAcceptable when nothing fits: go-restful's wording when the route's declared types
 * do not match at all (`restfulRoute`), the API machinery's otherwise.
 */
export function negotiateOutput(accept: string | undefined, target: Target, options: NegotiationOptions = {}): OutputFormat {
  const { pretty = false, protobuf = false, cbor = false } = options;
  if (options.restfulRoute === true) {
    const produces = routeProduces(target === 'object' ? 'object' : 'list', cbor);
    if (!routeAccepts(accept, produces)) throw new RouteNotAcceptableError(produces);
  }
  const candidates: MediaType[] = parseAccept(accept);
  for (const m of candidates) {
    const encoding = encodingOf(m.type, protobuf, cbor);
    if (!encoding) continue;
    // Watch streams are JSON (or protobuf) frames; kube serves no YAML watch.
    if (target === 'watch' && encoding === 'yaml') continue;
    const as = m.params.as;
    if (as === undefined) return { encoding, representation: 'object', contentType: baseType(encoding, target), pretty };
    // Tables have no protobuf message, and kube-apiserver 1.36 serves none in CBOR.
    if ((encoding === 'protobuf' || encoding === 'cbor') && as === 'Table') continue;
    if (as === 'Table' && options.table === false) continue;
    if (m.params.g !== 'meta.k8s.io' || m.params.v !== 'v1') continue;
    if (target === 'watch' && as !== 'PartialObjectMetadata' && as !== 'Table') continue;
    const wanted: Representation | undefined =
      as === 'Table'
        ? 'Table'
        : as === 'PartialObjectMetadata' && target !== 'list'
          ? 'PartialObjectMetadata'
          : as === 'PartialObjectMetadataList' && target === 'list'
            ? 'PartialObjectMetadataList'
            : undefined;
    if (!wanted) continue;
    const base = baseType(encoding, target);
    const contentType = encoding === 'cbor' ? base : `${base};as=${as};g=meta.k8s.io;v=v1`;
    return { encoding, representation: wanted, contentType, pretty };
  }
  throw notAcceptable(cbor ? [...PLAIN_TYPES, CBOR] : PLAIN_TYPES);
}
