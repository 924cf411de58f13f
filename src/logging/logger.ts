/**
 * Logs on stderr, one line per record, in one of two formats (`--log-format`):
 * - `json`: `{"level","msg",...fields,"ts"}`. Keys come in that order so line-oriented tools (and
 *   tests waiting for `"msg":"serving","url":...`) can match the message and its first field.
 * - `text`: `2026-11-24T19:10:17.123Z info  serving url=http://127.0.0.1:8080 storage=memory`, for a
 *   person at a terminal; values with spaces or quotes are JSON-quoted, errors show their message.
 * Lines under the configured level are dropped before any formatting.
 */

/** Log levels, most verbose first (the `--log-level` values). */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Extra structured fields of a log line; `Error` values are expanded to name, message and stack. */
export type LogFields = Record<string, unknown>;

/** Line formats (the `--log-format` values, `auto` resolved). */
export type LogFormat = 'json' | 'text';

/** Where lines go; replaceable so a test can capture them. */
export type LogSink = (line: string) => void;

/** An `Error` as plain fields (stack included); other thrown values as their string form. */
export function serializeError(err: unknown): LogFields {
  if (err instanceof Error) {
    const out: LogFields = { name: err.name, message: err.message };
    if (err.stack !== undefined) out.stack = err.stack;
    const cause = (err as { cause?: unknown }).cause;
    if (cause !== undefined) out.cause = serializeError(cause);
    return out;
  }
  return { message: String(err) };
}

function replacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return serializeError(value);
  if (typeof value === 'bigint') return value.toString();
  return value;
}

/**
 * Whether some value of `fields` may need the replacer (an object that may hold an Error, or a
 * bigint): request lines hold only strings and numbers, and JSON.stringify without a replacer
 * function is several times faster.
 */
function needsReplacer(fields: LogFields): boolean {
  for (const key in fields) {
    const value = fields[key];
    if ((typeof value === 'object' && value !== null) || typeof value === 'bigint') return true;
  }
  return false;
}

/** `new Date().toISOString()`, computed once per millisecond (a busy server logs many lines in one). */
const isoNow = (() => {
  let lastMs = Number.NaN;
  let lastIso = '';
  return (): string => {
    const ms = Date.now();
    if (ms !== lastMs) {
      lastMs = ms;
      lastIso = new Date(ms).toISOString();
    }
    return lastIso;
  };
})();

/** Keys a line writes itself: a field of the same name needs the general path. */
const OWN_KEYS = new Set(['level', 'msg', 'ts']);
const quotedKeys = new Map<string, string>();

/**
 * `,"key":` for a field written in place; undefined when the key needs the general path: one of
 * the line's own, or integer-like (JSON.stringify writes those first).
 */
function keyPrefix(key: string): string | undefined {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    const first = key.charCodeAt(0);
    if (OWN_KEYS.has(key) || (first >= 48 && first <= 57)) return undefined;
    quoted = `,${JSON.stringify(key)}:`;
    if (quotedKeys.size < 512) quotedKeys.set(key, quoted);
  }
  return quoted;
}

/**
 * The JSON line `JSON.stringify({ level, msg, ...fields, ...base, ts })` would write, built by
 * concatenation (a third less CPU than building that record and serialising it); undefined when
 * the general path must decide: a value that needs the replacer (an object, a bigint), a key of
 * fields that base repeats, an integer-like key, or a key named level, msg or ts.
 */
function directJsonLine(level: string, msg: string, fields: LogFields, base: LogFields, ts: string): string | undefined {
  const head = `{"level":"${level}","msg":${JSON.stringify(msg)}`;
  const withFields = appendFields(head, fields, base);
  const line = withFields === undefined ? undefined : appendFields(withFields, base, undefined);
  return line === undefined ? undefined : `${line},"ts":"${ts}"}`;
}

/** `line` plus `,"key":value` for each field of `part` in order; undefined as directJsonLine says (`later`: the fields that come after and would override). */
function appendFields(line: string, part: LogFields, later: LogFields | undefined): string | undefined {
  for (const key of Object.keys(part)) {
    if (later !== undefined && Object.hasOwn(later, key)) return undefined;
    const value = part[key];
    if (value === undefined) continue;
    if ((typeof value === 'object' && value !== null) || typeof value === 'bigint') return undefined;
    const prefix = keyPrefix(key);
    if (prefix === undefined) return undefined;
    // Functions and symbols give undefined and are left out, as in an object.
    const text = JSON.stringify(value) as string | undefined;
    if (text !== undefined) line += prefix + text;
  }
  return line;
}

/**
 * Lines bound for stderr. A deferred line (a request line: a busy server finishes many requests per
 * turn of the event loop, and each write to a pipe is a system call) waits for the end of the turn
 * and goes out with the others of that turn in one write; any other line first writes what waits,
 * then itself, so every line stays in order with what the process writes to stderr itself (a fatal
 * error's message). What still waits is written before the process exits.
 */
