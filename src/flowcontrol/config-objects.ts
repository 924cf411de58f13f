import { isObject, metadataOf, stringField, type Obj } from '../api/object-util.js';
import { stringElements } from '../api/values.js';

/** One subject of a FlowSchema rule (kube's flowcontrol.Subject). */
export type FlowSubject = { kind: 'User'; name: string } | { kind: 'Group'; name: string } | { kind: 'ServiceAccount'; namespace: string; name: string };

/** A resource rule of a FlowSchema (kube's ResourcePolicyRule). */
export interface ResourceRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  clusterScope: boolean;
  namespaces: string[];
}

/** A non-resource rule of a FlowSchema (kube's NonResourcePolicyRule). */
export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs: string[];
}

/** One entry of a FlowSchema's `rules`: who, and which requests of theirs. */
export interface PolicyRules {
  subjects: FlowSubject[];
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
}

/** What classification needs of a FlowSchema. */
export interface FlowSchemaConfig {
  name: string;
  /** metadata.uid ('' for the built-in stand-ins used while the stored object is missing). */
  uid: string;
  matchingPrecedence: number;
  priorityLevel: string;
  /** How the flows of this schema are told apart; undefined: one flow. */
  distinguisher: 'ByUser' | 'ByNamespace' | undefined;
  rules: PolicyRules[];
}

/** Queuing parameters of a Limited level whose limit response is Queue. */
export interface QueuingConfig {
  queues: number;
  handSize: number;
  queueLengthLimit: number;
}

/** What dispatching needs of a PriorityLevelConfiguration. */
export interface PriorityLevelConfig {
  name: string;
  uid: string;
  exempt: boolean;
  nominalConcurrencyShares: number;
  /** Percent of the nominal seats other levels may borrow (undefined: none). */
  lendablePercent: number | undefined;
  /** Percent of the nominal seats this level may borrow beyond them (undefined: no limit). */
  borrowingLimitPercent: number | undefined;
  /** Queue settings; undefined for Reject levels and the exempt level. */
  queuing: QueuingConfig | undefined;
}

function integer(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}

function subjectOf(value: unknown): FlowSubject | undefined {
  if (!isObject(value)) return undefined;
  switch (value.kind) {
    case 'User':
      return isObject(value.user) && typeof value.user.name === 'string' ? { kind: 'User', name: value.user.name } : undefined;
    case 'Group':
      return isObject(value.group) && typeof value.group.name === 'string' ? { kind: 'Group', name: value.group.name } : undefined;
    case 'ServiceAccount': {
      const sa = value.serviceAccount;
      if (!isObject(sa) || typeof sa.name !== 'string' || typeof sa.namespace !== 'string') return undefined;
      return { kind: 'ServiceAccount', namespace: sa.namespace, name: sa.name };
    }
    default:
      return undefined;
  }
}

function rulesOf(value: unknown): PolicyRules[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isObject).map((rule: Obj) => ({
    subjects: (Array.isArray(rule.subjects) ? rule.subjects : []).map(subjectOf).filter((s): s is FlowSubject => s !== undefined),
    resourceRules: (Array.isArray(rule.resourceRules) ? rule.resourceRules : []).filter(isObject).map((r: Obj) => ({
      verbs: stringElements(r.verbs),
      apiGroups: stringElements(r.apiGroups),
      resources: stringElements(r.resources),
      clusterScope: r.clusterScope === true,
      namespaces: stringElements(r.namespaces),
    })),
    nonResourceRules: (Array.isArray(rule.nonResourceRules) ? rule.nonResourceRules : []).filter(isObject).map((r: Obj) => ({
      verbs: stringElements(r.verbs),
      nonResourceURLs: stringElements(r.nonResourceURLs),
    })),
  }));
}

/** A stored FlowSchema's classification facts; undefined when it names no priority level. */
export function flowSchemaConfigOf(obj: Obj): FlowSchemaConfig | undefined {
  const meta = metadataOf(obj);
  const spec = isObject(obj.spec) ? obj.spec : {};
  const level = isObject(spec.priorityLevelConfiguration) ? stringField(spec.priorityLevelConfiguration, 'name') : '';
  if (level === '') return undefined;
  const method = isObject(spec.distinguisherMethod) ? spec.distinguisherMethod.type : undefined;
  return {
    name: stringField(meta, 'name'),
    uid: stringField(meta, 'uid'),
    matchingPrecedence: integer(spec.matchingPrecedence) ?? 1000,
    priorityLevel: level,
    distinguisher: method === 'ByUser' || method === 'ByNamespace' ? method : undefined,
    rules: rulesOf(spec.rules),
  };
}

function percent(value: unknown): number | undefined {
  const n = integer(value);
  return n === undefined ? undefined : Math.max(0, n);
}

/**
 * A stored PriorityLevelConfiguration's dispatching facts, or a reason it cannot be used (kube's
 * queueSetCompleterForPL refusals: a broken union, an exempt type on another name, queuing whose
 * shuffle sharding is impossible). Kube's defaults fill what is unset.
 */
export function priorityLevelConfigOf(obj: Obj): PriorityLevelConfig | string {
  const meta = metadataOf(obj);
  const name = stringField(meta, 'name');
  const uid = stringField(meta, 'uid');
  const spec = isObject(obj.spec) ? obj.spec : {};
  if (spec.type === 'Exempt') {
    if (name !== 'exempt') return 'non-alignment between name and type';
    const exempt = isObject(spec.exempt) ? spec.exempt : {};
    return {
      name,
      uid,
      exempt: true,
      nominalConcurrencyShares: integer(exempt.nominalConcurrencyShares) ?? 0,
      lendablePercent: percent(exempt.lendablePercent),
      borrowingLimitPercent: undefined,
      queuing: undefined,
    };
  }
  if (spec.type !== 'Limited' || !isObject(spec.limited)) return 'broken union structure at the top, for Limited';
  if (name === 'exempt') return 'non-alignment between name and type';
  const limited = spec.limited;
  const response = isObject(limited.limitResponse) ? limited.limitResponse : {};
  let queuing: QueuingConfig | undefined;
  if (response.type === 'Queue') {
    const q = isObject(response.queuing) ? response.queuing : {};
    queuing = { queues: integer(q.queues) ?? 64, handSize: integer(q.handSize) ?? 8, queueLengthLimit: integer(q.queueLengthLimit) ?? 50 };
    const problem = shuffleShardingProblem(queuing.queues, queuing.handSize);
    if (problem !== undefined) return problem;
  } else if (response.type !== 'Reject') return 'broken union structure for limit response';
  return {
    name,
    uid,
    exempt: false,
    nominalConcurrencyShares: integer(limited.nominalConcurrencyShares) ?? 30,
    lendablePercent: percent(limited.lendablePercent),
    borrowingLimitPercent: percent(limited.borrowingLimitPercent),
    queuing,
  };
}

/** kube's shufflesharding.NewDealer refusals (undefined when `queues` and `handSize` can be dealt). */
export function shuffleShardingProblem(queues: number, handSize: number): string | undefined {
  if (queues <= 0 || handSize <= 0) return `deckSize ${queues} or handSize ${handSize} is not positive`;
  if (handSize > queues) return `handSize ${handSize} is greater than deckSize ${queues}`;
  if (queues > 1 << 26) return `deckSize ${queues} is impractically large`;
  if (Math.ceil(Math.log2(queues) * handSize) > 60) return `required entropy bits of deckSize ${queues} and handSize ${handSize} is greater than 60`;
  return undefined;
}
