import { isObject, jsonEqual, jsonKey, metadataOf, stringField, type Obj } from '../api/object-util.js';
import { RBAC_TYPES } from '../auth/rbac/rbac-policy.js';
import { labelSelectorString } from '../strategy/printers/format.js';
import { logger } from '../logging/logger.js';
import { compileLabelSelector, type Labels } from '../selectors/label-selector.js';
import { type Storage } from '../storage/storage.js';
import { WatchedCollection } from '../storage/watched-collection.js';
import { StorageError } from '../api/storage-error.js';

function labelsOf(obj: Obj): Labels {
  const labels = metadataOf(obj).labels;
  if (!isObject(labels)) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels)) if (typeof v === 'string') out[k] = v;
  return out;
}

function selectorsOf(role: Obj): unknown[] | undefined {
  return isObject(role.aggregationRule) && Array.isArray(role.aggregationRule.clusterRoleSelectors) ? role.aggregationRule.clusterRoleSelectors : undefined;
}

/**
 * kube-controller-manager's clusterrole-aggregation controller: the rules of every ClusterRole with an
 * aggregationRule are the rules of the other ClusterRoles its selectors match (selectors in order,
 * matching roles by name, each distinct rule once). Any ClusterRole change re-evaluates every
 * aggregating role; writes are compare-and-swap (a lost race is followed by the change that won it).
 * Run it in one process per storage.
 */
export class ClusterRoleAggregationController {
  private readonly abort = new AbortController();
  private readonly roles: WatchedCollection;
  private readonly pending = new Set<string>();
  private started = false;
  private draining = false;

  constructor(private readonly storage: Storage) {
    this.roles = new WatchedCollection(storage, RBAC_TYPES.clusterRoles, () => this.changed(), this.abort.signal, this.report);
  }

  async start(): Promise<void> {
    await this.roles.start();
    this.started = true;
    this.changed();
  }

  stop(): void {
    this.abort.abort();
    this.pending.clear();
  }

  private readonly report = (err: unknown): void => {
    if (this.abort.signal.aborted) return;
    logger.warn('clusterrole aggregation', { error: err instanceof Error ? err.message : String(err) });
  };

  private changed(): void {
    if (!this.started) return;
    for (const role of this.roles.inNamespace('')) if (selectorsOf(role) !== undefined) this.pending.add(stringField(metadataOf(role), 'name'));
    if (this.draining) return;
    this.draining = true;
    void (async () => {
      try {
        while (this.pending.size > 0 && !this.abort.signal.aborted) {
          const [name] = this.pending;
          this.pending.delete(name);
          await this.sync(name).catch(this.report);
        }
      } finally {
        this.draining = false;
      }
    })();
  }

  /** The rules `role` aggregates from the other cluster roles. */
  aggregatedRules(role: Obj): unknown[] {
    const name = stringField(metadataOf(role), 'name');
    const all = [...this.roles.inNamespace('')].sort((a, b) => (stringField(metadataOf(a), 'name') < stringField(metadataOf(b), 'name') ? -1 : 1));
    const rules: unknown[] = [];
    const seen = new Set<string>();
    for (const selector of selectorsOf(role) ?? []) {
      const text = labelSelectorString(selector);
      if (text === undefined) continue;
      const matches = compileLabelSelector(text);
      for (const other of all) {
        if (stringField(metadataOf(other), 'name') === name || !matches(labelsOf(other))) continue;
        for (const rule of Array.isArray(other.rules) ? other.rules : []) {
          const key = jsonKey(rule);
          if (seen.has(key)) continue;
          seen.add(key);
          rules.push(rule);
        }
      }
    }
    return rules;
  }

  private async sync(name: string): Promise<void> {
    const role = this.roles.get(name);
    if (role === undefined || selectorsOf(role) === undefined) return;
    const rules = this.aggregatedRules(role);
    const current = Array.isArray(role.rules) ? role.rules : [];
    if (jsonEqual(rules, current)) return;
    try {
      await this.storage.update(RBAC_TYPES.clusterRoles, name, { ...role, rules }, stringField(metadataOf(role), 'resourceVersion'));
    } catch (err) {
      if (!(err instanceof StorageError && (err.code === 'Conflict' || err.code === 'NotFound'))) throw err;
    }
  }
}
