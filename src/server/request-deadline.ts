import type { NextFunction, Request, Response } from 'express';
import { parsedRequestOf } from '../api/parsed-request.js';
import { badRequest, WriteTimeoutError } from '../api/errors.js';
import { writeError } from '../codec/response-writer.js';
import { recordTermination } from '../flowcontrol/flowcontrol-metrics.js';
import { isLongRunning } from '../flowcontrol/long-running.js';
import { labelRequest } from '../metrics/request-labels.js';
import { requestDeadlineMs, timeoutParameterProblem } from '../api/request-deadline.js';

/** The request goes on but may write nothing more: the deadline's answer was sent in its place. */
function silence(res: Response): void {
  res.setHeader = (() => res) as Response['setHeader'];
  res.writeHead = (() => res) as Response['writeHead'];
  // "Written", so that writers pacing a large body finish instead of waiting for a 'drain'.
  res.write = (() => true) as Response['write'];
  res.end = (() => res) as Response['end'];
}

/**
 * kube's timeout filter for requests that are not long-running (WithTimeoutForNonLongRunningRequests):
 * one not answered by its deadline is answered 504 with kube's Status ("Timeout: request did not
 * complete within the allotted timeout", written as kube's filter writes it) and counted in
 * apiserver_request_terminations_total; one whose answer had begun has its connection closed, as
 * kube aborts it. A `timeout` parameter that is not a Go duration is kube's 400. Watches, exec,
 * attach, port-forward, proxy and logs have no deadline (nor a checked `timeout`).
 */
export function requestDeadlineFilter(maxMs: number, isServed: (group: string, version: string, resource: string) => boolean) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const parsed = parsedRequestOf(req);
    const info = parsed.info;
    if (info !== undefined && isLongRunning({ resourceRequest: true, verb: info.verb, subresource: info.subresource })) {
      next();
      return;
    }
    const problem = timeoutParameterProblem(parsed.query);
    if (problem !== undefined) {
      writeError(res, badRequest(problem));
      return;
    }
    const timer = setTimeout(
      () => {
        if (res.writableEnded) return;
        recordTermination(labelRequest(req.method, parsed, req.headers['content-type'] ?? '', isServed).labels, 504);
        if (res.headersSent) {
          res.destroy();
          return;
        }
        writeError(res, new WriteTimeoutError());
        silence(res);
      },
      requestDeadlineMs(parsed.query, maxMs),
    );
    // 'close' follows every answer, finished or cut.
    res.once('close', () => clearTimeout(timer));
    next();
  };
}