const stderrLines = (() => {
  let pending = '';
  let scheduled = false;
  let exitHooked = false;
  const flush = (): void => {
    scheduled = false;
    if (pending === '') return;
    const text = pending;
    pending = '';
    process.stderr.write(text);
  };
  return {
    now(line: string): void {
      flush();
      process.stderr.write(line);
    },
    defer(line: string): void {
      pending += line;
      if (scheduled) return;
      scheduled = true;
      setImmediate(flush);
      if (!exitHooked) {
        exitHooked = true;
        process.once('exit', flush);
      }
    },
  };
})();

/** `key=value` for a text line: bare when the value is a plain word, JSON-quoted otherwise. */
function textValue(value: unknown): string {
  if (value instanceof Error) return textValue(value.message);
  if (typeof value === 'string') return /^[\w.:/@+,=-]*$/.test(value) && value !== '' ? value : JSON.stringify(value);
  try {
    return JSON.stringify(value, replacer) ?? String(value);
  } catch {
    return JSON.stringify(String(value));
  }
}

function textLine(level: LogLevel, msg: string, fields: LogFields): string {
  const parts = [new Date().toISOString(), level.padEnd(5), msg];
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) parts.push(`${key}=${textValue(value)}`);
  }
  return `${parts.join(' ')}\n`;
}

/** A level-filtered line logger (JSON or text). Never throws: an unserialisable field is logged as its string form. */
export class Logger {
  private rank: number;
  private lineFormat: LogFormat = 'json';

  constructor(
    level: LogLevel = 'info',
    private sink: LogSink | undefined = undefined,
    private readonly base: LogFields = {},
  ) {
    this.rank = RANK[level];
  }

  /** Changes the minimum level; applies to this logger and every child made from it afterwards. */
  setLevel(level: LogLevel): void {
    this.rank = RANK[level];
  }

  /** Changes the line format of this logger. */
  setFormat(format: LogFormat): void {
    this.lineFormat = format;
  }

  /** The line format in use. */
  get format(): LogFormat {
    return this.lineFormat;
  }

  /** True when a line at `level` would be written (lets callers skip building expensive fields). */
  enabled(level: LogLevel): boolean {
    return RANK[level] >= this.rank;
  }

  /** Replaces the output; returns the previous sink. */
  setSink(sink: LogSink): LogSink {
    const previous = this.sink ?? ((line: string) => stderrLines.now(line));
    this.sink = sink;
    return previous;
  }

  /** Adds `fields` to every line written from now on (e.g. the worker index). */
  addBaseFields(fields: LogFields): void {
    Object.assign(this.base, fields);
  }

  log(level: LogLevel, msg: string, fields: LogFields = {}): void {
    if (RANK[level] < this.rank) return;
    this.write(level, msg, fields);
  }

  /**
   * As `log`, for the lines of every request: on stderr such a line may wait until the end of the
   * event loop's turn, to be written with the others of that turn (see stderrLines).
   */
  logDeferred(level: LogLevel, msg: string, fields: LogFields = {}): void {
    if (RANK[level] < this.rank) return;
    this.write(level, msg, fields, true);
  }

  /**
   * An `info` line written whatever the level: lifecycle lines (`serving`, `shutting down`) that
   * scripts and tests wait for must not disappear under `--log-level=warn`.
   */
  announce(msg: string, fields: LogFields = {}): void {
    this.write('info', msg, fields);
  }

  private write(level: LogLevel, msg: string, fields: LogFields, deferred = false): void {
    if (this.lineFormat === 'text') {
      this.emit(textLine(level, msg, { ...fields, ...this.base }), deferred);
      return;
    }
    const ts = isoNow();
    const direct = directJsonLine(level, msg, fields, this.base, ts);
    if (direct !== undefined) {
      this.emit(`${direct}\n`, deferred);
      return;
    }
    const record: LogFields = { level, msg, ...fields, ...this.base, ts };
    let line: string;
    try {
      line = needsReplacer(fields) || needsReplacer(this.base) ? JSON.stringify(record, replacer) : JSON.stringify(record);
    } catch {
      line = JSON.stringify({ level, msg, fields: '[unserializable fields]', ts: record.ts });
    }
    this.emit(`${line}\n`, deferred);
  }

  private emit(line: string, deferred: boolean): void {
    if (this.sink !== undefined) this.sink(line);
    else if (deferred) stderrLines.defer(line);
    else stderrLines.now(line);
  }

  debug(msg: string, fields?: LogFields): void {
    this.log('debug', msg, fields);
  }
  info(msg: string, fields?: LogFields): void {
    this.log('info', msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    this.log('warn', msg, fields);
  }
  error(msg: string, fields?: LogFields): void {
    this.log('error', msg, fields);
  }
}

/** The process-wide logger; `main` sets its level from `--log-level`. */
export const logger = new Logger();
