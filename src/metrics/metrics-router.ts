import cluster from 'node:cluster';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { installWorkerMetricsResponder, requestClusterMetrics } from './cluster-aggregation.js';
import { metricsRegistry, recordRequest, longRunningRequests, startDefaultMetrics } from './metrics.js';
import { isLongRunning, labelRequest } from './request-labels.js';
import { parsedRequestOf } from '../api/parsed-request.js';
import { isHijacked } from '../api/hijacked-responses.js';

/** Prometheus text exposition format 0.0.4, as kube-apiserver serves it. */
const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * `GET /metrics`: this process's metrics, or in a cluster worker the whole cluster's (aggregated by
 * the primary). A failed aggregation is a 500 with the reason, never a partial answer presented as
 * complete.
 */
export function metricsRouter(): Router {
  startDefaultMetrics();
  installWorkerMetricsResponder();
  const router = express.Router();
  router.get('/metrics', (_req: Request, res: Response, next: NextFunction) => {
    const text = cluster.isWorker ? requestClusterMetrics() : metricsRegistry.metrics();
    text.then(
      (body) => {
        res.status(200).setHeader('Content-Type', PROMETHEUS_CONTENT_TYPE);
        res.end(body);
      },
      (err: unknown) => next(err),
    );
  });
  return router;
}

/** Options of {@link metricsMiddleware}. */
export interface MetricsMiddlewareOptions {
  /**
   * Whether group/version/resource is served. Requests for types that are not served are labelled as
   * non-resource requests, so random paths cannot create unbounded label values.
   */
  isServed?: (group: string, version: string, resource: string) => boolean;
}

/**
 * Counts every request in `apiserver_request_total` and `apiserver_request_duration_seconds` when
 * its response finishes (or the client goes away, or a connection taken over closes), and tracks
 * open watches and streams (see isLongRunning) in `apiserver_longrunning_requests`. Mount it first,
 * before any router.
 */
export function metricsMiddleware(options: MetricsMiddlewareOptions = {}): (req: Request, res: Response, next: NextFunction) => void {
  startDefaultMetrics();
  return function capstanMetrics(req, res, next) {
    const started = process.hrtime.bigint();
    const { labels, info } = labelRequest(req.method, parsedRequestOf(req), req.headers['content-type'] ?? '', options.isServed);
    const longRunning = isLongRunning(info);
    const gaugeLabels = {
      verb: labels.verb,
      group: labels.group,
      version: labels.version,
      resource: labels.resource,
      subresource: labels.subresource,
      scope: labels.scope,
      component: labels.component,
    };
    if (longRunning) longRunningRequests.inc(gaugeLabels);
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      if (longRunning) longRunningRequests.dec(gaugeLabels);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // Unmatched non-resource paths share one label value: a scanner must not grow the series set.
      if (info === undefined && res.statusCode === 404) labels.subresource = '';
      // A hijacked connection's request is recorded with code 0, as kube-apiserver's (its response
      // writer never saw a status).
      recordRequest(labels, isHijacked(res) ? 0 : res.statusCode, seconds, longRunning);
    };
    // 'close' follows 'finish' on every response, hijacked ones included (hijacked-responses.ts).
    res.on('close', finish);
    next();
  };
}
