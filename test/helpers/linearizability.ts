/**
 * Histories for the linearizability checker (test/tools/linearizability-checker, Porcupine): the
 * JSON shape it reads, and a runner that builds it (cached) and returns its verdict.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** What a client got back: `failed` means nothing was done (a 503), `unknown` that the answer was lost (timeout, connection, 504). */
export type HistoryStatus = 'ok' | 'exists' | 'conflict' | 'notfound' | 'failed' | 'unknown';

export interface HistoryItem {
  name: string;
  rv: string;
  value: string;
}

/** One request, with call and return times in microseconds. */
export interface HistoryOperation {
  client: number;
  call: number;
  return: number;
  op: 'create' | 'update' | 'delete' | 'get' | 'list';
  name: string;
  /** The value a create or update writes (unique per write). */
  value: string;
  /** The resourceVersion an update or delete is conditional on. */
  expectRv: string;
  result: { status: HistoryStatus; rv: string; value: string; items: HistoryItem[] };
}

/** One event of a complete watch of the type's objects (a DELETED event's value is the removed state's). */
export interface HistoryEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  name: string;
  rv: string;
  value: string;
}

export interface History {
  operations: HistoryOperation[];
  events: HistoryEvent[];
}

/** The checker's verdict (its stdout) and exit status: 0 linearizable, 1 not, 2 timed out, 3 bad input. */
export interface Verdict {
  result: string;
  linearizable: boolean;
  operations: number;
  checked: number;
  unknownResolved: number;
  unknownDropped: number;
  failedDropped: number;
  visualization?: string;
  error?: string;
  seconds: number;
  exitCode: number;
}

let binary: Promise<string> | undefined;

/** The checker binary, built once per process by scripts/build-go-linearizability-checker.sh (cached by source hash). */
export function checkerBinary(): Promise<string> {
  binary ??= execFileAsync('bash', [join(ROOT, 'scripts', 'build-go-linearizability-checker.sh')], { maxBuffer: 1 << 20, timeout: 600_000 }).then((r) =>
    r.stdout.trim(),
  );
  return binary;
}

/**
 * Runs the checker over `history`. With `visualize`, a history that is not linearizable also gets
 * Porcupine's HTML drawing at that path.
 */
export async function checkHistory(history: History, options: { timeoutSeconds?: number; visualize?: string; keep?: string } = {}): Promise<Verdict> {
  const bin = await checkerBinary();
  const dir = await mkdtemp(join(tmpdir(), 'capstan-history-'));
  const file = options.keep ?? join(dir, 'history.json');
  try {
    await writeFile(file, JSON.stringify(history));
    const args = [`-timeout=${options.timeoutSeconds ?? 120}s`, ...(options.visualize ? [`-visualize=${options.visualize}`] : []), file];
    let stdout: string;
    let exitCode = 0;
    try {
      ({ stdout } = await execFileAsync(bin, args, { maxBuffer: 1 << 20, timeout: ((options.timeoutSeconds ?? 120) + 60) * 1000 }));
    } catch (err) {
      const e = err as { stdout?: string; code?: number };
      stdout = e.stdout ?? '';
      exitCode = typeof e.code === 'number' ? e.code : -1;
    }
    const parsed = JSON.parse(stdout) as Omit<Verdict, 'exitCode'>;
    return { ...parsed, exitCode };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Microseconds since `origin` (a monotonic clock shared by every client of one history). */
export function clock(origin: bigint): () => number {
  return () => Number((process.hrtime.bigint() - origin) / 1000n);
}
