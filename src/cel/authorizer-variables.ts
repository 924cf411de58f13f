import { opaque, type CelType } from './types.js';

/** The authorizer variables (policies and webhook matchConditions): values src/cel made, passed through as they are. */
export const AUTHORIZER_VARIABLES: Record<string, CelType> = {
  authorizer: opaque('kubernetes.authorization.Authorizer'),
  'authorizer.requestResource': opaque('kubernetes.authorization.ResourceCheck'),
};
