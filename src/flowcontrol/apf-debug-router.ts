import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { ApfController } from './apf-controller.js';
import { dumpPriorityLevels, dumpQueues, dumpRequests } from './apf-debug-dumps.js';

const PREFIX = '/debug/api_priority_and_fairness/';

/**
 * kube's APF debug endpoints, answered for any method as kube's unlisted handlers are, as
 * `text/plain; charset=utf-8`. Mounted after authorization, so only users allowed the non-resource
 * URL (kube's `system:masters`, cluster-admin) reach them. `controller()` is undefined without APF:
 * the request then goes on (kube does not serve them either).
 */
export function apfDebugRouter(controller: () => ApfController | undefined): Router {
  const router = express.Router();
  router.all(/^\/debug\/api_priority_and_fairness\/dump_(priority_levels|queues|requests)$/, (req: Request, res: Response, next: NextFunction) => {
    const c = controller();
    if (c === undefined) {
      next();
      return;
    }
    let body: string;
    switch (req.path.slice(PREFIX.length)) {
      case 'dump_priority_levels':
        body = dumpPriorityLevels(c);
        break;
      case 'dump_queues':
        body = dumpQueues(c);
        break;
      default: {
        const details = new URL(req.originalUrl, 'http://x').searchParams.get('includeRequestDetails') ?? '';
        body = dumpRequests(c, details.length > 0);
      }
    }
    res.status(200).setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end(body);
  });
  return router;
}
