/**
 * The request pipeline runs its stages as Express 5 runs middleware mounted at `/`: in order while
 * each calls `next()`, and straight to the error handlers (the pipeline's `done`) with the error of a
 * stage that calls `next(err)`, throws, or returns a promise that rejects.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { requestPipeline } from '../../src/server/request-pipeline.js';

const req = {} as Request;
const res = {} as Response;

/** Runs the pipeline and resolves with what reached `done`, and the stages that ran. */
function run(stages: (ran: string[]) => RequestHandler[]): Promise<{ ran: string[]; doneWith: unknown[] }> {
  const ran: string[] = [];
  return new Promise((resolve) => {
    requestPipeline(stages(ran))(req, res, ((...args: unknown[]) => resolve({ ran, doneWith: args })) as NextFunction);
  });
}

const pass =
  (name: string, ran: string[]): RequestHandler =>
  (_q, _s, next) => {
    ran.push(name);
    next();
  };

test('stages run in order, and the pipeline passes on after the last', async () => {
  const out = await run((ran) => [pass('a', ran), pass('b', ran), pass('c', ran)]);
  assert.deepEqual(out.ran, ['a', 'b', 'c']);
  assert.deepEqual(out.doneWith, []);
});

test('a stage that answers stops the pipeline without calling done', async () => {
  const ran: string[] = [];
  let doneCalled = false;
  requestPipeline([pass('a', ran), () => ran.push('answered'), pass('never', ran)])(req, res, (() => (doneCalled = true)) as NextFunction);
  assert.deepEqual(ran, ['a', 'answered']);
  assert.equal(doneCalled, false);
});

test('next(err), a throw and a rejected promise skip the rest and hand the error on', async () => {
  const failure = new Error('no');
  const byNext = await run((ran) => [pass('a', ran), (_q, _s, next) => next(failure), pass('never', ran)]);
  assert.deepEqual(byNext, { ran: ['a'], doneWith: [failure] });
  const byThrow = await run((ran) => [
    pass('a', ran),
    () => {
      throw failure;
    },
    pass('never', ran),
  ]);
  assert.deepEqual(byThrow, { ran: ['a'], doneWith: [failure] });
  const byRejection = await run((ran) => [pass('a', ran), (async () => Promise.reject(failure)) as RequestHandler, pass('never', ran)]);
  assert.deepEqual(byRejection, { ran: ['a'], doneWith: [failure] });
  // A stage that passes on before its promise settles is not failed by it.
  const asyncPass = await run((ran) => [(async (_q: Request, _s: Response, next: NextFunction) => next()) as RequestHandler, pass('b', ran)]);
  assert.deepEqual(asyncPass, { ran: ['b'], doneWith: [] });
});

test("next('route') passes on as next() does, next('router') leaves the pipeline", async () => {
  const route = await run((ran) => [(_q, _s, next) => next('route'), pass('b', ran)]);
  assert.deepEqual(route, { ran: ['b'], doneWith: [] });
  const router = await run((ran) => [(_q, _s, next) => next('router'), pass('never', ran)]);
  assert.deepEqual(router, { ran: [], doneWith: [] });
});
