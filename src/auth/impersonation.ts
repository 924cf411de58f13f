import type { IncomingMessage } from 'node:http';
import { badRequest } from '../api/errors.js';
import { goQuote } from '../validation/field-errors.js';
import { isDNS1123Subdomain } from '../validation/string-formats.js';
import type { AuthorizationAttributes, Authorizer, Decision } from './authorizer.js';
import { ANONYMOUS_USER_NAME, AUTHENTICATED_GROUP, serviceAccountOf, UNAUTHENTICATED_GROUP, type User } from '../api/user.js';

const USER_HEADER = 'impersonate-user';
const GROUP_HEADER = 'impersonate-group';
const UID_HEADER = 'impersonate-uid';
const EXTRA_PREFIX = 'impersonate-extra-';
/** What every impersonation header's name starts with. */
const IMPERSONATE_PREFIX = 'impersonate-';

const NODE_PREFIX = 'system:node:';
const NODES_GROUP = 'system:nodes';
const MASTERS_GROUP = 'system:masters';
/** The service account token claim naming the node its pod runs on (kube's serviceaccount.NodeNameKey). */
const NODE_NAME_EXTRA = 'authentication.kubernetes.io/node-name';
/** From this many groups or extra values on, constrained modes first ask for all of them at once. */
const MANY_CHECKS = 4;

/** What the impersonation headers ask for, before any defaulting (kube's wanted user). */
interface WantedUser {
  name: string;
  uid: string;
  groups: string[];
  extra: Record<string, string[]>;
}

function headerValues(req: IncomingMessage, name: string): string[] {
  const raw = req.headersDistinct[name];
  return raw === undefined ? [] : raw;
}

/** Go's `%#v` of the wanted user (a *user.DefaultInfo), as kube's 400 prints it. */
function goWantedUser(w: WantedUser): string {
  const groups = w.groups.length === 0 ? '[]string(nil)' : `[]string{${w.groups.map(goQuote).join(', ')}}`;
  const keys = Object.keys(w.extra).sort();
  const extra =
    keys.length === 0
      ? 'map[string][]string(nil)'
      : `map[string][]string{${keys.map((k) => `${goQuote(k)}:[]string{${(w.extra[k] ?? []).map(goQuote).join(', ')}}`).join(', ')}}`;
  return `&user.DefaultInfo{Name:${goQuote(w.name)}, UID:${goQuote(w.uid)}, Groups:${groups}, Extra:${extra}}`;
}

/**
 * Whether the request carries any `Impersonate-*` header, read from its raw header list (most
 * requests carry none, and Node builds `headersDistinct`, every header as a list, only when asked).
 */
function hasImpersonationHeaders(req: IncomingMessage): boolean {
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    if (
      name.length >= IMPERSONATE_PREFIX.length &&
      (name.charCodeAt(0) | 0x20) === 0x69 &&
      name.slice(0, IMPERSONATE_PREFIX.length).toLowerCase() === IMPERSONATE_PREFIX
    ) {
      return true;
    }
  }
  return false;
}

/** The impersonation headers as a wanted user; undefined without `Impersonate-User`; 400 for the rest without it. */
function wantedUserOf(req: IncomingMessage): WantedUser | undefined {
  if (!hasImpersonationHeaders(req)) return undefined;
  const wanted: WantedUser = { name: headerValues(req, USER_HEADER)[0] ?? '', uid: headerValues(req, UID_HEADER)[0] ?? '', groups: [], extra: {} };
  wanted.groups = headerValues(req, GROUP_HEADER);
  let hasExtra = false;
  for (const header of Object.keys(req.headersDistinct)) {
    if (!header.startsWith(EXTRA_PREFIX)) continue;
    hasExtra = true;
    let key = header.slice(EXTRA_PREFIX.length);
    try {
      key = decodeURIComponent(key);
    } catch {
      // kept as sent, as kube keeps keys it cannot unescape
    }
    (wanted.extra[key] ??= []).push(...headerValues(req, header));
  }
  if (wanted.name === '') {
    if (wanted.uid !== '' || wanted.groups.length > 0 || hasExtra) throw badRequest(`requested ${goWantedUser(wanted)} without impersonating a user name`);
    return undefined;
  }
  return wanted;
}

/** A refused impersonation: the attributes that were refused and the authorizer's decision. */
export class ImpersonationDenied extends Error {
  constructor(
    readonly attributes: AuthorizationAttributes,
    readonly decision: Decision,
  ) {
    super('impersonation denied');
  }
}

