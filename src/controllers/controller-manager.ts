/**
 * The server's controller manager: the controllers enabled by `--controllers` run in exactly one
 * process per storage at a time, the holder of the `kube-system/capstan-controller-manager` Lease.
 * Every worker (and every replica over one Redis) is a candidate; the controllers start when this
 * one acquires the lease and stop when it loses it or the server shuts down.
 */
import { setMaxListeners } from 'node:events';
import { logger } from '../logging/logger.js';
import type { ServerContext } from '../rest/server-context.js';
import { GarbageCollector } from './garbage-collector.js';
import {
  CSR_SIGNING,
  DISRUPTION,
  GARBAGE_COLLECTOR,
  NODE_LIFECYCLE,
  PV_PROTECTION,
  PVC_PROTECTION,
  RESOURCE_QUOTA,
  isControllerEnabled,
  type ControllerName,
} from './controller-names.js';
import { CsrSigningController, type SigningConfig } from './csr-signing-controller.js';
import { DisruptionController } from './disruption-controller.js';
import { NodeLifecycleController } from './node-lifecycle-controller.js';
import { ResourceQuotaController } from './resource-quota-controller.js';
import { PvcProtectionController, PvProtectionController } from './storage-protection-controllers.js';
import { candidateIdentity, DEFAULT_ELECTION_TIMING, LeaderElector, type ElectionTiming } from './leader-election.js';

/** A controller the manager runs while leading; `run` resolves once `signal` aborted and it stopped. */
export interface ManagedController {
  readonly name: string;
  run(signal: AbortSignal): Promise<void>;
  /** Resolves once the current run has started serving (caches filled); without it, as soon as it runs. */
  whenStarted?(): Promise<void>;
}

/** What some controllers need beyond the API services. */
export interface ControllerDependencies {
  /** The cluster signing CA (with HTTPS); without it the CSR signing controller does not run. */
  signing?: SigningConfig;
}

/** A controller the manager can run: its flag name and how to build one (undefined: it cannot run here). */
export interface ControllerDescriptor extends ControllerName {
  create(server: ServerContext, deps: ControllerDependencies): ManagedController | undefined;
}

/** Controllers of the manager, as kube-controller-manager names them. */
export const KNOWN_CONTROLLERS: ControllerDescriptor[] = [
  {
    ...GARBAGE_COLLECTOR,
    // A fresh graph for every term as leader: it is rebuilt from a list of every type.
    create: (server) => ({ name: GARBAGE_COLLECTOR.name, run: (signal) => new GarbageCollector(server).run(signal) }),
  },
  {
    ...DISRUPTION,
    // PodDisruptionBudget status from the pods, budgets and workloads' change streams (what eviction reads).
    create: (server) => ({
      name: DISRUPTION.name,
      run: async (signal) => {
        const controller = new DisruptionController(server.storage);
        await controller.start();
        if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        controller.stop();
      },
    }),
  },
  {
    ...RESOURCE_QUOTA,
    // ResourceQuota status.hard and status.used, recounted from the namespace's objects.
    create: (server) => ({ name: RESOURCE_QUOTA.name, run: (signal) => new ResourceQuotaController(server.storage).run(signal) }),
  },
  {
    ...PVC_PROTECTION,
    // Lets deleted claims go once no scheduled pod uses them (StorageObjectInUseProtection holds them).
    create: (server) => ({ name: PVC_PROTECTION.name, run: (signal) => new PvcProtectionController(server).run(signal) }),
  },
  {
    ...PV_PROTECTION,
    // Lets deleted volumes go once they are not Bound.
    create: (server) => ({ name: PV_PROTECTION.name, run: (signal) => new PvProtectionController(server).run(signal) }),
  },
  {
    ...CSR_SIGNING,
    // status.certificate of approved CSRs of the kubernetes.io signers, from the cluster signing CA.
    create: (server, { signing }) =>
      signing === undefined ? undefined : { name: CSR_SIGNING.name, run: (signal) => new CsrSigningController(server.storage, signing).run(signal) },
  },
  {
    ...NODE_LIFECYCLE,
    // Node condition taints (NoSchedule): takes off the not-ready taint TaintNodesByCondition puts on new Nodes.
    create: (server) => ({ name: NODE_LIFECYCLE.name, run: (signal) => new NodeLifecycleController(server.storage).run(signal) }),
  },
];

