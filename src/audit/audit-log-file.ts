import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { gzipSync } from 'node:zlib';

/** How the audit file is rotated, as kube-apiserver's lumberjack logger does it. */
export interface RotationOptions {
  /** Megabytes before rotation (0: never). */
  maxSizeMB: number;
  /** Rotated files kept (0: all). */
  maxBackups: number;
  /** Days a rotated file is kept (0: forever). */
  maxAgeDays: number;
  /** gzip rotated files. */
  compress: boolean;
}

/** Where audit lines go: one `write` per line, so a line is never split or interleaved. */
export interface AuditSink {
  write(line: string): void;
  close(): void;
}

/**
 * Standard output (`--audit-log-path=-`), through Node's stream (synchronous for files and, on Linux,
 * pipes). A pipe keeps writes whole only up to its atomic size (4 KiB), so several workers sharing a
 * piped stdout may interleave longer lines; a file keeps them whole.
 */
export function stdoutSink(): AuditSink {
  return {
    write: (line) => {
      process.stdout.write(line);
    },
    close: () => undefined,
  };
}

const LOCK_STALE_MS = 10_000;

/**
 * An audit log file appended to by one or more processes (Node cluster workers): the file is opened
 * with O_APPEND and each line is written with one write(2), which the kernel never interleaves with
 * another process's write on a local file. Writes are synchronous, so an event is on disk before the
 * request goes on (kube's blocking mode).
 *
 * Rotation follows lumberjack, kube-apiserver's rotating writer: once a write would take the file past
 * maxSizeMB, the file is renamed to `NAME-<UTC time as 2006-01-02T15-04-05.000>.EXT` and a new one
 * started; then backups beyond maxBackups or older than maxAgeDays are removed and the rest gzipped
 * when asked. Processes sharing the file rotate under a lock file (`PATH.rotate-lock`), and a process
 * whose file was rotated by another one notices (the path names another inode) and reopens it.
 */
export class AuditLogFile implements AuditSink {
  private fd: number;
  private ino: number;
  private readonly maxBytes: number;

  constructor(
    private readonly path: string,
    private readonly rotation: RotationOptions,
  ) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    this.fd = openSync(path, 'a', 0o600);
    this.ino = fstatSync(this.fd).ino;
    this.maxBytes = rotation.maxSizeMB * 1024 * 1024;
  }

  write(line: string): void {
    const bytes = Buffer.from(line);
    if (this.maxBytes > 0) this.beforeWrite(bytes.length);
    writeSync(this.fd, bytes);
  }

  close(): void {
    closeSync(this.fd);
  }

  private beforeWrite(length: number): void {
    let current: number;
    try {
      const st = statSync(this.path);
      if (st.ino !== this.ino) {
        this.reopen();
        current = fstatSync(this.fd).size;
      } else current = st.size;
    } catch {
      // Removed under us: start a new file.
      this.reopen();
      current = 0;
    }
    // A line longer than the limit still goes out whole, into a file of its own.
    if (current > 0 && current + length > this.maxBytes) this.rotate(length);
  }

  private reopen(): void {
    closeSync(this.fd);
    this.fd = openSync(this.path, 'a', 0o600);
    this.ino = fstatSync(this.fd).ino;
  }

  private rotate(length: number): void {
    const lock = `${this.path}.rotate-lock`;
    if (!takeLock(lock)) {
      // Another process is rotating: write on; its rename takes our line along or the next write reopens.
      return;
    }
    try {
      const st = statSync(this.path);
      // Someone rotated between our check and the lock: reopen instead.
      if (st.ino === this.ino && st.size + length > this.maxBytes) {
        renameSync(this.path, backupName(this.path, new Date()));
      }
      this.reopen();
    } finally {
      unlinkSync(lock);
    }
    this.cleanUp();
  }

  /** Removes backups past the count and age limits, then compresses the ones left, as lumberjack does. */
  private cleanUp(): void {
    const dir = dirname(this.path);
    const ext = extname(this.path);
    const prefix = `${basename(this.path, ext)}-`;
    const backups = readdirSync(dir)
      .map((file) => ({ file, time: backupTime(file, prefix, ext) }))
      .filter((b): b is { file: string; time: number } => b.time !== undefined)
      .sort((a, b) => b.time - a.time);
    let keep = backups;
    const remove: string[] = [];
    if (this.rotation.maxBackups > 0 && keep.length > this.rotation.maxBackups) {
      remove.push(...keep.slice(this.rotation.maxBackups).map((b) => b.file));
      keep = keep.slice(0, this.rotation.maxBackups);
    }
    if (this.rotation.maxAgeDays > 0) {
      const cutoff = Date.now() - this.rotation.maxAgeDays * 24 * 3600 * 1000;
      remove.push(...keep.filter((b) => b.time < cutoff).map((b) => b.file));
      keep = keep.filter((b) => b.time >= cutoff);
    }
    for (const file of remove) unlinkQuietly(join(dir, file));
    if (this.rotation.compress) {
      for (const b of keep) {
        if (b.file.endsWith('.gz')) continue;
        const from = join(dir, b.file);
        try {
          writeFileSync(`${from}.gz`, gzipSync(readFileSync(from)), { mode: 0o600 });
          unlinkSync(from);
        } catch {
          // Another process compressed it first.
        }
      }
    }
  }
}

function takeLock(lock: string): boolean {
  try {
    closeSync(openSync(lock, 'wx'));
    return true;
  } catch {
    try {
      // A lock left by a process that died mid-rotation is taken over.
      if (Date.now() - statSync(lock).mtimeMs > LOCK_STALE_MS) {
        unlinkSync(lock);
        return takeLock(lock);
      }
    } catch {
      return false;
    }
    return false;
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

/** lumberjack's backup name: `NAME-2006-01-02T15-04-05.000.EXT`, in UTC. */
export function backupName(path: string, at: Date): string {
  const ext = extname(path);
  const stamp = at.toISOString().replace('Z', '').replace(/:/g, '-');
  return join(dirname(path), `${basename(path, ext)}-${stamp}${ext}`);
}

function backupTime(file: string, prefix: string, ext: string): number | undefined {
  const name = file.endsWith('.gz') ? file.slice(0, -3) : file;
  if (!name.startsWith(prefix) || !name.endsWith(ext)) return undefined;
  const stamp = name.slice(prefix.length, name.length - ext.length);
  const m = /^(\d{4}-\d\d-\d\d)T(\d\d)-(\d\d)-(\d\d)\.(\d{3})$/.exec(stamp);
  if (m === null) return undefined;
  return Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`);
}
