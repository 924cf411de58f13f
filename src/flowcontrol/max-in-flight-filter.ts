import type { Request, Response } from 'express';
import type { PreAuthorizationFilter } from './pre-authorization-filter.js';
import type { AuthorizationAttributes } from '../auth/authorizer.js';
import { parsedRequestOf } from '../api/parsed-request.js';
import { labelRequest } from '../metrics/request-labels.js';
import { recordTermination, type FlowControlStats } from './flowcontrol-metrics.js';
import { isLongRunning } from './long-running.js';
import { writeTooManyRequests } from './too-many-requests.js';

const READ_ONLY_VERBS = new Set(['get', 'list', 'watch']);

/** Options of the max-in-flight filter. */
export interface MaxInFlightOptions {
  /** Read-only requests executing at once (0: no limit). */
  readOnlyLimit: number;
  /** Mutating requests executing at once (0: no limit). */
  mutatingLimit: number;
  stats: FlowControlStats;
  isServed: (group: string, version: string, resource: string) => boolean;
}

/**
 * kube's WithMaxInFlightLimit (`--enable-priority-and-fairness=false`): at most `readOnlyLimit`
 * get/list/watch and `mutatingLimit` other requests execute at once; one more is answered at once
 * with kube's 429 and `Retry-After: 1`, unless its user is in `system:masters`. Long-running
 * requests (watches, exec, logs, ...) are not counted. Undefined when both limits are 0.
 */
export function maxInFlightFilter(options: MaxInFlightOptions): PreAuthorizationFilter | undefined {
  const { readOnlyLimit, mutatingLimit, stats } = options;
  if (readOnlyLimit === 0 && mutatingLimit === 0) return undefined;
  let readOnly = 0;
  let mutating = 0;
  return (req: Request, res: Response, attrs: AuthorizationAttributes, proceed: () => void): void => {
    if (isLongRunning(attrs)) {
      proceed();
      return;
    }
    const isReadOnly = READ_ONLY_VERBS.has(attrs.verb);
    const limit = isReadOnly ? readOnlyLimit : mutatingLimit;
    if (limit === 0) {
      proceed();
      return;
    }
    const current = isReadOnly ? readOnly : mutating;
    if (current >= limit) {
      // A system:masters user is so powerful that it always gets an answer (kube's comment).
      if (attrs.user.groups.includes('system:masters')) {
        proceed();
        return;
      }
      recordTermination(labelRequest(req.method, parsedRequestOf(req), req.headers['content-type'] ?? '', options.isServed).labels, 429);
      writeTooManyRequests(res, 1);
      return;
    }
    const kind = isReadOnly ? 'readOnly' : 'mutating';
    if (isReadOnly) readOnly++;
    else mutating++;
    stats.inflight.note('executing', kind, 1);
    res.once('close', () => {
      if (isReadOnly) readOnly--;
      else mutating--;
      stats.inflight.note('executing', kind, -1);
    });
    proceed();
  };
}
