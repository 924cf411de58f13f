import type { Request, Response } from 'express';
import { load as loadYaml } from 'js-yaml';
import { parseMediaType } from '../codec/media-type.js';
import { goQuote } from '../validation/field-errors.js';
import type { User } from '../api/user.js';
import { atLeast, type AuditLevel, type AuditStage, type RequestAuditConfig } from './audit-policy.js';
import type { AuditAttributes } from './audit-policy.js';
import { sourceIPs } from './source-ips.js';
import type { ExchangeRecorder } from '../codec/exchange-recorder.js';
import type { Obj } from '../api/object-util.js';
import { isObject } from '../api/values.js';
import { isHijacked, onHijacked } from '../api/hijacked-responses.js';

/** kube's UserInfo as an audit event prints it (empty fields left out). */
interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

interface ObjectRef {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

/** What a response carried that the event records: a Status (errors, deletes) and the object itself. */
interface ResponseNote {
  status: Obj | undefined;
  object: (() => unknown) | undefined;
}

const MAX_USER_AGENT = 1024;

function userInfo(user: User | undefined): UserInfo {
  if (user === undefined) return {};
  const info: UserInfo = { username: user.name };
  if (user.uid !== '') info.uid = user.uid;
  if (user.groups.length > 0) info.groups = [...user.groups];
  if (Object.keys(user.extra).length > 0) info.extra = user.extra;
  return info;
}

/** RFC3339 with microseconds in UTC, as kube's MicroTime prints. `ms` may carry a fraction. */
export function microTime(ms: number): string {
  const whole = Math.floor(ms);
  const micros = Math.floor((ms - whole) * 1000);
  const iso = new Date(whole).toISOString(); // 2006-01-02T15:04:05.000Z
  return `${iso.slice(0, 23)}${String(micros).padStart(3, '0')}Z`;
}

/** Current time in milliseconds with a microsecond fraction. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Drops metadata.managedFields from an object, the items of a list and the objects of a Table. */
function withoutManagedFields(value: unknown): unknown {
  if (!isObject(value)) return value;
  const strip = (o: unknown): unknown => {
    if (!isObject(o) || !isObject(o.metadata) || !('managedFields' in o.metadata)) return o;
    const { managedFields: _dropped, ...metadata } = o.metadata;
    return { ...o, metadata };
  };
  let out = strip(value) as Obj;
  if (Array.isArray(out.items)) out = { ...out, items: out.items.map(strip) };
  if (out.kind === 'Table' && Array.isArray(out.rows))
    out = { ...out, rows: out.rows.map((row: unknown) => (isObject(row) && isObject(row.object) ? { ...row, object: strip(row.object) } : row)) };
  return out;
}

/** A request body as JSON: JSON and YAML bodies parsed; other media types are not recorded. */
function parseBody(contentType: string | undefined, body: Buffer): unknown {
  const type = contentType ? parseMediaType(contentType).type : 'application/json';
  try {
    if (type.endsWith('json') || type === '*/*') return JSON.parse(body.toString('utf8')) as unknown;
    if (type.endsWith('yaml')) return loadYaml(body.toString('utf8'));
  } catch {
    // A body the handler refuses: kube records nothing either.
  }
  return undefined;
}

/**
 * The audit record of one request: the policy's decision for it, what the request and response
 * carried, and the events written at each stage (RequestReceived; ResponseStarted for long-running
 * requests; ResponseComplete), one line each, in kube's audit.k8s.io/v1 Event form.
 */
export class RequestAudit implements ExchangeRecorder {
  private readonly received = nowMs();
  private readonly objectRef: ObjectRef | undefined;
  private impersonated: UserInfo | undefined;
  private constraint = '';
  private decision: { decision: string; reason: string } | undefined;
  private body: Buffer | undefined;
  private response: ResponseNote = { status: undefined, object: undefined };
  private finished = false;
  private started = false;

  constructor(
    private readonly req: Request,
    private readonly res: Response,
    private readonly config: RequestAuditConfig,
    private readonly attrs: AuditAttributes,
    private readonly user: User | undefined,
    private readonly emitLine: (event: Obj) => void,
  ) {
    if (attrs.resourceRequest) {
      this.objectRef = { resource: attrs.resource, namespace: attrs.namespace, name: attrs.name, apiGroup: attrs.apiGroup, apiVersion: attrs.apiVersion };
      if (attrs.subresource !== '') this.objectRef.subresource = attrs.subresource;
    }
  }

