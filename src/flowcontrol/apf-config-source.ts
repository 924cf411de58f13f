import { isObject, type Obj } from '../api/object-util.js';
import { storageTypeOf } from '../api/resource-info.js';
import { logger } from '../logging/logger.js';
import { readSchemaJson } from '../schema/schema-files.js';
import type { Storage } from '../storage/storage.js';
import { WatchedCollection } from '../storage/watched-collection.js';
import type { ApfController, MandatoryConfig } from './apf-controller.js';
import { flowSchemaConfigOf, priorityLevelConfigOf, type FlowSchemaConfig, type PriorityLevelConfig } from './config-objects.js';

const GROUP = 'flowcontrol.apiserver.k8s.io';
const FLOW_SCHEMAS = storageTypeOf({ group: GROUP, resource: 'flowschemas' });
const PRIORITY_LEVELS = storageTypeOf({ group: GROUP, resource: 'prioritylevelconfigurations' });

function bootstrapObject(list: unknown, name: string): Obj {
  const found: unknown = Array.isArray(list) ? (list as unknown[]).find((o) => isObject(o) && o.name === name) : undefined;
  if (!isObject(found) || !isObject(found.spec)) throw new Error(`schema/flowcontrol-bootstrap.json lacks the mandatory object ${name}`);
  return { metadata: { name, uid: '' }, spec: found.spec };
}

/** kube's mandatory exempt and catch-all objects, from `schema/flowcontrol-bootstrap.json` (UIDs empty, as kube's built-in copies). */
export function mandatoryConfig(): MandatoryConfig {
  const data = readSchemaJson('flowcontrol-bootstrap.json');
  if (!isObject(data)) throw new Error('schema/flowcontrol-bootstrap.json is not an object');
  const level = (name: string): PriorityLevelConfig => {
    const parsed = priorityLevelConfigOf(bootstrapObject(data.mandatoryPriorityLevelConfigurations, name));
    if (typeof parsed === 'string') throw new Error(`mandatory priority level ${name}: ${parsed}`);
    return parsed;
  };
  const schema = (name: string): FlowSchemaConfig => {
    const parsed = flowSchemaConfigOf(bootstrapObject(data.mandatoryFlowSchemas, name));
    if (parsed === undefined) throw new Error(`mandatory FlowSchema ${name} names no priority level`);
    return parsed;
  };
  return { exemptLevel: level('exempt'), catchAllLevel: level('catch-all'), exemptSchema: schema('exempt'), catchAllSchema: schema('catch-all') };
}

/**
 * Feeds an {@link ApfController} from storage, as kube's APF controller does from its informers:
 * both kinds are listed and then followed through their change streams (in every process), and each
 * burst of changes is digested once, on the next turn of the event loop. A PriorityLevelConfiguration
 * that cannot be used (a broken union, impossible queuing) is left out with a warning, so the
 * FlowSchemas naming it are skipped as kube skips them.
 */
export class ApfConfigSource {
  private readonly schemas: WatchedCollection;
  private readonly levels: WatchedCollection;
  private scheduled = false;
  private started = false;
  private readonly warned = new Map<string, string>();

  constructor(
    storage: Storage,
    private readonly controller: ApfController,
    private readonly signal: AbortSignal,
  ) {
    const report = (err: unknown): void => {
      if (!signal.aborted) logger.warn('flow control configuration watch failed', { error: err instanceof Error ? err.message : String(err) });
    };
    this.schemas = new WatchedCollection(storage, FLOW_SCHEMAS, () => this.schedule(), signal, report);
    this.levels = new WatchedCollection(storage, PRIORITY_LEVELS, () => this.schedule(), signal, report);
  }

  /** Lists both kinds and digests them; resolves once the controller holds the stored configuration. */
  async start(): Promise<void> {
    await Promise.all([this.levels.start(), this.schemas.start()]);
    this.started = true;
    this.digest();
  }

  /** Digests the configuration again soon (changes arrived, or a removed level became idle). */
  schedule(): void {
    if (!this.started || this.scheduled || this.signal.aborted) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (!this.signal.aborted) this.digest();
    });
  }

  private digest(): void {
    const levels: PriorityLevelConfig[] = [];
    for (const obj of this.levels.inNamespace('')) {
      const parsed = priorityLevelConfigOf(obj);
      if (typeof parsed !== 'string') {
        levels.push(parsed);
        continue;
      }
      const name = isObject(obj.metadata) && typeof obj.metadata.name === 'string' ? obj.metadata.name : '';
      if (this.warned.get(name) !== parsed) logger.warn('priority level configuration ignored', { name, reason: parsed });
      this.warned.set(name, parsed);
    }
    const schemas: FlowSchemaConfig[] = [];
    for (const obj of this.schemas.inNamespace('')) {
      const parsed = flowSchemaConfigOf(obj);
      if (parsed !== undefined) schemas.push(parsed);
    }
    this.controller.digest(levels, schemas);
  }
}