/** The Lease the manager's candidates compete for. */
export const CONTROLLER_MANAGER_LEASE = { namespace: 'kube-system', name: 'capstan-controller-manager' };

const RESTART_DELAY_MS = 1000;
const STOP_TIMEOUT_MS = 3000;

/** Runs the enabled controllers under leader election. */
export class ControllerManager {
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;
  private readonly active = new Set<Promise<void>>();
  private started: Promise<unknown> = Promise.resolve();
  readonly elector: LeaderElector;

  constructor(
    server: ServerContext,
    private readonly controllers: ManagedController[],
    timing: ElectionTiming = DEFAULT_ELECTION_TIMING,
  ) {
    this.elector = new LeaderElector(
      server.storage,
      CONTROLLER_MANAGER_LEASE.namespace,
      CONTROLLER_MANAGER_LEASE.name,
      candidateIdentity(),
      { onStartedLeading: (signal) => this.lead(signal), onStoppedLeading: () => undefined },
      timing,
    );
  }

  /**
   * Starts competing for the lease. Resolves after the first attempt; when it won the lease, once
   * every controller has started (so a lone server is ready with its controllers running).
   */
  async start(): Promise<void> {
    this.running ??= this.elector.run(this.abort.signal);
    if (await this.elector.firstAttempt) await this.started;
  }

  /**
   * Stops the controllers and releases the lease; resolves once both are done, or after
   * STOP_TIMEOUT_MS (an unreachable storage must not hold up shutdown: the lease then expires).
   */
  async stop(): Promise<void> {
    this.abort.abort();
    let timer: NodeJS.Timeout | undefined;
    const bounded = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, STOP_TIMEOUT_MS);
    });
    await Promise.race([Promise.all([this.running, ...this.active]).then(() => undefined), bounded]);
    clearTimeout(timer);
  }

  private lead(signal: AbortSignal): void {
    // Every controller listens for the end of the term.
    setMaxListeners(0, signal);
    for (const c of this.controllers) {
      const p = this.keepRunning(c, signal);
      this.active.add(p);
      void p.finally(() => this.active.delete(p));
    }
    this.started = Promise.all(this.controllers.map((c) => c.whenStarted?.() ?? Promise.resolve()));
  }

  /** Runs `c` until `signal` aborts, restarting it after a failure. */
  private async keepRunning(c: ManagedController, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await c.run(signal);
      } catch (err) {
        logger.error('controller failed; restarting', { controller: c.name, error: err instanceof Error ? err.message : String(err) });
      }
      if (!signal.aborted) await new Promise((r) => setTimeout(r, RESTART_DELAY_MS));
    }
  }
}

/**
 * The manager for `--controllers` plus `extra` (controllers the server runs under the same election
 * whatever the flag says), or undefined when there are none. Every candidate for the lease must be
 * given the same controllers, or the leader of the moment decides which run.
 */
export function controllerManagerFor(
  server: ServerContext,
  list: string[],
  timing?: ElectionTiming,
  deps: ControllerDependencies = {},
  extra: ManagedController[] = [],
): ControllerManager | undefined {
  const enabled = KNOWN_CONTROLLERS.filter((d) => isControllerEnabled(d, list))
    .map((d) => d.create(server, deps))
    .filter((c): c is ManagedController => c !== undefined);
  if (enabled.length + extra.length === 0) return undefined;
  return new ControllerManager(server, [...extra, ...enabled], timing);
}
