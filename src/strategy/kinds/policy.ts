import { validateHorizontalPodAutoscaler, validateHorizontalPodAutoscalerStatus } from '../../validation/autoscaler.js';
import { validatePodDisruptionBudget, validatePodDisruptionBudgetStatus } from '../../validation/disruption-budget.js';
import type { KindStrategy } from '../kind-strategy.js';
import { hpaPrinter, pdbPrinter } from '../printers/autoscaling.js';
import { defaultHorizontalPodAutoscaler } from '../../conversion/hpa-defaults.js';

/** Disruption budgets and autoscalers (HPAs are stored as autoscaling/v2; v1 converts, src/conversion/). */

export const podDisruptionBudgets: KindStrategy = {
  printer: pdbPrinter,
  validate: (obj, _old, sub) => (sub === 'status' ? validatePodDisruptionBudgetStatus(obj) : validatePodDisruptionBudget(obj)),
  updateMetadataPasses: { objectMeta: false, objectMetaUpdate: false },
  statusUpdatesMetadata: 'all',
};

export const horizontalPodAutoscalers: KindStrategy = {
  printer: hpaPrinter,
  defaults: defaultHorizontalPodAutoscaler,
  validate: (obj, old, sub) => (sub === 'status' ? validateHorizontalPodAutoscalerStatus(obj) : validateHorizontalPodAutoscaler(obj, old)),
  updateMetadataPasses: { objectMeta: false, objectMetaUpdate: true },
  tracksGeneration: false,
  statusUpdatesMetadata: 'all',
};

/** This file's kinds by `group/resource` (the core group is empty). */
export const POLICY_KINDS: Readonly<Record<string, KindStrategy>> = {
  'policy/poddisruptionbudgets': podDisruptionBudgets,
  'autoscaling/horizontalpodautoscalers': horizontalPodAutoscalers,
};
