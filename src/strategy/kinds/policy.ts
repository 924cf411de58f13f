import { validateHorizontalPodAutoscaler, validateHorizontalPodAutoscalerStatus } from '../../validation/autoscaler.js';
import { validatePodDisruptionBudget, validatePodDisruptionBudgetStatus } from '../../validation/disruption-budget.js';
import { defaultHorizontalPodAutoscaler } from '../defaults.js';
import type { KindStrategy } from '../kind-strategy.js';

/** Disruption budgets and autoscalers (HPAs are stored as autoscaling/v2; v1 converts, src/conversion/). */

export const podDisruptionBudgets: KindStrategy = {
  validate: (obj, _old, sub) => (sub === 'status' ? validatePodDisruptionBudgetStatus(obj) : validatePodDisruptionBudget(obj)),
  updateMetadataPasses: { objectMeta: false, objectMetaUpdate: false },
};

export const horizontalPodAutoscalers: KindStrategy = {
  defaults: defaultHorizontalPodAutoscaler,
  validate: (obj, old, sub) => (sub === 'status' ? validateHorizontalPodAutoscalerStatus(obj) : validateHorizontalPodAutoscaler(obj, old)),
  updateMetadataPasses: { objectMeta: false, objectMetaUpdate: true },
  tracksGeneration: false,
};
