/**
 * Container logs as a kubelet keeps them (the CRI log format: one line per output line,
 * `TIMESTAMP STREAM F CONTENT`, P for a part of a longer line) and reads them back for
 * `/containerLogs` with kube's PodLogOptions: `sinceTime`/`sinceSeconds`, `tailLines`, `timestamps`,
 * `limitBytes`, and `follow` until the container has stopped.
 */
import { appendFileSync, existsSync, openSync, readFileSync, readSync, closeSync, statSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';

/** Longest part of a line written as one record (the kubelet's 16 KiB). */
const MAX_RECORD = 16 * 1024;

/** A timestamp as the CRI log and `--timestamps` give it: RFC 3339 in UTC with nanoseconds. */
function criTime(d = new Date()): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
}

/** Writes a container's stdout and stderr into `file` in the CRI format, as they come (see the end's partial record). */
export function captureOutput(file: string, streams: Array<[Readable | null, 'stdout' | 'stderr']>): void {
  for (const [stream, name] of streams) {
    if (stream === null) continue;
    let partial = '';
    const write = (content: string, full: boolean): void => appendFileSync(file, `${criTime()} ${name} ${full ? 'F' : 'P'} ${content}\n`);
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) write(line, true);
      while (partial.length > MAX_RECORD) {
        write(partial.slice(0, MAX_RECORD), false);
        partial = partial.slice(MAX_RECORD);
      }
    });
    // Output that ends without a newline ends with a partial record, as containerd writes it: read
    // back (and as a termination message) it gets no newline it did not have.
    stream.on('end', () => {
      if (partial !== '') write(partial, false);
    });
  }
}

/** The options `/containerLogs` reads from its query. */
export interface LogOptions {
  follow: boolean;
  timestamps: boolean;
  tailLines?: number;
  limitBytes?: number;
  /** Only lines written at or after this time (ms since the epoch). */
  sinceMs?: number;
}

/** The kubelet's reading of its query parameters (`sinceSeconds` counts back from now). */
export function logOptionsOf(query: URLSearchParams): LogOptions {
  const int = (name: string): number | undefined => (query.has(name) ? Number(query.get(name)) : undefined);
  const sinceSeconds = int('sinceSeconds');
  const sinceTime = query.get('sinceTime');
  return {
    follow: query.get('follow') === 'true',
    timestamps: query.get('timestamps') === 'true',
    tailLines: int('tailLines'),
    limitBytes: int('limitBytes'),
    sinceMs: sinceSeconds !== undefined ? Date.now() - sinceSeconds * 1000 : sinceTime !== null ? Date.parse(sinceTime) : undefined,
  };
}

/** One record of a CRI log. */
interface LogRecord {
  time: string;
  content: string;
  full: boolean;
}

function parseRecords(text: string): LogRecord[] {
  const out: LogRecord[] = [];
  for (const line of text.split('\n')) {
    const m = /^(\S+) (stdout|stderr) ([FP]) (.*)$/.exec(line);
    if (m !== null) out.push({ time: m[1], content: m[4], full: m[3] === 'F' });
  }
  return out;
}

/** The text a reader gets for `records`: line ends restored, timestamps prefixed when asked. */
function render(records: LogRecord[], options: LogOptions): string {
  let out = '';
  let lineStart = true;
  for (const r of records) {
    if (lineStart && options.timestamps) out += `${r.time} `;
    out += r.full ? `${r.content}\n` : r.content;
    lineStart = r.full;
  }
  return out;
}

/**
 * Writes the log in `file` to `out` with `options`; with `follow`, keeps writing what is appended
 * until `running()` is false and nothing more came, then ends `out`. A missing file is an empty log.
 */
export function streamLog(file: string, options: LogOptions, out: Writable, running: () => boolean): void {
  let budget = options.limitBytes ?? Infinity;
  const send = (text: string): boolean => {
    if (budget <= 0 || text === '') return budget > 0;
    const bytes = Buffer.from(text);
    const part = bytes.length > budget ? bytes.subarray(0, budget) : bytes;
    budget -= part.length;
    out.write(part);
    return budget > 0;
  };
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  let offset = Buffer.byteLength(text);
  let records = parseRecords(text);
  if (options.sinceMs !== undefined) records = records.filter((r) => Date.parse(r.time) >= options.sinceMs!);
  if (options.tailLines !== undefined) {
    // A line may span several records (P ... F): the last tailLines lines are counted by their F
    // (or, for output ending without a newline, by its last record).
    let lines = 0;
    let start = records.length;
    for (; start > 0; start--) {
      if (records[start - 1].full || start === records.length) {
        if (lines === options.tailLines) break;
        lines++;
      }
    }
    records = records.slice(start);
  }
  if (!send(render(records, options)) || !options.follow) {
    out.end();
    return;
  }
  let idle = 0;
  const timer = setInterval(() => {
    const size = existsSync(file) ? statSync(file).size : 0;
    if (size > offset) {
      const fd = openSync(file, 'r');
      const chunk = Buffer.alloc(size - offset);
      readSync(fd, chunk, 0, chunk.length, offset);
      closeSync(fd);
      // Only whole records: a record being written is read on the next tick.
      const whole = chunk.lastIndexOf(0x0a) + 1;
      offset += whole;
      idle = 0;
      if (!send(render(parseRecords(chunk.subarray(0, whole).toString('utf8')), options))) stop();
      return;
    }
    if (!running() && ++idle > 2) stop();
  }, 100);
  const stop = (): void => {
    clearInterval(timer);
    out.end();
  };
  out.on('close', () => clearInterval(timer));
}
