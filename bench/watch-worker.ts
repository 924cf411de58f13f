/**
 * A worker thread holding many watch streams (plain HTTP on 127.0.0.1, or HTTPS with a bearer token
 * to a server given by URL), so that receiving and checking events is spread over several cores.
 * Two modes:
 * - fanout: every watcher counts events, checks resourceVersions strictly increase and records the
 *   delivery latency of each event (from the write's acknowledgement, shared by the writer through
 *   a SharedArrayBuffer indexed by sequence number, and from the send time carried in the object).
 * - informer: every watcher counts the initial ADDED lines without parsing them and notes when the
 *   BOOKMARK with `k8s.io/initial-events-end` arrives.
 * Over HTTP/1.1 each watch has its own connection (as many separate clients); with `http2` the
 * watches share a few HTTP/2 connections (as a client-go program's informers share one), at most
 * WATCHES_PER_HTTP2_CONNECTION each.
 * Protocol: posts `started` once every watcher has its response headers (or failed), `progress`
 * every 250 ms, and `result` after the parent posts `stop`.
 */
import { Agent, request, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { connect as http2Connect, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { parentPort, workerData } from 'node:worker_threads';
import { newHistogram, nowMs, recordLatency } from './stats.js';
import { WATCHES_PER_HTTP2_CONNECTION } from './watch-http2.js';

export interface WatchWorkerConfig {
  mode: 'fanout' | 'informer';
  port: number;
  /** The server's host (default 127.0.0.1). */
  host?: string;
  /** Connect with TLS (default: plain HTTP). */
  https?: boolean;
  /** Bearer token sent with every watch request. */
  token?: string;
  /** With `https`: PEM CA to verify the server against, or accept any certificate (`insecureTls`). */
  ca?: string;
  insecureTls?: boolean;
  /** Request path including the query string. */
  path: string;
  count: number;
  connectTimeoutMs: number;
  /** fanout: acknowledgement time (nowMs) of write #seq, 0 until acknowledged. */
  ackTimes?: SharedArrayBuffer;
  /** With `https`: the watches share HTTP/2 connections instead of one HTTP/1.1 connection each. */
  http2?: boolean;
}

export interface WatchWorkerStarted {
  type: 'started';
  connected: number;
  failed: number;
  firstError: string | undefined;
}

export interface WatchWorkerProgress {
  type: 'progress';
  events: number;
  /** Fewest events received by a watcher whose stream is still open (Infinity when none is open). */
  minAlive: number;
  ended: number;
  /** informer: watchers that have seen the initial-events-end bookmark. */
  done: number;
}

export interface WatchWorkerResult {
  type: 'result';
  watchers: number;
  failedToStart: number;
  endedEarly: number;
  events: number;
  /**
   * Per watcher: events of acknowledged writes received (fanout) or initial events before the
   * bookmark (informer).
   */
  counts: number[];
  /** fanout: events of writes the writer never saw acknowledged (timed out); not errors. */
  unackedEvents: number;
  /** fanout: events whose resourceVersion was not above the previous one (duplicates or reordering). */
  notIncreasing: number;
  /** fanout: events received before their write was acknowledged (latency counted as 0). */
  beforeAck: number;
  histAck: number[];
  histSend: number[];
  firstRecv: number;
  lastRecv: number;
  /** informer: nowMs() of each watcher's initial-events-end bookmark (NaN when not received). */
  bookmarkAt: number[];
  errorLines: number;
  firstError: string | undefined;
  /** nowMs() when this worker began opening its watchers. */
  openedAt: number;
}

interface Watcher {
  req: ClientRequest | undefined;
  res: IncomingMessage | undefined;
  /** With `http2`: the watch's stream (req and res stay undefined). */
  stream: ClientHttp2Stream | undefined;
  /** The response's HTTP status (0 before it came). */
  status: number;
  count: number;
  /** fanout: events whose write was never acknowledged (known only at the end). */
  unacked: number;
  lastRv: number;
  ended: boolean;
  stopped: boolean;
  text: string;
  bookmarkAt: number;
  carry: Buffer;
}

const config = workerData as WatchWorkerConfig;
const port = parentPort;
if (!port) throw new Error('watch-worker must run as a worker thread');

const ackTimes = config.ackTimes ? new Float64Array(config.ackTimes) : new Float64Array(0);
const histAck = newHistogram();
const histSend = newHistogram();
const watchers: Watcher[] = [];
let events = 0;
let notIncreasing = 0;
let beforeAck = 0;
let errorLines = 0;
let firstRecv = Number.NaN;
let lastRecv = Number.NaN;
let firstError: string | undefined;
/** fanout: (seq, receive time, watcher index) triples waiting for the writer's acknowledgement. */
let pending: number[] = [];
const BOOKMARK_MARK = Buffer.from('initial-events-end');
const RV_KEY = '"resourceVersion":"';
const SEQ_KEY = '"bench-seq":"';
const T_KEY = '"bench-t":"';

function noteError(msg: string): void {
  firstError ??= msg;
}

function fieldAfter(line: string, key: string): string | undefined {
  const i = line.indexOf(key);
  if (i < 0) return undefined;
  const start = i + key.length;
  const end = line.indexOf('"', start);
  return end < 0 ? undefined : line.slice(start, end);
}

function onFanoutLine(w: Watcher, index: number, line: string, recv: number): void {
  if (line.startsWith('{"type":"ADDED"') || line.startsWith('{"type":"MODIFIED"')) {
    let rv = Number(fieldAfter(line, RV_KEY));
    let seq = Number(fieldAfter(line, SEQ_KEY));
    let sent = Number(fieldAfter(line, T_KEY));
    if (!Number.isFinite(rv) || !Number.isFinite(seq) || !Number.isFinite(sent)) {
      try {
        const ev = JSON.parse(line) as { object?: { metadata?: { resourceVersion?: string }; data?: Record<string, string> } };
        rv = Number(ev.object?.metadata?.resourceVersion);
        seq = Number(ev.object?.data?.['bench-seq']);
        sent = Number(ev.object?.data?.['bench-t']);
      } catch {
        noteError(`unparseable event: ${line.slice(0, 200)}`);
        return;
      }
    }
    w.count++;
    events++;
    if (Number.isNaN(firstRecv)) firstRecv = recv;
    lastRecv = recv;
    if (!(rv > w.lastRv)) notIncreasing++;
    else w.lastRv = rv;
    if (Number.isFinite(sent)) recordLatency(histSend, recv - sent);
    if (Number.isInteger(seq) && seq >= 0 && seq < ackTimes.length) {
      const ack = ackTimes[seq] ?? 0;
      if (ack > 0) recordLatency(histAck, recv - ack);
      else pending.push(seq, recv, index);
    }
  } else if (line.startsWith('{"type":"ERROR"')) {
    errorLines++;
    noteError(`watch ERROR event: ${line.slice(0, 300)}`);
  } else if (!line.startsWith('{"type":"BOOKMARK"') && line.trim() !== '') {
    noteError(`unexpected watch line: ${line.slice(0, 200)}`);
  }
}

/** Events that arrived before the writer saw its response: latency from ack is counted as 0. */
function resolvePending(final: boolean): void {
  if (pending.length === 0) return;
  const keep: number[] = [];
  for (let i = 0; i < pending.length; i += 3) {
    const seq = pending[i];
    const recv = pending[i + 1];
    const index = pending[i + 2];
    const ack = ackTimes[seq] ?? 0;
    if (ack > 0) {
      if (recv < ack) beforeAck++;
      recordLatency(histAck, recv - ack);
    } else if (!final) keep.push(seq, recv, index);
    else {
      const w = watchers[index];
      if (w) w.unacked++;
    }
  }
  pending = keep;
}

function onInformerChunk(w: Watcher, chunk: Buffer, recv: number): void {
  if (!Number.isNaN(w.bookmarkAt)) return;
  let at = chunk.indexOf(BOOKMARK_MARK);
  if (at < 0 && w.carry.length > 0) {
    const edge = Buffer.concat([w.carry, chunk.subarray(0, BOOKMARK_MARK.length)]);
    if (edge.indexOf(BOOKMARK_MARK) >= 0) at = 0;
  }
  const limit = at < 0 ? chunk.length : at;
  let lines = 0;
  for (let i = chunk.indexOf(10); i >= 0 && i < limit; i = chunk.indexOf(10, i + 1)) lines++;
  w.count += lines;
  events += lines;
  if (Number.isNaN(firstRecv)) firstRecv = recv;
  lastRecv = recv;
  if (at >= 0) w.bookmarkAt = recv;
  else w.carry = Buffer.from(chunk.subarray(Math.max(0, chunk.length - BOOKMARK_MARK.length)));
}

/** Reads a 200 watch response's body: lines (fanout) or chunks (informer). */
function follow(w: Watcher, index: number, body: IncomingMessage | ClientHttp2Stream): void {
  if (config.mode === 'fanout') {
    body.setEncoding('utf8');
    body.on('data', (chunk: string) => {
      const recv = nowMs();
      w.text += chunk;
      let start = 0;
      for (let nl = w.text.indexOf('\n'); nl >= 0; nl = w.text.indexOf('\n', start)) {
        onFanoutLine(w, index, w.text.slice(start, nl), recv);
        start = nl + 1;
      }
      if (start > 0) w.text = w.text.slice(start);
    });
  } else {
    body.on('data', (chunk: Buffer) => onInformerChunk(w, chunk, nowMs()));
  }
  const ended = (): void => {
    if (!w.stopped && !w.ended) {
      w.ended = true;
      noteError('a watch stream ended before the benchmark closed it');
    }
  };
  body.once('end', ended);
  body.once('close', ended);
  body.once('error', ended);
}

/** Notes the body of a refused watch (status other than 200) as the first error. */
function noteRefusal(status: number, body: IncomingMessage | ClientHttp2Stream): void {
  let text = '';
  body.setEncoding('utf8');
  body.on('data', (c: string) => {
    if (text.length < 500) text += c;
  });
  body.once('end', () => noteError(`watch HTTP ${String(status)}: ${text.slice(0, 300)}`));
}

function open(w: Watcher, index: number, via: Agent | HttpsAgent | ClientHttp2Session): Promise<boolean> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (ok: boolean): void => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        resolve(ok);
      }
    };
    const headers: Record<string, string> = { accept: 'application/json' };
    if (config.token !== undefined) headers.authorization = `Bearer ${config.token}`;
    const started = (status: number, body: IncomingMessage | ClientHttp2Stream): void => {
      w.status = status;
      if (status !== 200) {
        noteRefusal(status, body);
        w.ended = true;
        settle(false);
        return;
      }
      settle(true);
      follow(w, index, body);
    };
    const failed = (e: Error): void => {
      if (!w.stopped) noteError(`watch request failed: ${e.message}`);
      w.ended = true;
      settle(false);
    };
    const timer = setTimeout(() => {
      noteError(`watch not started within ${config.connectTimeoutMs} ms`);
      w.ended = true;
      settle(false);
    }, config.connectTimeoutMs);
    if (!(via instanceof Agent) && !(via instanceof HttpsAgent)) {
      const stream = via.request({ ...headers, ':path': config.path });
      w.stream = stream;
      stream.once('response', (h) => started(Number(h[':status']), stream));
      stream.once('error', failed);
      stream.end();
      return;
    }
    const send = config.https === true ? httpsRequest : request;
    const req = send({ host: config.host ?? '127.0.0.1', port: config.port, path: config.path, agent: via, headers }, (res) => {
      w.res = res;
      started(res.statusCode ?? 0, res);
    });
    w.req = req;
    req.once('error', failed);
    req.end();
  });
}

