import { performance } from 'node:perf_hooks';
import type { Request, Response } from 'express';
import type { PreAuthorizationFilter } from './pre-authorization-filter.js';
import type { AuthorizationAttributes } from '../auth/authorizer.js';
import { parsedRequestOf } from '../api/parsed-request.js';
import { requestDeadlineMs } from '../api/request-deadline.js';
import { labelRequest } from '../metrics/request-labels.js';
import type { ApfController } from './apf-controller.js';
import { flowDistinguisher } from './flow-schema-matching.js';
import { recordTermination, type FlowControlStats, type RequestKind } from './flowcontrol-metrics.js';
import { isLongRunning } from './long-running.js';
import { maxSeats, type FairRequest, type FlowIdentity } from './queue-set.js';
import type { RetryAfterTracker } from './retry-after.js';
import { flowHash } from './shuffle-sharding.js';
import { writeTooManyRequests } from './too-many-requests.js';
import { onWatchInitialized } from './watch-initialization.js';
import type { WatchTracker } from './watch-tracker.js';
import type { WorkEstimator } from './work-estimator.js';

/** kube's response headers naming the matched objects by UID (not by name, which could tell a user they were deprioritised). */
export const FLOW_SCHEMA_UID_HEADER = 'X-Kubernetes-PF-FlowSchema-UID';
export const PRIORITY_LEVEL_UID_HEADER = 'X-Kubernetes-PF-PriorityLevel-UID';

/** kube's hard limit of a queue wait. */
const MAX_WAIT_MS = 60_000;

/** What the APF filter works with. */
export interface ApfFilterParts {
  controller: ApfController;
  estimator: WorkEstimator;
  watches: WatchTracker;
  retryAfter: RetryAfterTracker;
  stats: FlowControlStats;
  /** Storage type of a served resource (undefined when not served): the key of its object count. */
  storageTypeOf: (group: string, version: string, resource: string) => string | undefined;
  /** Whether a resource is served (metric labels of rejected requests stay bounded). */
  isServed: (group: string, version: string, resource: string) => boolean;
  /** A removed priority level became idle: the configuration should be digested again to drop it. */
  onLevelIdle: () => void;
  /** `--request-timeout` (ms): a queued request waits at most a quarter of its deadline. */
  requestTimeoutMs: number;
}

const READ_ONLY_VERBS = new Set(['get', 'list', 'watch']);

/**
 * kube's getRequestWaitContext: a quarter of the request's deadline (see requestDeadlineMs), or of
 * `--request-timeout` for a watch (which has none), at most a minute.
 */
function waitLimitMs(query: URLSearchParams, watch: boolean, requestTimeoutMs: number): number {
  const deadline = watch ? requestTimeoutMs : requestDeadlineMs(query, requestTimeoutMs);
  return Math.min(deadline / 4, MAX_WAIT_MS);
}

/** The exact value of `spec.nodeName` a pods watch selects on, if any. */
function nodeNameOf(attrs: AuthorizationAttributes): string | undefined {
  return attrs.fieldSelector?.find((t) => t.field === 'spec.nodeName' && t.operator === '=')?.value;
}

/**
 * kube's WithPriorityAndFairness filter: classifies each request by the FlowSchemas, estimates its
 * seats, and hands it to its level's queue set, which runs it at once, queues it (for at most a
 * quarter of its deadline) or rejects it with kube's 429 and `Retry-After`. Executing requests hold
 * their seats until their response ends; a watch only until it has sent its initial state. Every
 * answer names the FlowSchema and priority level by UID in kube's headers. Long-running requests
 * other than watches (exec, attach, port-forward, proxy, logs) are not limited.
 */
