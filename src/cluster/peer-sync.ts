/**
 * A worker's side of write visibility across workers (see storage/redis/peer-readers.ts): it tells
 * the primary which change streams its watches listen to, answers the primary's questions about
 * them, and lets a write of this worker wait until the other workers listening to the write's
 * stream have handed the change to their watches. The primary relays and bounds the wait
 * (peer-sync-relay.ts).
 *
 * Guarantees: a wait never rejects and ends at the latest `safetyMs` after it was sent (the primary
 * may be gone); waits for one stream begun in the same turn of the event loop share one question.
 */
import type { LocalReaders, PeerReaders } from '../storage/redis/peer-readers.js';
import { compareResourceVersions } from '../storage/resource-version.js';
import {
  isStreamReadersMessage,
  isSyncDoneMessage,
  isSyncRequestMessage,
  type StreamReaderMessage,
  type SyncDoneMessage,
  type SyncRequestMessage,
} from './messages.js';

type Send = (message: StreamReaderMessage | SyncRequestMessage | SyncDoneMessage) => void;

interface Batch {
  version: string;
  done: Promise<void>;
  resolve: () => void;
}

/** Options of {@link WorkerPeerSync}. */
export interface WorkerPeerSyncOptions {
  /** This worker's cluster id (`cluster.worker.id`). */
  self: number;
  /** Sends a message to the primary; never throws. */
  send: Send;
  /** The longest a write waits when the primary does not answer. */
  safetyMs: number;
  /**
   * Runs an answer once the watch frames this worker put off are written (watch-writer.ts's
   * afterDeferredWatchFrames): "dispatched" must mean on the watches' sockets, as for a write's own
   * response, or the writer's client could read the response first. At once when not given.
   */
  afterWatchFrames?: (answer: () => void) => void;
}

export class WorkerPeerSync implements PeerReaders {
  /** Streams other workers' watches listen to, with how many workers listen to each. */
  private readonly peersReading = new Map<string, number>();
  private local: LocalReaders | undefined;
  /** Questions sent and not yet answered, by id. */
  private readonly waiting = new Map<number, () => void>();
  /** Waits begun this turn, by stream, not yet sent. */
  private readonly batches = new Map<string, Batch>();
  private nextId = 1;

  constructor(private readonly options: WorkerPeerSyncOptions) {}

  serve(local: LocalReaders): void {
    this.local = local;
  }

  reading(stream: string, listening: boolean): void {
    this.options.send({ type: 'capstan:stream-reader', stream, listening });
  }

  awaitPeers(stream: string, version: string): Promise<void> | undefined {
    if ((this.peersReading.get(stream) ?? 0) === 0) return undefined;
    const batch = this.batches.get(stream);
    if (batch !== undefined) {
      if (compareResourceVersions(version, batch.version) > 0) batch.version = version;
      return batch.done;
    }
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    if (this.batches.size === 0) setImmediate(() => this.flush());
    this.batches.set(stream, { version, done, resolve });
    return done;
  }

  /** Handles a message from the primary; false when it is not one of this protocol's. */
  onMessage(message: unknown): boolean {
    if (isSyncDoneMessage(message)) {
      const resolve = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      resolve?.();
      return true;
    }
    if (isSyncRequestMessage(message)) {
      const send = (): void => this.options.send({ type: 'capstan:sync-done', id: message.id });
      const after = this.options.afterWatchFrames;
      const answer = after === undefined ? send : (): void => after(send);
      const dispatched = this.local?.whenDispatched(message.stream, message.version);
      if (dispatched === undefined) answer();
      else void dispatched.then(answer);
      return true;
    }
    if (isStreamReadersMessage(message)) {
      const peers = message.workers.filter((w) => w !== this.options.self).length;
      if (peers > 0) this.peersReading.set(message.stream, peers);
      else this.peersReading.delete(message.stream);
      return true;
    }
    return false;
  }

  /** Sends this turn's questions, one per stream. */
  private flush(): void {
    for (const [stream, batch] of this.batches) {
      const id = this.nextId++;
      const timer = setTimeout(() => finish(), this.options.safetyMs);
      const finish = (): void => {
        clearTimeout(timer);
        this.waiting.delete(id);
        batch.resolve();
      };
      this.waiting.set(id, finish);
      this.options.send({ type: 'capstan:sync-request', id, stream, version: batch.version });
    }
    this.batches.clear();
  }
}