async function main(): Promise<void> {
  // Several agents, none limiting sockets: one connection per watch stream.
  const agentOptions = { keepAlive: false, maxSockets: Infinity };
  const newAgent = (): Agent | HttpsAgent =>
    config.https === true
      ? new HttpsAgent({ ...agentOptions, rejectUnauthorized: config.insecureTls !== true, ...(config.ca !== undefined ? { ca: config.ca } : {}) })
      : new Agent(agentOptions);
  const agents = config.http2 === true ? [] : Array.from({ length: Math.max(1, Math.ceil(config.count / 250)) }, newAgent);
  const sessions: ClientHttp2Session[] =
    config.http2 === true
      ? Array.from({ length: Math.max(1, Math.ceil(config.count / WATCHES_PER_HTTP2_CONNECTION)) }, () => {
          const session = http2Connect(`https://${config.host ?? '127.0.0.1'}:${config.port}`, {
            rejectUnauthorized: config.insecureTls !== true,
            ...(config.ca !== undefined ? { ca: config.ca } : {}),
          });
          session.on('error', (e: Error) => noteError(`HTTP/2 connection failed: ${e.message}`));
          return session;
        })
      : [];
  for (let i = 0; i < config.count; i++) {
    watchers.push({
      req: undefined,
      res: undefined,
      stream: undefined,
      status: 0,
      count: 0,
      unacked: 0,
      lastRv: 0,
      ended: false,
      stopped: false,
      text: '',
      bookmarkAt: Number.NaN,
      carry: Buffer.alloc(0),
    });
  }
  const openedAt = nowMs();
  const outcomes = await Promise.all(watchers.map((w, i) => open(w, i, sessions.length > 0 ? sessions[i % sessions.length] : agents[i % agents.length])));
  const connected = outcomes.filter((ok) => ok).length;
  const started: WatchWorkerStarted = { type: 'started', connected, failed: outcomes.length - connected, firstError };
  port?.postMessage(started);

  const progress = setInterval(() => {
    resolvePending(false);
    let minAlive = Infinity;
    let ended = 0;
    let done = 0;
    for (const w of watchers) {
      if (w.ended) ended++;
      else if (w.count < minAlive) minAlive = w.count;
      if (!Number.isNaN(w.bookmarkAt)) done++;
    }
    const msg: WatchWorkerProgress = { type: 'progress', events, minAlive, ended, done };
    port?.postMessage(msg);
  }, 250);

  port?.on('message', (msg: unknown) => {
    if (typeof msg !== 'object' || msg === null || (msg as { type?: unknown }).type !== 'stop') return;
    clearInterval(progress);
    let endedEarly = 0;
    for (const w of watchers) {
      if (w.ended && w.status === 200) endedEarly++;
      w.stopped = true;
      w.req?.destroy();
      w.stream?.close();
    }
    resolvePending(true);
    for (const a of agents) a.destroy();
    for (const s of sessions) s.destroy();
    const result: WatchWorkerResult = {
      type: 'result',
      watchers: watchers.length,
      failedToStart: outcomes.length - connected,
      endedEarly,
      events,
      counts: watchers.map((w) => w.count - w.unacked),
      unackedEvents: watchers.reduce((s, w) => s + w.unacked, 0),
      notIncreasing,
      beforeAck,
      histAck: Array.from(histAck),
      histSend: Array.from(histSend),
      firstRecv,
      lastRecv,
      bookmarkAt: watchers.map((w) => w.bookmarkAt),
      errorLines,
      firstError,
      openedAt,
    };
    port?.postMessage(result);
    port?.close();
  });
}

void main();
