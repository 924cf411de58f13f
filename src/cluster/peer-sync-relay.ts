/**
 * The primary's side of write visibility across workers (see peer-sync.ts): it keeps which workers'
 * watches listen to which change stream and tells every worker, and answers a worker's question
 * "have the other listeners of this stream handed out its changes through this version?" once each
 * of them said so.
 *
 * Guarantees: every question is answered, at the latest `timeoutMs` after it arrived; a worker that
 * let a question run out is not asked again until it answers one (a stalled worker costs one wait,
 * not every write's); an exited worker is never waited for.
 */
import type { Worker } from 'node:cluster';
import {
  isReadyMessage,
  isStreamReaderMessage,
  isSyncDoneMessage,
  isSyncRequestMessage,
  type StreamReadersMessage,
  type SyncDoneMessage,
  type SyncRequestMessage,
} from './messages.js';

interface Question {
  asker: Worker;
  askerId: number;
  /** Workers not yet answered. */
  pending: Set<Worker>;
  timer: NodeJS.Timeout;
}

export class PeerSyncRelay {
  private readonly workers = new Set<Worker>();
  /** The workers whose watches listen to each stream. */
  private readonly readers = new Map<string, Set<Worker>>();
  /** Workers that let a question run out: skipped until they answer. */
  private readonly lagging = new Set<Worker>();
  private readonly questions = new Map<number, Question>();
  private nextId = 1;

  constructor(private readonly timeoutMs: number) {}

  /** Follows a forked worker's messages; once it is ready (listening to this protocol), tells it who reads what. */
  addWorker(worker: Worker): void {
    this.workers.add(worker);
    worker.on('message', (message: unknown) => this.onMessage(worker, message));
  }

  /** Forgets an exited worker: its streams lose a reader and no question waits for it. */
  removeWorker(worker: Worker): void {
    this.workers.delete(worker);
    this.lagging.delete(worker);
    for (const [stream, readers] of this.readers) {
      if (readers.delete(worker)) this.broadcast(this.readersMessage(stream));
    }
    for (const [id, question] of this.questions) {
      if (question.asker === worker) this.finish(id, false);
      else if (question.pending.delete(worker) && question.pending.size === 0) this.finish(id, true);
    }
  }

  private onMessage(worker: Worker, message: unknown): void {
    if (isReadyMessage(message)) {
      for (const stream of this.readers.keys()) this.sendTo(worker, this.readersMessage(stream));
    } else if (isSyncDoneMessage(message)) {
      this.lagging.delete(worker);
      const question = this.questions.get(message.id);
      if (question !== undefined && question.pending.delete(worker) && question.pending.size === 0) this.finish(message.id, true);
    } else if (isSyncRequestMessage(message)) {
      this.ask(worker, message);
    } else if (isStreamReaderMessage(message)) {
      let readers = this.readers.get(message.stream);
      if (readers === undefined) this.readers.set(message.stream, (readers = new Set()));
      if (readers.has(worker) === message.listening || !this.workers.has(worker)) return;
      if (message.listening) readers.add(worker);
      else readers.delete(worker);
      this.broadcast(this.readersMessage(message.stream));
    }
  }

  private ask(asker: Worker, message: SyncRequestMessage): void {
    const pending = new Set<Worker>();
    for (const reader of this.readers.get(message.stream) ?? []) {
      if (reader !== asker && !this.lagging.has(reader) && reader.isConnected()) pending.add(reader);
    }
    if (pending.size === 0) {
      this.sendTo(asker, { type: 'capstan:sync-done', id: message.id });
      return;
    }
    const id = this.nextId++;
    const timer = setTimeout(() => {
      const question = this.questions.get(id);
      if (question === undefined) return;
      for (const worker of question.pending) this.lagging.add(worker);
      this.finish(id, true);
    }, this.timeoutMs);
    this.questions.set(id, { asker, askerId: message.id, pending, timer });
    const forward: SyncRequestMessage = { type: 'capstan:sync-request', id, stream: message.stream, version: message.version };
    for (const worker of pending) this.sendTo(worker, forward);
  }

  /** Ends question `id`, answering its asker when `answer`. */
  private finish(id: number, answer: boolean): void {
    const question = this.questions.get(id);
    if (question === undefined) return;
    this.questions.delete(id);
    clearTimeout(question.timer);
    if (answer) this.sendTo(question.asker, { type: 'capstan:sync-done', id: question.askerId });
  }

  private readersMessage(stream: string): StreamReadersMessage {
    return { type: 'capstan:stream-readers', stream, workers: [...(this.readers.get(stream) ?? [])].map((w) => w.id) };
  }

  private broadcast(message: StreamReadersMessage): void {
    for (const worker of this.workers) this.sendTo(worker, message);
  }

  private sendTo(worker: Worker, message: StreamReadersMessage | SyncRequestMessage | SyncDoneMessage): void {
    if (worker.isConnected()) worker.send(message, undefined, {}, () => undefined);
  }
}
