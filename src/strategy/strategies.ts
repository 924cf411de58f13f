import type { TablePrinter } from '../codec/table-printer.js';
import type { FieldSelectorSpec } from '../selectors/field-selector.js';
import type { Obj } from '../api/object-util.js';
import type { ResourceInfo } from '../api/resource-info.js';
import type { KindStrategy } from './kind-strategy.js';
import type { CustomResourceFacts } from '../catalog/custom-resource-facts.js';
import { customResourceDefinitions } from './kinds/custom-resource-definitions.js';
import { customResources } from './custom-resources.js';
import { cachedCustomResourcePrinter } from './printers/custom-columns.js';
import { customResourceFieldSelector, defaultFieldSelector } from './field-selectors.js';
import { CLUSTER_KINDS } from './kinds/cluster.js';
import { CONFIG_KINDS } from './kinds/config.js';
import { NAMESPACES_KINDS } from './kinds/namespaces.js';
import { NETWORKING_KINDS } from './kinds/networking.js';
import { INGRESS_CLASS_KINDS } from './kinds/ingress-classes.js';
import { PODS_KINDS } from './kinds/pods.js';
import { POLICY_KINDS } from './kinds/policy.js';
import { SERVICES_KINDS } from './kinds/services.js';
import { STORAGE_KINDS } from './kinds/storage.js';
import { WORKLOADS_KINDS } from './kinds/workloads.js';

/** Every built-in kind's strategy by `group/resource` (the core group is empty); kinds not listed have the generic behaviour. */
const STRATEGIES: Readonly<Record<string, KindStrategy>> = {
  ...CLUSTER_KINDS,
  ...CONFIG_KINDS,
  ...NAMESPACES_KINDS,
  ...NETWORKING_KINDS,
  ...INGRESS_CLASS_KINDS,
  ...PODS_KINDS,
  ...POLICY_KINDS,
  ...SERVICES_KINDS,
  ...STORAGE_KINDS,
  ...WORKLOADS_KINDS,
  'apiextensions.k8s.io/customresourcedefinitions': customResourceDefinitions,
};

const GENERIC: KindStrategy = {};

/** The strategy of a built-in resource (the generic one for resources without their own facts and for custom resources). */
export function strategyFor(info: Pick<ResourceInfo, 'group' | 'resource' | 'custom'>): KindStrategy {
  if (info.custom === true) return customResources;
  return STRATEGIES[`${info.group}/${info.resource}`] ?? GENERIC;
}

/** The Table columns of the resource's objects: a custom resource version's declared columns, a built-in kind's strategy's (undefined: Name and Created At). */
export function printerOf(info: Pick<ResourceInfo, 'group' | 'resource' | 'custom' | 'printerColumns'>): TablePrinter | undefined {
  if (info.custom === true) return cachedCustomResourcePrinter(info.printerColumns ?? []);
  return strategyFor(info).printer;
}

/**
 * The field selectors the resource's objects take: a custom resource's metadata fields and its
 * version's selectableFields; a built-in kind's strategy's, or kube's default (metadata.name and,
 * namespaced, metadata.namespace).
 */
export function fieldSelectorsOf(info: Pick<ResourceInfo, 'group' | 'version' | 'resource' | 'custom' | 'namespaced' | 'selectableFields'>): FieldSelectorSpec {
  if (info.custom === true) return customResourceFieldSelector(info.namespaced, info.selectableFields ?? []);
  return strategyFor(info).fieldSelectors?.(info.version) ?? defaultFieldSelector(info.namespaced);
}

/** The field whose exact-match watches storage narrows by index (KindStrategy.watchIndexField); none for custom resources. */
export function watchIndexFieldOf(info: Pick<ResourceInfo, 'group' | 'resource' | 'custom'>): string | undefined {
  return info.custom === true ? undefined : strategyFor(info).watchIndexField;
}

/** Whether Capstan applies kube's defaulting to objects of this resource. */
export function hasDefaults(info: Pick<ResourceInfo, 'group' | 'resource'>): boolean {
  return strategyFor(info).defaults !== undefined;
}

/**
 * Applies kube's defaults for the object's type and version in place (nothing for types without
 * defaults); custom resources take theirs from their schema in `facts`.
 */
export function applyDefaults(info: Pick<ResourceInfo, 'group' | 'version' | 'resource'>, obj: Obj, facts: CustomResourceFacts): void {
  strategyFor(info).defaults?.(obj, info.version, facts);
}