/** kube's checkAuthorization: passes when allowed; otherwise the refusal, its reason prefixed by an evaluation error. */
async function check(authorizer: Authorizer, attrs: AuthorizationAttributes): Promise<void> {
  const decision = await authorizer.authorize(attrs);
  if (decision.allowed) return;
  const error = decision.evaluationError ?? '';
  const reason = error !== '' ? (decision.reason !== '' ? `${error}: ${decision.reason}` : error) : decision.reason;
  throw new ImpersonationDenied(attrs, { ...decision, reason });
}

function refuse(attrs: AuthorizationAttributes, reason: string): never {
  throw new ImpersonationDenied(attrs, { allowed: false, reason });
}

function nodeNameOf(userName: string): string | undefined {
  if (!userName.startsWith(NODE_PREFIX)) return undefined;
  const name = userName.slice(NODE_PREFIX.length);
  return isDNS1123Subdomain(name).length === 0 ? name : undefined;
}

const onlyName = (w: WantedUser): boolean => w.uid === '' && w.groups.length === 0 && Object.keys(w.extra).length === 0;

/** Why an extra key or value may not be impersonated in a constrained mode (kube's validateExtra); undefined when fine. */
function invalidExtra(extra: Record<string, string[]>): string | undefined {
  for (const [key, values] of Object.entries(extra)) {
    if (key === '') return 'impersonating the empty string key in extra is not allowed';
    const slash = key.indexOf('/');
    if (slash <= 0 || slash === key.length - 1) {
      return `impersonating an invalid key in extra is not allowed: extra.key: Invalid value: ${goQuote(key)}: must be a domain-prefixed path (such as "acme.io/foo")`;
    }
    const host = key.slice(0, slash);
    const hostError = isDNS1123Subdomain(host)[0];
    if (hostError !== undefined) return `impersonating an invalid key in extra is not allowed: extra.key: Invalid value: ${goQuote(host)}: ${hostError}`;
    if (key !== key.toLowerCase()) return `impersonating a non-lowercase key in extra is not allowed: ${goQuote(key)}`;
    if (values.length === 0) return 'impersonating empty values in extra is not allowed';
    if (values.includes('')) return 'impersonating the empty string value in extra is not allowed';
  }
  return undefined;
}

/**
 * One way of being allowed to impersonate: legacy (`verb` `impersonate`) or a constrained mode
 * (`impersonate:MODE`), whose checks name each field of the wanted user. Returns the user the
 * request then acts as; throws {@link ImpersonationDenied} for the first refused check.
 */
