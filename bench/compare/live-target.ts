/**
 * A server the comparison measures for the length of all its scenarios: Capstan started by the
 * benchmark, the reference kube-apiserver started through kube-up.sh, or a server given by URL.
 * Every one is reached over HTTPS with a bearer token of a system:masters user, with RBAC
 * authorization on.
 */
import { HttpClient, type ServerAccess } from '../http-client.js';
import type { CpuMeter } from '../proc-cpu.js';

export interface LiveTarget {
  /** Column name, e.g. `memory` or `kube-apiserver`. */
  readonly label: string;
  readonly description: string;
  /** HTTPS base URL. */
  readonly url: string;
  /** Bearer token and TLS trust. */
  readonly access: ServerAccess;
  /** CPU of the server's processes (with Redis or etcd); `available()` false when unknown. */
  readonly cpu: CpuMeter;
  /** The processes `cpu` measures (server workers, Redis or etcd), for `--pin`. */
  pids(): number[];
  /** What `cpu` and `rssBytes` cover, for the report. */
  readonly cpuScope: string;
  /** Whether the benchmark started it (its first requests are then a fresh server's). */
  readonly startedHere: boolean;
  /** Spawn to ready with a fresh certificate directory and with existing certificates, ms (null: not measured). */
  readonly readyFreshMs: number | null;
  readonly readyExistingCertsMs: number | null;
  /** What qualifies the start-up numbers, if anything. */
  readonly startupNote: string | undefined;
  /** Resident memory of the server's processes now, bytes; null when unknown. */
  rssBytes(): number | null;
  /** Throws when the server is known to be gone. */
  assertAlive(): void;
  /** Whether the server is known to be gone. */
  exited(): boolean;
  /** Stops what the benchmark started (nothing for a server given by URL). */
  stop(): Promise<void>;
}

/** A keep-alive client for `target` with up to `maxSockets` connections. */
export function clientFor(target: LiveTarget, maxSockets: number): HttpClient {
  return new HttpClient(target.url, maxSockets, target.access);
}
