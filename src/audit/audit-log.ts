import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';
import { requestAttributesOf } from '../auth/request-attributes.js';
import type { AuditConfig } from '../config/server-config.js';
import type { User } from '../api/user.js';
import { AuditLogFile, stdoutSink, type AuditSink } from './audit-log-file.js';
import { AuditPolicy, type AuditAttributes } from './audit-policy.js';
import { legacyLine, RequestAudit } from './request-audit.js';
import { parsedRequestOf } from '../api/parsed-request.js';
import type { Obj } from '../api/object-util.js';

/** Subresources whose requests run long (kube's default long-running check), besides watches. */
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

/** The request as kube's authorizer attributes describe it, which is what audit policies match and events record. */
export function auditAttributes(req: IncomingMessage, user: User | undefined): AuditAttributes {
  const { fieldSelector: _selector, ...attrs } = requestAttributesOf(req.method ?? 'GET', parsedRequestOf(req));
  return { user: user === undefined ? undefined : { name: user.name, groups: user.groups }, ...attrs };
}

/**
 * kube-apiserver's audit log backend: the policy decides per request what is recorded and the events
 * are written to the log as they happen. Exists only when both `--audit-log-path` and
 * `--audit-policy-file` are set (as in kube); without it no request does any audit work.
 */
export class AuditLog {
  private constructor(
    private readonly policy: AuditPolicy,
    private readonly sink: AuditSink,
    private readonly format: 'json' | 'legacy',
  ) {}

  /**
   * The audit log the flags ask for, or undefined when they ask for none. Throws kube's start-up
   * error for an invalid policy file and a file that cannot be opened.
   */
  static fromConfig(config: AuditConfig): AuditLog | undefined {
    if (config.auditPolicyFile === '' || config.auditLogPath === '') {
      // kube still refuses a bad policy file when no backend uses it.
      if (config.auditPolicyFile !== '') AuditPolicy.fromFile(config.auditPolicyFile);
      return undefined;
    }
    const policy = AuditPolicy.fromFile(config.auditPolicyFile);
    const sink =
      config.auditLogPath === '-'
        ? stdoutSink()
        : new AuditLogFile(config.auditLogPath, {
            maxSizeMB: config.auditLogMaxSize,
            maxBackups: config.auditLogMaxBackup,
            maxAgeDays: config.auditLogMaxAge,
            compress: config.auditLogCompress,
          });
    return new AuditLog(policy, sink, config.auditLogFormat);
  }

  /**
   * Starts the record of an authenticated request (before impersonation and authorization, as kube's
   * audit filter sits): writes RequestReceived now and the later stages as the response goes.
   */
  begin(req: Request, res: Response, user: User): void {
    const attrs = auditAttributes(req, user);
    const config = this.policy.evaluate(attrs);
    if (config.level === 'None') return;
    const audit = new RequestAudit(req, res, config, attrs, user, (e) => this.write(e));
    res.locals.audit = audit;
    const longRunning = attrs.verb === 'watch' || LONG_RUNNING_SUBRESOURCES.has(attrs.subresource);
    audit.start(longRunning);
  }

  /** Records a request refused as unauthenticated: one ResponseStarted event with no user, as kube's failed-authentication audit. */
  failedAuthentication(req: Request, res: Response): void {
    const attrs = auditAttributes(req, undefined);
    const config = this.policy.evaluate(attrs);
    if (config.level === 'None') return;
    const audit = new RequestAudit(req, res, config, attrs, undefined, (e) => this.write(e));
    res.locals.audit = audit;
    audit.startFailedAuthentication();
  }

  close(): void {
    this.sink.close();
  }

  private write(event: Obj): void {
    this.sink.write(this.format === 'legacy' ? legacyLine(event) : `${JSON.stringify(event)}\n`);
  }
}

/**
 * Refuses a bad `--audit-policy-file` before a cluster primary forks its workers (each worker loads
 * the policy again), so the start fails once with kube's message. Throws kube's loader error.
 */
export function checkAuditPolicy(config: AuditConfig): void {
  if (config.auditPolicyFile !== '') AuditPolicy.fromFile(config.auditPolicyFile);
}

/** The audit record of a request, when the policy records it. */
export function requestAudit(res: Response | undefined): RequestAudit | undefined {
  return res?.locals.audit as RequestAudit | undefined;
}