async function checkFields(authorizer: Authorizer, requester: User, wanted: WantedUser, verb: string, constrained: boolean): Promise<User> {
  const group = constrained ? 'authentication.k8s.io' : '';
  const attrs = (resource: string, name: string, apiGroup = group): AuthorizationAttributes => ({
    user: requester,
    verb,
    resourceRequest: true,
    apiGroup,
    apiVersion: 'v1',
    namespace: '',
    resource,
    subresource: '',
    name,
    path: '',
  });
  let groups = [...wanted.groups];
  const userAttrs = attrs('users', wanted.name);
  const node = constrained ? nodeNameOf(wanted.name) : undefined;
  if (node !== undefined) {
    userAttrs.resource = 'nodes';
    userAttrs.name = node;
    if (wanted.groups.length > 0) refuse(userAttrs, `when impersonating a node, cannot impersonate groups ${goGroups(wanted.groups)}`);
    groups = [NODES_GROUP];
  }
  const sa = serviceAccountOf(wanted.name);
  if (sa !== undefined) {
    userAttrs.resource = 'serviceaccounts';
    userAttrs.namespace = sa.namespace;
    userAttrs.name = sa.name;
    if (constrained && wanted.groups.length > 0)
      refuse(userAttrs, `when impersonating a service account, cannot impersonate groups ${goGroups(wanted.groups)}`);
    if (wanted.groups.length === 0) groups = ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`];
  }
  await check(authorizer, userAttrs);
  if (wanted.uid !== '') await check(authorizer, attrs('uids', wanted.uid, 'authentication.k8s.io'));
  if (wanted.groups.length > 0) {
    const groupAttrs = attrs('groups', '');
    if (constrained && wanted.groups.includes('')) refuse(groupAttrs, 'impersonating the empty string group is not allowed');
    if (constrained && wanted.groups.includes(MASTERS_GROUP))
      refuse({ ...groupAttrs, name: MASTERS_GROUP }, 'impersonating the system:masters group is not allowed');
    const all = constrained && wanted.groups.length >= MANY_CHECKS && (await authorizer.authorize({ ...groupAttrs, name: '*' })).allowed;
    if (!all) for (const g of wanted.groups) await check(authorizer, { ...groupAttrs, name: g });
  }
  const extraKeys = Object.keys(wanted.extra);
  if (extraKeys.length > 0) {
    const extraAttrs = attrs('userextras', '', 'authentication.k8s.io');
    if (constrained) {
      const invalid = invalidExtra(wanted.extra);
      if (invalid !== undefined) refuse(extraAttrs, invalid);
    }
    const values = Object.values(wanted.extra).reduce((n, v) => n + v.length, 0);
    const large = extraKeys.length >= MANY_CHECKS || values >= MANY_CHECKS;
    const all = constrained && large && (await authorizer.authorize({ ...extraAttrs, subresource: '*', name: '*' })).allowed;
    if (!all) {
      for (const [key, vals] of Object.entries(wanted.extra)) for (const v of vals) await check(authorizer, { ...extraAttrs, subresource: key, name: v });
    }
  }
  if (wanted.name === ANONYMOUS_USER_NAME) {
    if (!groups.includes(UNAUTHENTICATED_GROUP)) groups.push(UNAUTHENTICATED_GROUP);
  } else if (!groups.includes(UNAUTHENTICATED_GROUP) && !groups.includes(AUTHENTICATED_GROUP)) {
    groups.push(AUTHENTICATED_GROUP);
  }
  return { name: wanted.name, uid: wanted.uid, groups, extra: wanted.extra };
}

/** Go's `%q` of a []string, as kube prints refused groups. */
function goGroups(groups: readonly string[]): string {
  return `[${groups.map(goQuote).join(' ')}]`;
}

/** A constrained impersonation mode of kube 1.36 (KEP-5284): when it applies, and who asks. */
interface ConstrainedMode {
  mode: string;
  applies(wanted: WantedUser, requester: User): boolean;
  /** The requester as the mode's checks see it (associated-node: its extra keys only). */
  asker?(requester: User): User;
}

const CONSTRAINED_MODES: readonly ConstrainedMode[] = [
  {
    mode: 'associated-node',
    applies: (w, r) => {
      const node = nodeNameOf(w.name);
      const nodeOfToken = r.extra[NODE_NAME_EXTRA];
      return onlyName(w) && node !== undefined && serviceAccountOf(r.name) !== undefined && nodeOfToken?.length === 1 && nodeOfToken[0] === node;
    },
    asker: (r) => ({ ...r, extra: { 'authentication.kubernetes.io/associated-node-keys': Object.keys(r.extra).sort() } }),
  },
  { mode: 'arbitrary-node', applies: (w) => onlyName(w) && nodeNameOf(w.name) !== undefined },
  { mode: 'serviceaccount', applies: (w) => onlyName(w) && serviceAccountOf(w.name) !== undefined },
  { mode: 'user-info', applies: (w) => nodeNameOf(w.name) === undefined && serviceAccountOf(w.name) === undefined },
];

/** One constrained mode: `impersonate-on:MODE:VERB` on the request itself, then `impersonate:MODE` on each field. */
async function constrained(m: ConstrainedMode, authorizer: Authorizer, wanted: WantedUser, request: AuthorizationAttributes): Promise<User> {
  const asker = m.asker?.(request.user) ?? request.user;
  await check(authorizer, { ...request, user: asker, verb: `impersonate-on:${m.mode}:${request.verb}` });
  if (m.mode !== 'associated-node') return checkFields(authorizer, asker, wanted, `impersonate:${m.mode}`, true);
  // The associated node is asked for as any node ("*"): the answer may not depend on its name.
  await check(authorizer, {
    user: asker,
    verb: 'impersonate:associated-node',
    resourceRequest: true,
    apiGroup: 'authentication.k8s.io',
    apiVersion: 'v1',
    namespace: '',
    resource: 'nodes',
    subresource: '',
    name: '*',
    path: '',
  });
  return { name: wanted.name, uid: '', groups: [NODES_GROUP, AUTHENTICATED_GROUP], extra: {} };
}

/** A mode tried for a wanted user: undefined when it does not apply, the user when it allows. */
type ModeCheck = (authorizer: Authorizer, wanted: WantedUser, request: AuthorizationAttributes) => Promise<User | undefined>;

/** Every mode in kube's order: the constrained ones, then legacy impersonation. */
const MODES: readonly ModeCheck[] = [
  ...CONSTRAINED_MODES.map(
    (m): ModeCheck =>
      async (authorizer, wanted, request) =>
        m.applies(wanted, request.user) ? constrained(m, authorizer, wanted, request) : undefined,
  ),
  (authorizer, wanted, request) => checkFields(authorizer, request.user, wanted, 'impersonate', false),
];

/** The constraint each mode of `MODES` records in the audit event: its `impersonate:MODE` verb, '' for legacy. */
const MODE_CONSTRAINTS: readonly string[] = [...CONSTRAINED_MODES.map((m) => `impersonate:${m.mode}`), ''];

/** The user a request acts as, and the constrained-impersonation verb that allowed it ('' for legacy or none). */
export interface Impersonation {
  user: User;
  constraint: string;
}

const MODE_CACHE_SIZE = 10_000;

/**
 * Which mode last allowed each requester (by user name), tried first next time, as kube's filter
 * does: a requester that impersonates often pays for one mode, and its next impersonation follows
 * that mode when it also allows it. Bounded (oldest entries forgotten first).
 */
export class ImpersonationModeCache {
  private readonly byRequester = new Map<string, number>();

  get(requester: string): number | undefined {
    return this.byRequester.get(requester);
  }

  set(requester: string, index: number): void {
    this.byRequester.delete(requester);
    this.byRequester.set(requester, index);
    if (this.byRequester.size > MODE_CACHE_SIZE) {
      const oldest = this.byRequester.keys().next();
      if (oldest.done !== true) this.byRequester.delete(oldest.value);
    }
  }
}

/**
 * kube 1.36's impersonation filter (constrained impersonation, on by default): with
 * `Impersonate-User` (and optionally `-Uid`, `-Group`, `-Extra-KEY`) the request acts as that user
 * once one mode allows it. The constrained modes (associated-node, arbitrary-node, serviceaccount,
 * user-info; each applies to some wanted users only) need `impersonate-on:MODE:VERB` on the request
 * and `impersonate:MODE` on each field (authentication.k8s.io users, nodes, serviceaccounts, uids,
 * groups, userextras/KEY); legacy impersonation needs `impersonate` on each (users and groups of the
 * core group). The mode that last allowed the requester (`modes`) is tried first, then the others
 * in order; when none allows, the first refusal is the 403. `request` is the request's own
 * authorization attributes for the requester. Returns the user acted as (the requester when nothing
 * is asked) with the mode's `impersonate:MODE` verb ('' for legacy), which audit records; throws
 * 400 for a uid, groups or extras without a user name. The impersonated user gets
 * system:authenticated (system:unauthenticated for system:anonymous), a service account its two
 * groups unless groups were given, a node (constrained modes) system:nodes. The headers are removed.
 */
export async function impersonate(
  req: IncomingMessage,
  request: AuthorizationAttributes,
  authorizer: Authorizer,
  modes: ImpersonationModeCache = new ImpersonationModeCache(),
): Promise<Impersonation> {
  const wanted = wantedUserOf(req);
  if (wanted === undefined) return { user: request.user, constraint: '' };
  let firstRefusal: ImpersonationDenied | undefined;
  const attempt = async (index: number): Promise<User | undefined> => {
    try {
      return await MODES[index]?.(authorizer, wanted, request);
    } catch (err) {
      if (!(err instanceof ImpersonationDenied)) throw err;
      firstRefusal ??= err;
      return undefined;
    }
  };
  const cached = modes.get(request.user.name);
  let user = cached === undefined ? undefined : await attempt(cached);
  let used = cached;
  for (let i = 0; user === undefined && i < MODES.length; i++) {
    if (i === cached) continue;
    user = await attempt(i);
    used = i;
    if (user !== undefined) modes.set(request.user.name, i);
  }
  if (user === undefined || used === undefined) throw firstRefusal ?? new Error('all impersonation modes failed');
  delete req.headers[USER_HEADER];
  delete req.headers[GROUP_HEADER];
  delete req.headers[UID_HEADER];
  for (const header of Object.keys(req.headers)) if (header.startsWith(EXTRA_PREFIX)) delete req.headers[header];
  return { user, constraint: MODE_CONSTRAINTS[used] ?? '' };
}
