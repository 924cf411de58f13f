import { notAcceptable } from '../api/errors.js';
import { parseAccept, type MediaType } from './media-type.js';

/** The representation a response carries. */
export type Representation = 'object' | 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';

export interface OutputFormat {
  /** Wire encoding. */
  encoding: 'json' | 'yaml' | 'protobuf';
  representation: Representation;
  /** The Content-Type header of the response. */
  contentType: string;
  /** Pretty-print JSON (`?pretty=true`). */
  pretty: boolean;
}

const PLAIN_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];

/** What the request path can return: an object, a list, or a watch stream. */
export type Target = 'object' | 'list' | 'watch';

function encodingOf(type: string, protobuf: boolean): OutputFormat['encoding'] | undefined {
  if (type === 'application/json' || type === '*/*' || type === 'application/*') return 'json';
  if (type === 'application/yaml') return 'yaml';
  if (type === PROTOBUF && protobuf) return 'protobuf';
  return undefined;
}

const PROTOBUF = 'application/vnd.kubernetes.protobuf';

function baseType(encoding: OutputFormat['encoding']): string {
  return encoding === 'yaml' ? 'application/yaml' : encoding === 'protobuf' ? PROTOBUF : 'application/json';
}

/**
 * Chooses the response format from the Accept header: JSON, YAML or (for types with a protobuf
 * message, `protobuf`) Protobuf, and the Table and metadata-only representations of `meta.k8s.io/v1`.
 * Throws 406 NotAcceptable when nothing fits.
 */
export function negotiateOutput(accept: string | undefined, target: Target, pretty = false, protobuf = false): OutputFormat {
  const candidates: MediaType[] = parseAccept(accept);
  for (const m of candidates) {
    const encoding = encodingOf(m.type, protobuf);
    if (!encoding) continue;
    // Watch streams are JSON (or protobuf) frames; kube serves no YAML watch.
    if (target === 'watch' && encoding === 'yaml') continue;
    const as = m.params.as;
    if (as === undefined) {
      const contentType = encoding === 'protobuf' && target === 'watch' ? `${PROTOBUF};stream=watch` : baseType(encoding);
      return { encoding, representation: 'object', contentType, pretty };
    }
    // Tables have no protobuf message.
    if (encoding === 'protobuf' && as === 'Table') continue;
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
    const base = encoding === 'protobuf' && target === 'watch' ? `${PROTOBUF};stream=watch` : baseType(encoding);
    return { encoding, representation: wanted, contentType: `${base};as=${as};g=meta.k8s.io;v=v1`, pretty };
  }
  throw notAcceptable(PLAIN_TYPES);
}