export function priorityAndFairnessFilter(parts: ApfFilterParts): PreAuthorizationFilter {
  const { controller, estimator, watches, retryAfter, stats } = parts;
  const note = (phase: 'executing' | 'waiting', kind: RequestKind, delta: number): void => {
    stats.inflight.note(phase, kind, delta);
    const rw = stats.readVsWrite;
    if (phase === 'executing') (kind === 'readOnly' ? rw.executingReadOnly : rw.executingMutating).add(delta);
    else (kind === 'readOnly' ? rw.waitingReadOnly : rw.waitingMutating).add(delta);
  };

  return (req: Request, res: Response, attrs: AuthorizationAttributes, proceed: () => void): void => {
    const watch = attrs.verb === 'watch';
    if (!watch && isLongRunning(attrs)) {
      proceed();
      return;
    }
    const { schema, level } = controller.classify(attrs);
    const pl = level.config;
    const flowStats = level.stats.flow(schema.name);
    const exempt = pl.exempt;
    // Parsed once per request and shared with the other stages (metrics, routing).
    const query = parsedRequestOf(req).query;
    const estimate = estimator.estimate(
      {
        verb: attrs.verb,
        apiGroup: attrs.apiGroup,
        resource: attrs.resource,
        subresource: attrs.subresource,
        namespace: attrs.namespace,
        name: attrs.name,
        storageType: attrs.resourceRequest ? parts.storageTypeOf(attrs.apiGroup, attrs.apiVersion, attrs.resource) : undefined,
        query,
      },
      level.maxSeats,
      (count) => flowStats.watchCount.observe(count),
    );
    flowStats.estimatedSeats.observe(maxSeats(estimate));
    const queued = pl.queuing !== undefined && pl.queuing.queues > 1;
    const distinguisher = queued ? flowDistinguisher(attrs, schema.distinguisher) : '';
    const flow: FlowIdentity = {
      flowSchema: schema.name,
      key: `${schema.name}\u0000${distinguisher}`,
      hash: () => flowHash(schema.name, distinguisher),
    };
    const kind: RequestKind = READ_ONLY_VERBS.has(attrs.verb) ? 'readOnly' : 'mutating';
    const arrived = performance.now();
    let closed = false;
    let onClose: (() => void) | undefined;
    res.once('close', () => {
      closed = true;
      onClose?.();
    });
    const setHeaders = (): void => {
      if (res.headersSent) return;
      res.setHeader(PRIORITY_LEVEL_UID_HEADER, pl.uid);
      res.setHeader(FLOW_SCHEMA_UID_HEADER, schema.uid);
    };
    const observeWait = (executed: boolean): void => {
      if (exempt) return;
      (executed ? flowStats.waitExecuted : flowStats.waitRejected).observe((performance.now() - arrived) / 1000);
    };
    const reject = (): void => {
      setHeaders();
      recordTermination(labelRequest(req.method, parsedRequestOf(req), req.headers['content-type'] ?? '', parts.isServed).labels, 429);
      retryAfter.recordDropped(pl.name);
      writeTooManyRequests(res, retryAfter.retryAfter(pl.name));
    };
    const execute = (request: FairRequest): void => {
      note('executing', kind, 1);
      const started = performance.now();
      let released = false;
      const release = (): void => {
        if (released) return;
        released = true;
        level.queues.finish(request);
        note('executing', kind, -1);
        (watch ? flowStats.executionWatch : flowStats.executionRegular).observe((performance.now() - started) / 1000);
        if (controller.isReapable(level)) parts.onLevelIdle();
      };
      if (closed) {
        // The client left while the request was being dispatched.
        release();
        return;
      }
      setHeaders();
      if (watch) {
        const forget = watches.register(attrs, attrs.resource === 'pods' ? nodeNameOf(attrs) : undefined);
        onWatchInitialized(res, release);
        onClose = () => {
          release();
          forget?.();
        };
      } else onClose = release;
      proceed();
    };
    const outcome = level.queues.startRequest(
      flow,
      flowStats,
      estimate,
      {
        dispatched: (request) => {
          note('waiting', kind, -1);
          observeWait(true);
          execute(request);
        },
        rejected: () => {
          note('waiting', kind, -1);
          observeWait(false);
          reject();
        },
      },
      () => waitLimitMs(query, watch, parts.requestTimeoutMs),
      {
        distinguisher: () => flowDistinguisher(attrs, schema.distinguisher),
        user: attrs.user.name,
        verb: attrs.verb,
        path: attrs.path,
        namespace: attrs.namespace,
        name: attrs.name,
        apiGroup: attrs.apiGroup,
        apiVersion: attrs.apiVersion,
        resource: attrs.resource,
        subresource: attrs.subresource,
      },
    );
    switch (outcome.kind) {
      case 'executing':
        observeWait(true);
        execute(outcome.request);
        return;
      case 'queued': {
        note('waiting', kind, 1);
        const request = outcome.request;
        onClose = () => level.queues.cancel(request, 'time-out');
        return;
      }
      case 'rejected':
        observeWait(false);
        if (controller.isReapable(level)) parts.onLevelIdle();
        reject();
        return;
    }
  };
}
