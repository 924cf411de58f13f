import { readFileSync } from 'node:fs';
import { logger } from '../logging/logger.js';

/**
 * A set of files read at start and re-read when they change on disk (polled every `intervalMs`),
 * as kube-apiserver's dynamic certificate and CA bundle loaders do: a rotated certificate is used
 * for new connections without a restart. A change is taken only when `accept` approves the new
 * contents (a half-written certificate keeps the previous one in use).
 */
export class ReloadingFiles {
  private contents: string[];
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners: Array<(contents: string[]) => void> = [];

  constructor(
    readonly paths: string[],
    private readonly accept: (contents: string[]) => void = () => undefined,
  ) {
    this.contents = paths.map((p) => readFileSync(p, 'utf8'));
    accept(this.contents);
  }

  /** The contents currently in use, in the order of `paths`. */
  current(): string[] {
    return this.contents;
  }

  /** Calls `listener` with the new contents after each accepted change. */
  onChange(listener: (contents: string[]) => void): void {
    this.listeners.push(listener);
  }

  /** Starts polling (idempotent); the timer never keeps the process alive. */
  watch(intervalMs = 1000): void {
    if (this.timer !== undefined || this.paths.length === 0) return;
    this.timer = setInterval(() => this.check(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Re-reads the files now; true when they changed and the change was taken. */
  check(): boolean {
    let next: string[];
    try {
      next = this.paths.map((p) => readFileSync(p, 'utf8'));
    } catch (err) {
      logger.warn('cannot re-read a certificate file; keeping the loaded one', { paths: this.paths, error: err });
      return false;
    }
    if (next.every((c, i) => c === this.contents[i])) return false;
    try {
      this.accept(next);
    } catch (err) {
      logger.warn('a changed certificate file is not usable yet; keeping the loaded one', { paths: this.paths, error: err });
      return false;
    }
    this.contents = next;
    logger.info('reloaded certificate files', { paths: this.paths });
    for (const l of this.listeners) l(next);
    return true;
  }
}

/** The PEM certificates of a bundle, one string each. */
export function pemCertificates(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
}
