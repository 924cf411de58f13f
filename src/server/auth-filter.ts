import type { NextFunction, Request, Response } from 'express';
import { ApiError, forbidden, internalError, type StatusObject } from '../api/errors.js';
import { writeError } from '../codec/response-writer.js';
import type { Authenticator } from '../auth/authenticator.js';
import { forbiddenMessage, type AuthorizationAttributes, type Authorizer, type Decision } from '../auth/authorizer.js';
import { impersonate, ImpersonationDenied, ImpersonationModeCache, type Impersonation } from '../auth/impersonation.js';
import { requestAttributesOf } from '../auth/request-attributes.js';
import type { User } from '../api/user.js';
import { requestAudit, type AuditLog } from '../audit/audit-log.js';
import { parsedRequestOf } from '../api/parsed-request.js';
import type { PreAuthorizationFilter } from '../flowcontrol/pre-authorization-filter.js';

/** kube's Go-style escaping of the forbidden message (its sanitizer: &, <, >). */
function sanitize(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function attributesOf(req: Request, user: User): AuthorizationAttributes {
  return { user, ...requestAttributesOf(req.method, parsedRequestOf(req)) };
}

/** kube's 403 for a refused non-resource request: `forbidden: ...` with empty (but present) details. */
class PathForbiddenError extends ApiError {
  constructor(message: string) {
    super(403, 'Forbidden', message, {});
  }

  override toStatus(): StatusObject {
    const { code, ...rest } = super.toStatus();
    return { ...rest, details: {}, code };
  }
}

/** Writes a refusal as kube's responsewriters.Forbidden does: the Status, marked `nosniff`. */
function writeForbidden(res: Response, err: ApiError): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  writeError(res, err);
}

/** kube's 403 for refused attributes: the forbidden message, then the authorizer's reason. */
function forbiddenError(attrs: AuthorizationAttributes, decision: Decision): ApiError {
  const message = sanitize(forbiddenMessage(attrs));
  const detail = decision.reason === '' ? message : `${message}: ${decision.reason}`;
  return attrs.resourceRequest
    ? forbidden({ group: attrs.apiGroup, resource: attrs.resource }, attrs.name, detail)
    : new PathForbiddenError(`forbidden: ${detail}`);
}

/**
 * The authentication, impersonation and authorization stages of every request, before any
 * handler: an unauthenticated request is answered 401 with kube's Status; a refused impersonation
 * or request 403 with kube's message (`<resource> "<name>" is forbidden: User "u" cannot <verb>
 * resource ...`); an allowed one goes on with its (impersonated) user in `res.locals.user`. With an
 * audit log, the request's record starts once it is authenticated (kube's audit filter sits there) and
 * takes the impersonated user and the authorization decision. `beforeAuthorization` (flow control)
 * runs after impersonation and before authorization, as in kube's handler chain.
 */
export function authFilter(authenticator: Authenticator, authorizer: Authorizer, audit?: AuditLog, beforeAuthorization?: PreAuthorizationFilter) {
  const impersonationModes = new ImpersonationModeCache();
  return (req: Request, res: Response, next: NextFunction): void => {
    void (async () => {
      const authenticated = await authenticator.authenticate(req);
      if (authenticated === undefined) {
        audit?.failedAuthentication(req, res);
        writeError(res, new ApiError(401, 'Unauthorized', 'Unauthorized', {}));
        return;
      }
      audit?.begin(req, res, authenticated);
      const asAuthenticated = attributesOf(req, authenticated);
      let impersonation: Impersonation;
      try {
        impersonation = await impersonate(req, asAuthenticated, authorizer, impersonationModes);
      } catch (err) {
        if (err instanceof ImpersonationDenied) {
          writeForbidden(res, forbiddenError(err.attributes, err.decision));
          return;
        }
        throw err;
      }
      const user = impersonation.user;
      res.locals.user = user;
      const record = requestAudit(res);
      if (record !== undefined && user !== authenticated) record.noteImpersonation(user, impersonation.constraint);
      const attrs = user === authenticated ? asAuthenticated : { ...asAuthenticated, user };
      const authorize = async (): Promise<void> => {
        const decision = await authorizer.authorize(attrs);
        record?.noteDecision(decision.allowed, decision.reason);
        if (!decision.allowed && decision.evaluationError !== undefined && decision.evaluationError !== '') {
          // As kube: an authorizer that failed to decide makes a request nobody allowed a 500.
          writeError(res, internalError(decision.evaluationError));
          return;
        }
        if (!decision.allowed) {
          writeForbidden(res, forbiddenError(attrs, decision));
          return;
        }
        next();
      };
      if (beforeAuthorization === undefined) await authorize();
      else beforeAuthorization(req, res, attrs, () => void authorize().catch(next));
    })().catch(next);
  };
}
