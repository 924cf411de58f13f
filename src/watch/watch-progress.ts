import { compareResourceVersions } from '../storage/resource-version.js';
import type { DispatchClock } from '../storage/storage.js';

/**
 * The newest resourceVersion a watch has seen: its start version, then every change of the type it
 * was told about, including changes its filter did not deliver, and (a watch storage narrows with a
 * trigger) every change storage withheld from it. Never moves backwards. Bookmarks carry it, and a
 * watch that loses history names it.
 */
export class WatchProgress {
  private clock: DispatchClock | undefined;

  constructor(private current: string) {}

  /** The newest version seen so far. */
  get resourceVersion(): string {
    const clock = this.clock;
    if (clock !== undefined && compareResourceVersions(clock.resourceVersion, this.current) > 0) this.current = clock.resourceVersion;
    return this.current;
  }

  /**
   * From now on the watch has also been through every change up to `clock`'s version (storage
   * withholds changes from a triggered watch). Waiters of `reached` are woken only by `advance`.
   */
  follow(clock: DispatchClock): void {
    this.clock = clock;
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
    if (compareResourceVersions(this.resourceVersion, resourceVersion) >= 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ resourceVersion, resolve }));
  }
}