  get level(): AuditLevel {
    return this.config.level;
  }

  /** Writes RequestReceived, then ResponseStarted (long-running requests) and ResponseComplete as the response goes. */
  start(longRunning: boolean): void {
    this.emit('RequestReceived');
    if (longRunning) {
      const res = this.res;
      const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => Response;
      (res as unknown as { writeHead: (...args: unknown[]) => Response }).writeHead = (...args: unknown[]) => {
        if (!this.started) {
          this.started = true;
          this.emit('ResponseStarted', typeof args[0] === 'number' ? args[0] : res.statusCode);
        }
        return writeHead(...args);
      };
      // A connection taken over switches protocols without a header written through Node: kube's
      // audit fakes the 101 when its connection is hijacked.
      onHijacked(res, () => {
        if (this.started) return;
        this.started = true;
        this.emit('ResponseStarted', 101);
      });
    }
    const done = (): void => {
      if (this.finished) return;
      this.finished = true;
      if (!this.res.headersSent && this.response.status === undefined && !isHijacked(this.res)) {
        // As kube: a client gone before any answer is recorded as a success "closed early".
        this.response.status = { status: 'Success', message: 'Connection closed early', code: 200 };
        if (longRunning) this.emit('ResponseStarted', 200);
      }
      this.emit('ResponseComplete');
    };
    // 'prefinish': the whole response is written (kube logs the stage once its handler returns).
    this.res.once('prefinish', done);
    this.res.once('close', done);
  }

  /** A request refused before authentication: only ResponseStarted is written, with the 401, as kube does. */
  startFailedAuthentication(): void {
    this.res.once('finish', () => this.emit('ResponseStarted'));
  }

  /** Records the user the request acts as after impersonation, and kube's constraint that allowed it. */
  noteImpersonation(user: User, constraint: string): void {
    this.impersonated = userInfo(user);
    this.constraint = constraint;
  }

  /** Records the authorizer's decision as the `authorization.k8s.io/*` annotations. */
  noteDecision(allowed: boolean, reason: string): void {
    this.decision = { decision: allowed ? 'allow' : 'forbid', reason };
  }

  noteBody(body: Buffer): void {
    this.body = body;
  }

  /** Records what the response carries: `status` for a Status answer, `object` read only when the level records it. */
  noteResponse(status: Obj | undefined, object: () => unknown): void {
    this.response = { status, object };
  }

  private emit(stage: AuditStage, code?: number): void {
    if (this.config.omitStages.has(stage)) return;
    const stageTime = stage === 'RequestReceived' ? this.received : nowMs();
    const event = this.event(stage, stageTime, code ?? this.res.statusCode);
    this.emitLine(event);
  }

  private requestObject(): { ref: Obj | undefined; object: unknown } {
    if (this.body === undefined || this.body.length === 0) return { ref: undefined, object: undefined };
    const parsed = parseBody(this.req.headers['content-type'], this.body);
    const object = atLeast(this.config.level, 'Request') ? (this.config.omitManagedFields ? withoutManagedFields(parsed) : parsed) : undefined;
    // A patch is recorded as sent; other bodies also name the object (kube's LogRequestObject).
    const ref = this.attrs.verb !== 'patch' && isObject(parsed) && isObject(parsed.metadata) ? parsed.metadata : undefined;
    return { ref, object };
  }

