import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * The server's request stages as one middleware function. The stages run in order, as they would
 * each mounted with `app.use` at `/`, with Express 5's rules: a stage passes the request on with
 * `next()`, and fails it with `next(err)`, by throwing, or by returning a promise that rejects, which
 * skips the remaining stages and hands `err` to `done` (the error handling). What it saves is the
 * router's work per stage and request (matching each layer's path, a params object, closures): the
 * request pays one closure here.
 */
export function requestPipeline(stages: readonly RequestHandler[]): RequestHandler {
  const last = stages.length;
  return (req: Request, res: Response, done: NextFunction): void => {
    let index = 0;
    const fail = (err: unknown): void => done(err ?? new Error('Rejected promise'));
    const next = (err?: unknown): void => {
      if (err === 'router') {
        done();
        return;
      }
      if (err !== undefined && err !== null && err !== 'route') {
        done(err);
        return;
      }
      if (index === last) {
        done();
        return;
      }
      const stage = stages[index++];
      try {
        const result: unknown = stage(req, res, next);
        if (result instanceof Promise) result.then(undefined, fail);
      } catch (thrown) {
        done(thrown);
      }
    };
    next();
  };
}
