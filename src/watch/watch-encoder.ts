import type { StatusObject } from '../api/errors.js';
import type { OutputFormat } from '../codec/negotiation.js';
import type { ChangeEvent } from '../storage/storage.js';
import type { CustomResourceFacts } from '../catalog/custom-resource-facts.js';
import {
  bookmarkFrame,
  encodedEventOrConversion,
  encodingKey,
  errorFrame,
  objectFrameOrConversion,
  type WatchEncoding,
  type WatchEventType,
} from './event-encoding.js';

/**
 * The frames of one watch, with objects converted to the request's apiVersion and representation
 * (object, Table or PartialObjectMetadata; JSON lines, Protobuf or CBOR). Frames of changes are shared
 * with every watcher of the same encoding. As kube sends them, only the first Table event of a
 * watch carries column definitions. Custom resources are served with the read defaults and
 * conversion webhooks of `facts` (the serving catalogue's).
 */
export class WatchEncoder {
  private encoding: WatchEncoding;
  private key: string;

  constructor(
    private readonly kind: string,
    private readonly apiVersion: string,
    format: Pick<OutputFormat, 'representation' | 'encoding' | 'printer'>,
    private readonly facts: CustomResourceFacts,
  ) {
    this.encoding = {
      representation: format.representation,
      protobuf: format.encoding === 'protobuf',
      cbor: format.encoding === 'cbor',
      printer: format.printer,
    };
    this.key = encodingKey(apiVersion, this.encoding);
  }

  /**
   * A synthetic ADDED event for a stored object (initial state). Frames of custom resources that
   * convert by webhook come as promises (rejecting with the webhook's ApiError).
   */
  added(json: string): string | Buffer | Promise<string | Buffer> {
    const frame = objectFrameOrConversion(this.facts, 'ADDED', json, this.apiVersion, this.encoding);
    this.objectSent();
    return frame;
  }

  /** `event` delivered as `type` (a selector transition may turn a MODIFIED into ADDED or DELETED). */
  change(event: ChangeEvent, type: WatchEventType): string | Buffer | Promise<string | Buffer> {
    const frame = encodedEventOrConversion(this.facts, event, type, this.kind, this.apiVersion, this.encoding, this.key);
    this.objectSent();
    return frame;
  }

  /** A BOOKMARK at `resourceVersion`, with `annotations` when given. */
  bookmark(resourceVersion: string, annotations?: Record<string, string>): string | Buffer {
    const frame = bookmarkFrame(this.kind, this.apiVersion, resourceVersion, this.encoding, annotations);
    this.objectSent();
    return frame;
  }

  /** An ERROR event carrying `status`. */
  error(status: StatusObject): string | Buffer {
    return errorFrame({ ...status }, this.encoding);
  }

  /** After the first Table event, the rest carry no column definitions. */
  private objectSent(): void {
    if (this.encoding.representation !== 'Table' || this.encoding.noHeaders === true) return;
    this.encoding = { ...this.encoding, noHeaders: true };
    this.key = encodingKey(this.apiVersion, this.encoding);
  }
}
