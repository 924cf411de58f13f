import { parseAccept } from '../codec/media-type.js';

/**
 * Content negotiation for the discovery endpoints, following kube-apiserver's order: the first Accept
 * clause (by quality, then position) that the server can honour decides. A clause naming a
 * conversion (`g`/`v`/`as`) is honoured only for `apidiscovery.k8s.io/v2` `APIGroupDiscoveryList`
 * on `/api` and `/apis`; any other conversion (v2beta1, removed in 1.33; Table; ...) is skipped.
 */

/** How a discovery response is encoded. */
export interface DiscoveryFormat {
  encoding: 'json' | 'yaml' | 'cbor';
  /** True when the aggregated (apidiscovery.k8s.io/v2) document was asked for. */
  aggregated: boolean;
  /** Indented JSON (`?pretty=true`, or a curl/Wget/browser user agent, as kube does). */
  pretty: boolean;
  contentType: string;
}

/** The media types named in kube's 406 message for discovery paths. */
export const DISCOVERY_MEDIA_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];

/** The Content-Type suffix kube appends for the aggregated document (without any `profile`). */
export const AGGREGATED_V2_PARAMS = ';g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

function encodingOf(type: string, allowCbor: boolean): DiscoveryFormat['encoding'] | undefined {
  if (type === 'application/json' || type === 'application/*' || type === '*/*') return 'json';
  if (type === 'application/yaml') return 'yaml';
  if (type === 'application/cbor' && allowCbor) return 'cbor';
  return undefined;
}

const CONTENT_TYPES: Record<DiscoveryFormat['encoding'], string> = { json: 'application/json', yaml: 'application/yaml', cbor: 'application/cbor' };

/** Whether `/version` can answer `accept`: it has JSON only. */
export function acceptsJson(accept: string | undefined): boolean {
  return parseAccept(accept).some((clause) => encodingOf(clause.type, false) === 'json');
}

/** Whether kube would pretty-print: an explicit `pretty` query value, else a human-facing user agent. */
export function wantsPretty(query: URLSearchParams, userAgent: string | undefined): boolean {
  const p = query.get('pretty');
  if (p !== null && p !== '') return p === '1' || p.toLowerCase() === 'true' || p === 't' || p === 'T';
  const ua = userAgent ?? '';
  return ua.startsWith('curl') || ua.startsWith('Wget') || ua.startsWith('Mozilla/5.0');
}

/**
 * Picks the discovery response format, or undefined when no clause is acceptable (the caller answers
 * 406). `allowAggregated` is true only on `/api` and `/apis`; `allowCbor` only on
 * `/apis/GROUP/VERSION` with the CBORServingAndStorage gate on, as kube-apiserver 1.36 serves it.
 */
export function negotiateDiscovery(accept: string | undefined, allowAggregated: boolean, pretty: boolean, allowCbor = false): DiscoveryFormat | undefined {
  for (const clause of parseAccept(accept)) {
    const encoding = encodingOf(clause.type, allowCbor);
    if (!encoding) continue;
    const { g, v, as } = clause.params;
    const base = CONTENT_TYPES[encoding];
    if (g === undefined && v === undefined && as === undefined) {
      return { encoding, aggregated: false, pretty: clause.params.pretty === '1' || pretty, contentType: base };
    }
    if (allowAggregated && g === 'apidiscovery.k8s.io' && v === 'v2' && as === 'APIGroupDiscoveryList') {
      return { encoding, aggregated: true, pretty: clause.params.pretty === '1' || pretty, contentType: base + AGGREGATED_V2_PARAMS };
    }
  }
  return undefined;
}
