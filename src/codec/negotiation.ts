import { notAcceptable } from '../api/errors.js';
import { parseAccept, type MediaType } from './media-type.js';

/** The representation a response carries. */
export type Representation = 'object' | 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';

export interface OutputFormat {
  /** Wire encoding. */
  encoding: 'json' | 'yaml';
  representation: Representation;
  /** The Content-Type header of the response. */
  contentType: string;
  /** Pretty-print JSON (`?pretty=true`). */
  pretty: boolean;
}

const PLAIN_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];

/** What the request path can return: an object, a list, or a watch stream. */
export type Target = 'object' | 'list' | 'watch';

function encodingOf(type: string): 'json' | 'yaml' | undefined {
  if (type === 'application/json' || type === '*/*' || type === 'application/*') return 'json';
  if (type === 'application/yaml') return 'yaml';
  return undefined;
}

/**
 * Chooses the response format from the Accept header: plain JSON or YAML, or the Table and
 * metadata-only representations of `meta.k8s.io/v1`. Protobuf is listed by many clients with a JSON
 * fallback; alone it is 406 until its codec exists. Throws 406 NotAcceptable when nothing fits.
 */
export function negotiateOutput(accept: string | undefined, target: Target, pretty = false): OutputFormat {
  const candidates: MediaType[] = parseAccept(accept);
  for (const m of candidates) {
    const encoding = encodingOf(m.type);
    if (!encoding) continue;
    // Watch streams are JSON (or protobuf) frames; kube serves no YAML watch.
    if (target === 'watch' && encoding === 'yaml') continue;
    const as = m.params.as;
    if (as === undefined) {
      const contentType = encoding === 'yaml' ? 'application/yaml' : 'application/json';
      return { encoding, representation: 'object', contentType, pretty };
    }
    if (m.params.g !== 'meta.k8s.io' || m.params.v !== 'v1') continue;
    if (target === 'watch' && as !== 'PartialObjectMetadata' && as !== 'Table') continue;
    const wanted: Representation | undefined =
      as === 'Table' ? 'Table'
        : as === 'PartialObjectMetadata' && target !== 'list' ? 'PartialObjectMetadata'
          : as === 'PartialObjectMetadataList' && target === 'list' ? 'PartialObjectMetadataList'
            : undefined;
    if (!wanted) continue;
    const base = encoding === 'yaml' ? 'application/yaml' : 'application/json';
    return { encoding, representation: wanted, contentType: `${base};as=${as};g=meta.k8s.io;v=v1`, pretty };
  }
  throw notAcceptable(PLAIN_TYPES);
}
