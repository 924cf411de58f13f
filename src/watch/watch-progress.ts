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

  /** Records that the watch saw the change at `resourceVersion`. */
  advance(resourceVersion: string): void {
    if (compareResourceVersions(resourceVersion, this.current) > 0) this.current = resourceVersion;
  }
}
