import { isObject, metadataOf, nowTimestamp, stringField, type Obj } from '../api/object-util.js';
import { logger } from '../logging/logger.js';
import { type Storage } from '../storage/storage.js';
import { FLOW_SCHEMA_TYPE, PRIORITY_LEVEL_TYPE, ensureFlowControlConfiguration } from './flowcontrol-bootstrap.js';
import { findCondition } from '../rest/disruption-budget-rules.js';
import { WatchedCollection, type CollectionChange } from '../storage/watched-collection.js';
import { StorageError } from '../api/storage-error.js';

/** How often kube-apiserver's ensurer re-applies the bootstrap configuration. */
export const ENSURE_INTERVAL_MS = 60_000;

/** Options of the controller (tests shorten the interval). */
export interface FlowControlConfigOptions {
  ensureIntervalMs?: number;
}

/** The name of the PriorityLevelConfiguration a FlowSchema references. */
function priorityLevelOf(fs: Obj): string {
  const spec = isObject(fs.spec) ? fs.spec : {};
  return isObject(spec.priorityLevelConfiguration) ? stringField(spec.priorityLevelConfiguration, 'name') : '';
}

/**
 * The API priority-and-fairness configuration work kube-apiserver does beside serving: re-applies
 * the bootstrap FlowSchemas and PriorityLevelConfigurations every minute (a deleted or edited
 * mandatory object comes back, as with kube's ensurer), and keeps each FlowSchema's `Dangling`
 * condition saying whether its PriorityLevelConfiguration exists, with kube's reasons and messages.
 * Works from caches of both kinds fed by the change streams; writes are compare-and-swap (a lost
 * race is followed by the change that caused it). Run it in one process per storage.
 */
export class FlowControlConfigController {
  private readonly abort = new AbortController();
  private readonly schemas: WatchedCollection;
  private readonly levels: WatchedCollection;
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private draining = false;
  private started = false;
  private readonly intervalMs: number;

  constructor(
    private readonly storage: Storage,
    options: FlowControlConfigOptions = {},
  ) {
    this.intervalMs = options.ensureIntervalMs ?? ENSURE_INTERVAL_MS;
    this.schemas = new WatchedCollection(storage, FLOW_SCHEMA_TYPE, (c) => this.changed(c), this.abort.signal, this.report);
    this.levels = new WatchedCollection(storage, PRIORITY_LEVEL_TYPE, (c) => this.changed(c), this.abort.signal, this.report);
  }

  /** Fills the caches, brings every FlowSchema's status up to date, and starts the periodic ensure. */
  async start(): Promise<void> {
    await this.levels.start();
    await this.schemas.start();
    this.started = true;
    this.kick();
    this.schedule();
  }

  /** Stops following changes and the periodic ensure. */
  stop(): void {
    this.abort.abort();
    clearTimeout(this.timer);
    this.pending.clear();
  }

  private readonly report = (err: unknown): void => {
    if (this.abort.signal.aborted) return;
    logger.warn('flowcontrol configuration', { error: err instanceof Error ? err.message : String(err) });
  };

  private schedule(): void {
    if (this.abort.signal.aborted) return;
    this.timer = setTimeout(() => {
      ensureFlowControlConfiguration(this.storage)
        .catch(this.report)
        .finally(() => this.schedule());
    }, this.intervalMs);
  }

  private changed(c: CollectionChange): void {
    if (c.type === FLOW_SCHEMA_TYPE) {
      if (c.current !== undefined) this.pending.add(c.key);
    } else {
      // A level appearing or going changes whether the FlowSchemas naming it dangle.
      for (const fs of this.schemas.inNamespace('')) if (priorityLevelOf(fs) === c.key) this.pending.add(stringField(metadataOf(fs), 'name'));
    }
    if (this.started) this.kick();
  }

  private kick(): void {
    if (this.draining) return;
    this.draining = true;
    void (async () => {
      try {
        while (this.pending.size > 0 && !this.abort.signal.aborted) {
          const [name] = this.pending;
          this.pending.delete(name);
          await this.syncStatus(name).catch(this.report);
        }
      } finally {
        this.draining = false;
      }
    })();
  }

  /** presyncFlowSchemaStatus: writes the Dangling condition when its status, reason or message is out of date. */
  private async syncStatus(name: string): Promise<void> {
    const fs = this.schemas.get(name);
    if (fs === undefined) return;
    const level = priorityLevelOf(fs);
    const dangling = this.levels.get(level) === undefined;
    const status = isObject(fs.status) ? fs.status : {};
    const current = findCondition(status.conditions, 'Dangling');
    const want = dangling
      ? {
          status: 'True',
          reason: 'NotFound',
          message: `This FlowSchema references the PriorityLevelConfiguration object named "${level}" but there is no such object`,
        }
      : { status: 'False', reason: 'Found', message: `This FlowSchema references the PriorityLevelConfiguration object named "${level}" and it exists` };
    if (current !== undefined && current.status === want.status && current.reason === want.reason && current.message === want.message) return;
    const condition = { type: 'Dangling', status: want.status, lastTransitionTime: nowTimestamp(), reason: want.reason, message: want.message };
    // Server-side apply of the condition: replaced in place, or added after the others.
    const conditions: unknown[] = Array.isArray(status.conditions) ? status.conditions : [];
    const replaced = conditions.map((c) => (isObject(c) && c.type === 'Dangling' ? condition : c));
    const updated = { ...fs, status: { ...status, conditions: current === undefined ? [...conditions, condition] : replaced } };
    try {
      await this.storage.update(FLOW_SCHEMA_TYPE, name, updated, stringField(metadataOf(fs), 'resourceVersion'));
    } catch (err) {
      if (!(err instanceof StorageError && (err.code === 'Conflict' || err.code === 'NotFound'))) throw err;
    }
  }
}
