/**
 * The other processes of one server instance (cluster workers) that read the same change streams.
 * A write a worker makes returns once every other worker with watches of the type has handed the
 * change to them (within a bound), so a client whose writes and watches go to different workers
 * sees its write at its watch by the time the response arrives, as on one process.
 */

/** What this process tells and asks its peers (RedisStorage calls it). */
export interface PeerReaders {
  /** Starts answering peers' questions about this process's stream readers. */
  serve(local: LocalReaders): void;
  /**
   * This process's watches of `stream` now have listeners (true: peers' writes to it wait for this
   * process from now on) or none left (false: they need not).
   */
  reading(stream: string, listening: boolean): void;
  /**
   * Resolves once every peer with listeners of `stream` has handed out its changes through
   * `version`, or a bound passed (a peer that is stalled is not waited for); undefined when no peer
   * listens to it.
   * Never rejects.
   */
  awaitPeers(stream: string, version: string): Promise<void> | undefined;
}

/** What peers ask of this process's stream readers. */
export interface LocalReaders {
  /** Resolves once this process's reader of `stream` has dispatched `version`; undefined when it already has, or reads no such stream. */
  whenDispatched(stream: string, version: string): Promise<void> | undefined;
}
