import type { APIGroup, APIGroupDiscovery } from './discovery-types.js';

/**
 * Group versions served by other servers (the aggregation layer's APIServices), merged into the
 * discovery documents this server builds from its catalog. Every method returns the local documents
 * unchanged when nothing is served elsewhere.
 */
export interface DiscoveryExtension {
  /** Moves whenever what the other methods return may have changed (documents are cached by it). */
  generation(): number;
  /** The `/apis` groups (APIGroupList) with the aggregated ones merged in, in priority order. */
  groupList(local: APIGroup[]): APIGroup[];
  /** `/apis/GROUP` with aggregated versions merged in (top-level form); `local` when none. */
  group(name: string, local: APIGroup | undefined): APIGroup | undefined;
  /** The items of the aggregated `/apis` document with the aggregated group versions merged in. */
  aggregatedItems(local: APIGroupDiscovery[]): APIGroupDiscovery[];
}