  private event(stage: AuditStage, stageTime: number, code: number): Obj {
    const e: Obj = { kind: 'Event', apiVersion: 'audit.k8s.io/v1', level: this.config.level, auditID: this.res.locals.auditID as string, stage };
    e.requestURI = this.req.originalUrl;
    e.verb = this.attrs.verb;
    e.user = userInfo(this.user);
    if (stage !== 'RequestReceived' && this.impersonated !== undefined) {
      e.impersonatedUser = this.impersonated;
      if (this.constraint !== '') e.authenticationMetadata = { impersonationConstraint: this.constraint };
    }
    const ips = sourceIPs(this.req);
    if (ips.length > 0) e.sourceIPs = ips;
    const ua = this.req.headers['user-agent'];
    if (ua !== undefined && ua !== '') e.userAgent = ua.length > MAX_USER_AGENT ? `${ua.slice(0, MAX_USER_AGENT)}...TRUNCATED` : ua;
    const body = stage === 'RequestReceived' ? { ref: undefined, object: undefined } : this.requestObject();
    if (this.objectRef !== undefined) {
      const ref: ObjectRef = { ...this.objectRef };
      const meta = body.ref;
      if (meta !== undefined) {
        if (!ref.namespace && typeof meta.namespace === 'string') ref.namespace = meta.namespace;
        if (!ref.name && typeof meta.name === 'string') ref.name = meta.name;
        if (typeof meta.uid === 'string') ref.uid = meta.uid;
        if (typeof meta.resourceVersion === 'string') ref.resourceVersion = meta.resourceVersion;
      }
      e.objectRef = orderedRef(ref);
    }
    if (stage !== 'RequestReceived') {
      e.responseStatus = this.responseStatus(code);
      if (body.object !== undefined) e.requestObject = body.object;
      if (atLeast(this.config.level, 'RequestResponse')) {
        const object = this.responseObject();
        if (object !== undefined) e.responseObject = object;
      }
    }
    e.requestReceivedTimestamp = microTime(this.received);
    e.stageTimestamp = microTime(stageTime);
    if (stage !== 'RequestReceived') {
      const annotations: Record<string, string> = { ...((this.res.locals.auditAnnotations as Record<string, string> | undefined) ?? {}) };
      if (this.decision !== undefined) {
        annotations['authorization.k8s.io/decision'] = this.decision.decision;
        annotations['authorization.k8s.io/reason'] = this.decision.reason;
      }
      const keys = Object.keys(annotations).sort();
      if (keys.length > 0) e.annotations = Object.fromEntries(keys.map((k) => [k, annotations[k]]));
    }
    return e;
  }

  private responseObject(): unknown {
    if (this.response.object === undefined) return undefined;
    const read = this.response.object;
    const object = read();
    const recorded = this.config.omitManagedFields ? withoutManagedFields(object) : object;
    this.response.object = () => recorded;
    return recorded;
  }

  private responseStatus(code: number): Obj {
    const s = this.response.status;
    const out: Obj = { metadata: {} };
    if (s !== undefined) {
      for (const k of ['status', 'message', 'reason']) if (typeof s[k] === 'string' && s[k] !== '') out[k] = s[k];
      if (isObject(s.details)) out.details = s.details;
    }
    out.code = code;
    return out;
  }
}

function orderedRef(ref: ObjectRef): ObjectRef {
  const out: ObjectRef = {};
  for (const k of ['resource', 'namespace', 'name', 'uid', 'apiGroup', 'apiVersion', 'resourceVersion', 'subresource'] as const) {
    const v = ref[k];
    if (v !== undefined && v !== '') out[k] = v;
  }
  return out;
}

/** Go's RFC3339Nano: the fraction without trailing zeros. */
function rfc3339Nano(iso: string): string {
  return iso.replace(/\.(\d*?)0+Z$/, (_m, d: string) => (d === '' ? 'Z' : `.${d}Z`));
}

/** kube's legacy one-line form of an event (`--audit-log-format=legacy`). */
export function legacyLine(e: Obj): string {
  const user = (e.user ?? {}) as UserInfo;
  const quoteList = (list: string[]): string => list.map(goQuote).join(',');
  const username = user.username ?? '<none>';
  const groups = user.username !== undefined && user.groups !== undefined && user.groups.length > 0 ? quoteList(user.groups) : '<none>';
  const imp = e.impersonatedUser as UserInfo | undefined;
  const asUser = imp?.username ?? '<self>';
  const asGroups = imp === undefined ? '<lookup>' : imp.groups !== undefined ? quoteList(imp.groups) : '<lookup>';
  const ref = e.objectRef as ObjectRef | undefined;
  const status = e.responseStatus as { code?: number } | undefined;
  const ips = (e.sourceIPs as string[] | undefined) ?? [];
  const fields: [string, string][] = [
    ['id', String(e.auditID)],
    ['stage', String(e.stage)],
    ['ip', ips[0] ?? '<unknown>'],
    ['method', String(e.verb)],
    ['user', username],
    ['groups', groups],
    ['as', asUser],
    ['asgroups', asGroups],
    ['user-agent', typeof e.userAgent === 'string' ? e.userAgent : ''],
    ['namespace', ref?.namespace ?? '<none>'],
    ['uri', String(e.requestURI)],
  ];
  const response = status?.code === undefined ? '<deferred>' : String(status.code);
  return `${rfc3339Nano(String(e.requestReceivedTimestamp))} AUDIT: ${fields.map(([k, v]) => `${k}=${goQuote(v)}`).join(' ')} response="${response}"\n`;
}
