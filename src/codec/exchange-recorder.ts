import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';
import type { Obj } from '../api/object-util.js';

/**
 * Whoever records a request's exchange (the audit log) learns the bodies from the codec through
 * this: the request body as read, and each response object or Status as written. The recorder of a
 * request lives in `res.locals.audit` (set by the audit stage); the codec calls it when present.
 */
export interface ExchangeRecorder {
  /** The request body, once read. */
  noteBody(body: Buffer): void;
  /** A response: `object` is called only when the recorder keeps bodies; a Status answer also comes as `status`. */
  noteResponse(status: Obj | undefined, object: () => unknown): void;
}

/** The recorder of a response, if the request is recorded. */
export function recorderOf(res: Response | undefined): ExchangeRecorder | undefined {
  return res?.locals.audit as ExchangeRecorder | undefined;
}

/** The recorder of a request (through its response), if the request is recorded. */
export function requestRecorderOf(req: IncomingMessage): ExchangeRecorder | undefined {
  return recorderOf((req as Request).res);
}
