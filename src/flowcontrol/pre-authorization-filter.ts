import type { Request, Response } from 'express';
import type { AuthorizationAttributes } from '../auth/authorizer.js';

/**
 * A stage kube runs between impersonation and authorization (its max-in-flight or priority-and-fairness
 * filter): it sees the request's attributes with the impersonated user, and either calls `proceed`
 * (at once or later) or answers the request itself.
 */
export type PreAuthorizationFilter = (req: Request, res: Response, attrs: AuthorizationAttributes, proceed: () => void) => void;
