/**
 * encodings: the same work in JSON, Protobuf and CBOR (server started with
 * --feature-gates=CBORServingAndStorage=true). For N Pods (--list-objects, 10,000 by default): a full
 * LIST in each encoding (median time and server CPU of 3, response size, peak server RSS growth); then watch fan-out:
 * for each encoding in turn, WATCHERS watchers of that encoding receive EVENTS ConfigMap creations, and
 * the server CPU beyond the same writes with no watcher, divided by the events, is that encoding's
 * fan-out cost per event (each event is encoded once per encoding and shared by its watchers).
 */
import { request, type IncomingMessage } from 'node:http';
import { decodeCborSequenceItem } from '../src/codec/cbor/cbor-decoder.js';
import { CM_PATH } from './fixtures.js';
import { HttpClient, runPool } from './http-client.js';
import { podBody } from './manifests.js';
import { metric, type Metric } from './metrics.js';
import { mean, median } from './stats.js';
import { log, sleep, withTarget, type Scenario } from './scenario.js';

const PODS = '/api/v1/namespaces/default/pods';
/** LISTs per encoding after the first. */
const REPEATS = 5;
const WATCHERS = 20;
const EVENTS = 300;

const FORMATS = [
  { name: 'JSON', accept: 'application/json' },
  { name: 'Protobuf', accept: 'application/vnd.kubernetes.protobuf' },
  { name: 'CBOR', accept: 'application/cbor' },
] as const;
type Format = (typeof FORMATS)[number];

/** One watch connection counting the events it receives (frames of its encoding). */
class CountingWatch {
  events = 0;
  private buf: Buffer = Buffer.alloc(0);
  private res: IncomingMessage | undefined;

  constructor(
    url: string,
    path: string,
    private readonly format: Format,
  ) {
    const u = new URL(url);
    const req = request({ host: u.hostname, port: u.port, path, headers: { accept: format.accept }, agent: false }, (res) => {
      this.res = res;
      res.on('data', (c: Buffer) => this.onData(c));
    });
    req.on('error', () => undefined);
    req.end();
  }

  private onData(chunk: Buffer): void {
    if (this.format.name === 'JSON') {
      for (const b of chunk) if (b === 0x0a) this.events++;
      return;
    }
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    let at = 0;
    for (;;) {
      if (this.format.name === 'Protobuf') {
        if (this.buf.length - at < 4) break;
        const len = this.buf.readUInt32BE(at);
        if (this.buf.length - at < 4 + len) break;
        at += 4 + len;
      } else {
        const item = decodeCborSequenceItem(this.buf, at, { maxDepth: 1000 });
        if (item === undefined) break;
        at = item.next;
      }
      this.events++;
    }
    this.buf = this.buf.subarray(at);
  }

  close(): void {
    this.res?.destroy();
  }
}

async function waitFor(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!done()) {
    if (performance.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

export const encodingsScenario: Scenario = {
  name: 'encodings',
  title: 'encodings: LIST of Pods and watch fan-out in JSON, Protobuf and CBOR',
  async run(target, options) {
    return withTarget(
      target,
      options,
      async (t) => {
        const client = new HttpClient(t.server.url, options.concurrency);
        const metrics: Metric[] = [];
        try {
          const n = options.listObjects;
          log(`encodings: creating ${n} Pods`);
          let failed = '';
          await runPool(n, options.concurrency, performance.now() + 600_000, async (i) => {
            const r = await client.request('POST', PODS, { body: podBody(`enc-${i}`), discardBody: true });
            if (r.status !== 201 && failed === '') failed = `HTTP ${r.status}`;
          });
          if (failed !== '') throw new Error(`creating Pods: ${failed}`);
          t.assertAlive();
          await sleep(500);

          for (const f of FORMATS) {
            // The first LIST of an encoding may encode every item (protobuf caches them); the
            // steady state is the mean CPU of the LISTs after it (one reading in clock ticks of 10 ms
            // is too coarse for a single LIST).
            const times: number[] = [];
            const growths: number[] = [];
            const cpus: number[] = [];
            let bytes = 0;
            for (let i = 0; i < 1 + REPEATS; i++) {
              const before = t.rss.reset();
              const stop = t.cpu.start();
              const res = await client.request('GET', PODS, { discardBody: true, timeoutMs: 120_000, headers: { accept: f.accept } });
              cpus.push(stop().totalMs);
              const peak = t.rss.peakSinceReset();
              t.assertAlive();
              if (res.status !== 200) throw new Error(`${f.name} LIST: HTTP ${res.status}`);
              times.push(res.ms);
              growths.push(Math.max(0, peak - before));
              bytes = res.bytes;
              await sleep(200);
            }
            const steady = cpus.slice(1);
            metrics.push(metric(`${f.name} LIST of ${n} Pods, median of ${REPEATS} after the first`, median(times.slice(1)), 'ms'));
            metrics.push(metric(`${f.name} LIST of ${n} Pods: server CPU per LIST, mean of ${REPEATS} after the first`, mean(steady), 'ms'));
            metrics.push(metric(`${f.name} LIST of ${n} Pods: server CPU of the first`, cpus[0] ?? 0, 'ms'));
            metrics.push(metric(`${f.name} LIST response size`, bytes, 'bytes'));
            metrics.push(metric(`${f.name} peak RSS growth during LIST (max of ${1 + REPEATS})`, Math.max(...growths), 'bytes'));
          }

          // Watch fan-out: server CPU of EVENTS creations with WATCHERS watchers of one encoding, beyond
          // the CPU of the same creations with none.
          let seq = 0;
          const writes = async (): Promise<number> => {
            const stop = t.cpu.start();
            for (let i = 0; i < EVENTS; i++) {
              const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `enc-w-${seq}`, labels: { enc: 'w' } }, data: { seq: String(seq++) } };
              const r = await client.request('POST', CM_PATH, { body: JSON.stringify(cm), discardBody: true });
              if (r.status !== 201) throw new Error(`create: HTTP ${r.status}`);
            }
            return stop().totalMs;
          };
          const listRv = async (): Promise<string> => {
            const r = await client.request('GET', `${CM_PATH}?limit=1`);
            return (JSON.parse(r.body) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
          };
          const baseline = await writes();
          for (const f of FORMATS) {
            const path = `${CM_PATH}?watch=1&labelSelector=enc%3Dw&resourceVersion=${await listRv()}&timeoutSeconds=600`;
            const watches = Array.from({ length: WATCHERS }, () => new CountingWatch(t.server.url, path, f));
            await sleep(500);
            const stop = t.cpu.start();
            await writes();
            const delivered = await waitFor(() => watches.every((w) => w.events >= EVENTS), 60_000);
            const cpu = stop().totalMs;
            for (const w of watches) w.close();
            if (!delivered) throw new Error(`${f.name} watchers got ${watches.map((w) => w.events).join(',')} of ${EVENTS} events`);
            metrics.push(
              metric(`${f.name} watch fan-out: server CPU per event, ${WATCHERS} watchers, beyond the write`, Math.max(0, cpu - baseline) / EVENTS, 'ms'),
            );
            await sleep(300);
          }
          return {
            metrics,
            notes: [`${n} Pods; ${WATCHERS} watchers per encoding, ${EVENTS} creations; write-only CPU ${(baseline / EVENTS).toFixed(3)} ms/write`],
          };
        } finally {
          client.close();
        }
      },
      ['--feature-gates=CBORServingAndStorage=true'],
    );
  },
};
