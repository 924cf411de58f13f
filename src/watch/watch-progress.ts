import { compareResourceVersions } from '../storage/resource-version.js';

/**
 * The newest resourceVersion a watch has seen: its start version, then every change of the type it
 * was told about, including changes its filter did not deliver. Never moves backwards. Bookmarks
 * carry it, and a watch that loses history names it.
 */
export class WatchProgress {
  constructor(private current: string) {}

  /** The newest version seen so far. */
  get resourceVersion(): string {
    return this.current;
  }

  private waiters: { resourceVersion: string; resolve: () => void }[] = [];

  /** Records that the watch saw the change at `resourceVersion`. */
  advance(resourceVersion: string): void {
    if (compareResourceVersions(resourceVersion, this.current) <= 0) return;
    this.current = resourceVersion;
    if (this.waiters.length === 0) return;
    this.waiters = this.waiters.filter((w) => {
      if (compareResourceVersions(this.current, w.resourceVersion) < 0) return true;
      w.resolve();
      return false;
    });
  }

  /** Resolves once the watch has seen the change at `resourceVersion` (at once if it has). */
  reached(resourceVersion: string): Promise<void> {
    if (compareResourceVersions(this.current, resourceVersion) >= 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ resourceVersion, resolve }));
  }
}
