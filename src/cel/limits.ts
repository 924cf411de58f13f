/** kube's per-expression runtime cost limit (celconfig.PerCallLimit). */
export const PER_CALL_LIMIT = 1_000_000;
/** kube's runtime cost budget for all the rules of one custom resource (celconfig.RuntimeCELCostBudget). */
export const RUNTIME_CEL_COST_BUDGET = 10_000_000;
