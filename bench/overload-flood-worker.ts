/**
 * The flood of the `overload` scenario, in a worker thread so that its thousands of connections do
 * not delay the main thread's measurement of the protected traffic. `concurrency` lanes each loop
 * until told to stop: most LIST the big collection, every `writeEvery`-th lane patches one of the
 * flood's own ConfigMaps. A 429 is retried after its Retry-After, as client-go retries it. Bodies are
 * counted, not kept. Protocol: posts `result` after the parent posts `stop` and the lanes finished
 * their requests in flight (or `drainMs` passed).
 */
import { Agent, request } from 'node:https';
import { parentPort, workerData } from 'node:worker_threads';

export interface FloodConfig {
  /** https://host:port of the server. */
  url: string;
  token: string;
  /** PEM CA of the server; undefined accepts any certificate (a self-signed reference server). */
  ca: string | undefined;
  concurrency: number;
  listPath: string;
  /** Collection the write lanes patch `${writePrefix}-${n}` in. */
  writePath: string;
  writePrefix: string;
  writeObjects: number;
  writeEvery: number;
  requestTimeoutMs: number;
  drainMs: number;
}

/** Answers by kind of request and status (`error` for network failures and timeouts). */
export interface FloodResult {
  type: 'result';
  list: Record<string, number>;
  write: Record<string, number>;
  /** Latencies (ms) of LISTs answered 200. */
  listLatencies: number[];
  bytes: number;
  /** Failures by message. */
  errors: Record<string, number>;
  /** Lanes still waiting for an answer when the result was posted. */
  unfinished: number;
}

interface Answer {
  status: number;
  retryAfter: number;
  bytes: number;
}

/**
 * One request; a request that fails on a kept-alive connection the server had just closed (before
 * any answer) is sent again once, as Go's transport (client-go's) resends it.
 */
async function send(agent: Agent, config: FloodConfig, method: string, path: string, body?: string): Promise<Answer> {
  try {
    return await sendOnce(agent, config, method, path, body);
  } catch (err) {
    if (!(err instanceof StaleConnection)) throw err;
    return sendOnce(agent, config, method, path, body);
  }
}

/** A reused connection failed before the answer began. */
class StaleConnection extends Error {}

function sendOnce(agent: Agent, config: FloodConfig, method: string, path: string, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const u = new URL(`${config.url}${path}`);
    const headers: Record<string, string> = { authorization: `Bearer ${config.token}`, accept: 'application/json' };
    if (body !== undefined) {
      headers['content-type'] = 'application/merge-patch+json';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers, agent }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.once('end', () => {
        clearTimeout(timer);
        const retry = Number(res.headers['retry-after'] ?? '1');
        resolve({ status: res.statusCode ?? 0, retryAfter: Number.isFinite(retry) && retry > 0 ? retry : 1, bytes });
      });
      res.once('error', reject);
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${config.requestTimeoutMs} ms`)), config.requestTimeoutMs);
    let answered = false;
    req.once('response', () => (answered = true));
    req.once('error', (e: Error & { code?: string }) => {
      clearTimeout(timer);
      const stale = req.reusedSocket && !answered && (e.code === 'ECONNRESET' || e.code === 'EPIPE' || e.message === 'socket hang up');
      reject(stale ? new StaleConnection(e.message) : e);
    });
    req.end(body);
  });
}

async function flood(config: FloodConfig): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: config.concurrency, ca: config.ca, rejectUnauthorized: config.ca !== undefined });
  const result: FloodResult = { type: 'result', list: {}, write: {}, listLatencies: [], bytes: 0, errors: {}, unfinished: 0 };
  let stopping = false;
  let inFlight = 0;
  const wakeups = new Set<() => void>();
  const count = (into: Record<string, number>, key: string): void => {
    into[key] = (into[key] ?? 0) + 1;
  };
  const pause = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        wakeups.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      wakeups.add(done);
    });
  const lane = async (i: number): Promise<void> => {
    const writer = i % config.writeEvery === 0;
    for (let n = 0; !stopping; n++) {
      const t0 = performance.now();
      inFlight++;
      try {
        const answer = writer
          ? await send(
              agent,
              config,
              'PATCH',
              `${config.writePath}/${config.writePrefix}-${(i + n) % config.writeObjects}`,
              JSON.stringify({ data: { n: String(n) } }),
            )
          : await send(agent, config, 'GET', config.listPath);
        result.bytes += answer.bytes;
        count(writer ? result.write : result.list, String(answer.status));
        if (!writer && answer.status === 200) result.listLatencies.push(performance.now() - t0);
        if (answer.status === 429 && !stopping) await pause(answer.retryAfter * 1000);
      } catch (err) {
        count(writer ? result.write : result.list, 'error');
        const message = err instanceof Error ? err.message : String(err);
        result.errors[message] = (result.errors[message] ?? 0) + 1;
      } finally {
        inFlight--;
      }
    }
  };
  const lanes = Array.from({ length: config.concurrency }, (_, i) => lane(i));
  parentPort?.on('message', (msg: unknown) => {
    if (msg !== 'stop') return;
    stopping = true;
    for (const wake of [...wakeups]) wake();
    const drained = Promise.all(lanes);
    const deadline = new Promise((resolve) => setTimeout(resolve, config.drainMs));
    void Promise.race([drained, deadline]).then(() => {
      result.unfinished = inFlight;
      parentPort?.postMessage(result);
      agent.destroy();
      process.exit(0);
    });
  });
}

void flood(workerData as FloodConfig);
