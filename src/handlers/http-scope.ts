import type { Response } from 'express';
import type { RequestScope } from '../api/request-scope.js';
import { ADMIN_USER, type User } from '../api/user.js';
import { warningHeaderValue } from '../codec/go-quote.js';
import { logger } from '../logging/logger.js';

const sentWarnings = new WeakMap<Response, Set<string>>();

/**
 * The scope of one HTTP request: its user, its write options from the query, warnings as `Warning`
 * response headers (each text once, none after the headers are sent) and audit annotations kept in
 * `res.locals.auditAnnotations` for the audit stage (the first value of a key wins).
 */
export function httpScope(user: User, query: URLSearchParams, res: Response): RequestScope {
  return {
    user,
    writeOptions: { dryRun: query.getAll('dryRun'), fieldManager: query.get('fieldManager') ?? '', fieldValidation: query.get('fieldValidation') ?? '' },
    warn: (message) => {
      let sent = sentWarnings.get(res);
      if (sent === undefined) sentWarnings.set(res, (sent = new Set()));
      if (sent.has(message) || res.headersSent) return;
      sent.add(message);
      res.append('Warning', warningHeaderValue(message));
    },
    annotate: (key, value) => {
      const annotations = (res.locals.auditAnnotations ??= {}) as Record<string, string>;
      if (annotations[key] !== undefined) return;
      annotations[key] = value;
      logger.debug('audit annotation', { key, value });
    },
  };
}

/** The user the auth filter established for this request (the administrator before the filter runs). */
export function requestUser(res: Response): User {
  return (res.locals.user as User | undefined) ?? ADMIN_USER;
}
