import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

/**
 * kube's audit ID: every response carries an `Audit-Id` header, the request's own `Audit-ID`
 * when it sent one, else a new UUID. Stored in `res.locals.auditID` for logs.
 */
export function auditIdFilter() {
  return (req: Request, res: Response, next: NextFunction): void => {
    const given = req.headers['audit-id'];
    const id = typeof given === 'string' && given !== '' ? given : randomUUID();
    res.locals.auditID = id;
    res.setHeader('Audit-Id', id);
    next();
  };
}
