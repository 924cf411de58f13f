import { isObject, metadataOf, objectKey, type Obj } from '../api/object-util.js';
import type { Storage } from '../storage/storage.js';
import type { AuthenticationResult, TokenAuthenticator } from './authenticator.js';
import { TokenError, type ServiceAccountTokens, type ObjectRef } from './service-account-tokens.js';
import { serviceAccountUser } from './user.js';

/** Storage types of the objects a token may name. */
const TYPES = { serviceaccount: 'serviceaccounts', pod: 'pods', secret: 'secrets', node: 'nodes' } as const;

/**
 * Service account JWTs: verified by {@link ServiceAccountTokens}, then (with `lookup`, kube's
 * `--service-account-lookup`, on by default) the ServiceAccount must still exist with the token's
 * uid, and so must the Pod, Secret or Node the token is bound to, with kube's error messages. The
 * user is `system:serviceaccount:NS:NAME` in `system:serviceaccounts` and
 * `system:serviceaccounts:NS`, with the pod, node and credential id in `extra`.
 */
export class ServiceAccountAuthenticator implements TokenAuthenticator {
  constructor(
    private readonly tokens: ServiceAccountTokens,
    private readonly storage: Storage,
    private readonly lookup = true,
  ) {}

  async authenticateToken(token: string, audiences?: string[]): Promise<AuthenticationResult> {
    let verified;
    try {
      verified = this.tokens.verify(token, audiences ?? this.tokens.apiAudiences);
    } catch (err) {
      if (err instanceof TokenError) return { error: err.message };
      throw err;
    }
    if (verified === undefined) return undefined;
    const k = verified.kubernetes;
    const ns = k.namespace;
    const sa = k.serviceaccount;
    if (this.lookup) {
      const account = await this.get(TYPES.serviceaccount, objectKey(ns, sa.name));
      if (account === undefined) return { error: `serviceaccounts "${sa.name}" not found` };
      const uid = stringOf(metadataOf(account).uid);
      if (uid !== sa.uid) return { error: `service account UID (${uid}) does not match claim (${sa.uid})` };
      if (isDeleted(account)) return { error: `service account ${ns}/${sa.name} has been deleted` };
      const bound = await this.checkBound('secret', ns, k.secret);
      if (bound !== undefined) return { error: bound };
      const pod = await this.checkBound('pod', ns, k.pod);
      if (pod !== undefined) return { error: pod };
      if (k.pod === undefined) {
        const node = await this.checkBound('node', '', k.node);
        if (node !== undefined) return { error: node };
      }
    }
    const extra: Record<string, string[]> = {};
    if (k.pod !== undefined) {
      extra['authentication.kubernetes.io/pod-name'] = [k.pod.name];
      extra['authentication.kubernetes.io/pod-uid'] = [k.pod.uid];
    }
    if (k.node !== undefined) {
      extra['authentication.kubernetes.io/node-name'] = [k.node.name];
      extra['authentication.kubernetes.io/node-uid'] = [k.node.uid];
    }
    if (verified.id !== '') extra['authentication.kubernetes.io/credential-id'] = [`JTI=${verified.id}`];
    return {
      user: serviceAccountUser(ns, sa.name, sa.uid, extra),
      audiences: verified.audiences.filter((a) => (audiences ?? this.tokens.apiAudiences).includes(a)),
    };
  }

  private async get(type: string, key: string): Promise<Obj | undefined> {
    const stored = await this.storage.get(type, key);
    return stored === undefined ? undefined : (JSON.parse(stored.json) as Obj);
  }

  /** kube's messages for a bound object that is gone, replaced (another uid) or being deleted. */
  private async checkBound(kind: 'secret' | 'pod' | 'node', ns: string, ref: ObjectRef | undefined): Promise<string | undefined> {
    if (ref === undefined) return undefined;
    const obj = await this.get(TYPES[kind], objectKey(ns, ref.name));
    if (obj === undefined || isDeleted(obj)) return 'service account token has been invalidated';
    const uid = stringOf(metadataOf(obj).uid);
    if (uid !== ref.uid) {
      const claim = kind === 'secret' ? 'service account secret ref claim' : `service account ${kind} ref claim`;
      return `${kind} UID (${uid}) does not match ${claim} (${ref.uid})`;
    }
    return undefined;
  }
}

function stringOf(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** Deleted more than a minute ago (kube's leeway) and still present awaiting finalizers. */
function isDeleted(obj: Obj): boolean {
  const meta = isObject(obj.metadata) ? obj.metadata : {};
  const ts = meta.deletionTimestamp;
  return typeof ts === 'string' && Date.parse(ts) < Date.now() - 60_000;
}
