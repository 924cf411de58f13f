import type { NextFunction, Request, Response } from 'express';
import { ApiError, forbidden, internalError, type StatusObject } from '../api/errors.js';
import { decodePath, parseRequestInfo } from '../api/request-info.js';
import { writeError } from '../codec/response-writer.js';
import type { Authenticator } from './authenticator.js';
import { forbiddenMessage, type AuthorizationAttributes, type Authorizer, type Decision } from './authorizer.js';
import { impersonate, ImpersonationDenied } from './impersonation.js';
import { parseFieldSelector, type FieldRequirement } from '../selectors/field-selector.js';
import { ADMIN_USER, type User } from './user.js';
import { requestAudit, type AuditLog } from '../audit/audit-log.js';
import { impersonationConstraint } from '../audit/impersonation-constraint.js';

/** The user the auth filter established for this request (the administrator before the filter runs). */
export function requestUser(res: Response): User {
  return (res.locals.user as User | undefined) ?? ADMIN_USER;
}

/** kube's Go-style escaping of the forbidden message (its sanitizer: &, <, >). */
function sanitize(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function attributesOf(req: Request, user: User): AuthorizationAttributes {
  const target = req.originalUrl;
  const q = target.indexOf('?');
  const rawPath = q < 0 ? target : target.slice(0, q);
  const path = decodePath(rawPath) ?? rawPath;
  const query = new URLSearchParams(q < 0 ? '' : target.slice(q + 1));
  const ri = parseRequestInfo(req.method, path, query);
  if (ri === undefined) {
    return {
      user,
      verb: req.method.toLowerCase(),
      resourceRequest: false,
      apiGroup: '',
      apiVersion: '',
      namespace: '',
      resource: '',
      subresource: '',
      name: '',
      path,
    };
  }
  const attrs: AuthorizationAttributes = {
    user,
    verb: ri.verb === 'unknown' ? req.method.toLowerCase() : ri.verb,
    resourceRequest: true,
    apiGroup: ri.group,
    apiVersion: ri.version,
    namespace: ri.namespace,
    resource: ri.resource,
    subresource: ri.subresource,
    name: ri.name,
    path,
  };
  const selector = query.get('fieldSelector');
  if (selector !== null && ['list', 'watch', 'deletecollection'].includes(attrs.verb)) {
    const terms = requestFieldSelector(selector);
    if (terms !== undefined) attrs.fieldSelector = terms;
  }
  return attrs;
}

/** A request's field selector terms; undefined when it does not parse (the handler answers that request's 400). */
function requestFieldSelector(selector: string): FieldRequirement[] | undefined {
  try {
    return parseFieldSelector(selector);
  } catch {
    return undefined;
  }
}

/** kube's 403 for refused attributes: the forbidden message, then the authorizer's reason. */
function forbiddenError(attrs: AuthorizationAttributes, decision: Decision): ApiError {
  const message = sanitize(forbiddenMessage(attrs));
  const detail = decision.reason === '' ? message : `${message}: ${decision.reason}`;
  return attrs.resourceRequest
    ? forbidden({ group: attrs.apiGroup, resource: attrs.resource }, attrs.name, detail)
    : new NonResourceForbidden(`forbidden: ${detail}`);
}

/** A refused non-resource request: kube's Status carries empty `details` (a forbidden error of no resource). */
class NonResourceForbidden extends ApiError {
  constructor(message: string) {
    super(403, 'Forbidden', message, {});
  }

  override toStatus(): StatusObject {
    return { ...super.toStatus(), details: {} };
  }
}

/**
 * The authentication, impersonation and authorization stages of every request, before any
 * handler: an unauthenticated request is answered 401 with kube's Status; a refused impersonation
 * or request 403 with kube's message (`<resource> "<name>" is forbidden: User "u" cannot <verb>
 * resource ...`); an allowed one goes on with its (impersonated) user in `res.locals.user`. With an
 * audit log, the request's record starts once it is authenticated (kube's audit filter sits there) and
 * takes the impersonated user and the authorization decision.
 */
export function authFilter(authenticator: Authenticator, authorizer: Authorizer, audit?: AuditLog) {
  return (req: Request, res: Response, next: NextFunction): void => {
    void (async () => {
      const authenticated = await authenticator.authenticate(req);
      if (authenticated === undefined) {
        audit?.failedAuthentication(req, res);
        writeError(res, new ApiError(401, 'Unauthorized', 'Unauthorized', {}));
        return;
      }
      audit?.begin(req, res, authenticated);
      let user: User;
      try {
        user = await impersonate(req, authenticated, authorizer);
      } catch (err) {
        if (err instanceof ImpersonationDenied) {
          writeError(res, forbiddenError(err.attributes, err.decision));
          return;
        }
        throw err;
      }
      res.locals.user = user;
      const record = requestAudit(res);
      if (record !== undefined && user !== authenticated) record.noteImpersonation(user, impersonationConstraint(authenticated, user));
      const attrs = attributesOf(req, user);
      const decision = await authorizer.authorize(attrs);
      record?.noteDecision(decision.allowed, decision.reason);
      if (!decision.allowed && decision.evaluationError !== undefined && decision.evaluationError !== '') {
        // As kube: an authorizer that failed to decide makes a request nobody allowed a 500.
        writeError(res, internalError(decision.evaluationError));
        return;
      }
      if (!decision.allowed) {
        writeError(res, forbiddenError(attrs, decision));
        return;
      }
      next();
    })().catch(next);
  };
}
