import { isObject, metadataOf, objectKey, type Obj } from '../api/object-util.js';
import { type Storage } from '../storage/storage.js';
import type { AuthenticationResult, TokenAuthenticator } from './authenticator.js';
import { TokenError, type ServiceAccountTokens, type ObjectRef, type VerifiedToken } from './service-account-tokens.js';
import { serviceAccountUser } from '../api/user.js';
import { StorageError } from '../api/storage-error.js';
import { asString } from '../api/values.js';

/** The labels kube keeps on Secrets holding legacy tokens: when last used, and since when refused. */
export const LEGACY_TOKEN_LAST_USED = 'kubernetes.io/legacy-token-last-used';
export const LEGACY_TOKEN_INVALID_SINCE = 'kubernetes.io/legacy-token-invalid-since';

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
    if (verified.legacySecret !== undefined) return this.authenticateLegacy(token, verified, verified.legacySecret, audiences);
    const k = verified.kubernetes;
    const ns = k.namespace;
    const sa = k.serviceaccount;
    if (this.lookup) {
      const account = await this.get(TYPES.serviceaccount, objectKey(ns, sa.name));
      if (account === undefined) return { error: `serviceaccounts "${sa.name}" not found` };
      const uid = asString(metadataOf(account).uid);
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

  /**
   * kube's legacy validator: with lookup, the Secret must still hold this very token, the account
   * must exist with the claimed uid, and a Secret labelled `kubernetes.io/legacy-token-invalid-since`
   * refuses it; every use records the day in the Secret's `kubernetes.io/legacy-token-last-used`
   * label (written at most once a day).
   */
  private async authenticateLegacy(token: string, verified: VerifiedToken, secretName: string, audiences: string[] | undefined): Promise<AuthenticationResult> {
    const ns = verified.kubernetes.namespace;
    const sa = verified.kubernetes.serviceaccount;
    if (this.lookup) {
      const stored = await this.storage.get(TYPES.secret, objectKey(ns, secretName));
      const secret = stored === undefined ? undefined : (JSON.parse(stored.json) as Obj);
      if (secret === undefined || isDeleted(secret)) return { error: 'Token has been invalidated' };
      const data = isObject(secret.data) ? secret.data : {};
      if (typeof data.token !== 'string' || Buffer.from(data.token, 'base64').toString('utf8') !== token)
        return { error: "Token does not match server's copy" };
      const account = await this.get(TYPES.serviceaccount, objectKey(ns, sa.name));
      if (account === undefined) return { error: `serviceaccounts "${sa.name}" not found` };
      if (isDeleted(account)) return { error: `ServiceAccount ${ns}/${sa.name} has been deleted` };
      const uid = asString(metadataOf(account).uid);
      if (uid !== sa.uid) return { error: `ServiceAccount UID (${uid}) does not match claim (${sa.uid})` };
      const labels = isObject(metadataOf(secret).labels) ? (metadataOf(secret).labels as Obj) : {};
      await this.recordLegacyUse(ns, secretName, stored?.resourceVersion ?? '', secret, labels);
      const invalidSince = asString(labels[LEGACY_TOKEN_INVALID_SINCE]);
      if (invalidSince !== '') {
        return {
          error: `the token in secret ${ns}/${secretName} for service account ${ns}/${sa.name} has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the '${LEGACY_TOKEN_INVALID_SINCE}' label from the secret to temporarily allow use of this token`,
        };
      }
    }
    return {
      user: serviceAccountUser(ns, sa.name, sa.uid),
      audiences: verified.audiences.filter((a) => (audiences ?? this.tokens.apiAudiences).includes(a)),
    };
  }

  /** kube's patchSecretWithLastUsedDate: today's date (UTC) unless the label already says today or tomorrow; a lost race is left to the next use. */
  private async recordLegacyUse(ns: string, name: string, resourceVersion: string, secret: Obj, labels: Obj): Promise<void> {
    const now = new Date();
    const day = (d: Date): string => d.toISOString().slice(0, 10);
    const today = day(now);
    const lastUsed = asString(labels[LEGACY_TOKEN_LAST_USED]);
    if (lastUsed === today || lastUsed === day(new Date(now.getTime() + 86_400_000))) return;
    const meta = metadataOf(secret);
    meta.labels = { ...labels, [LEGACY_TOKEN_LAST_USED]: today };
    try {
      await this.storage.update(TYPES.secret, objectKey(ns, name), secret, resourceVersion);
    } catch (err) {
      if (!(err instanceof StorageError)) throw err;
    }
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
    const uid = asString(metadataOf(obj).uid);
    if (uid !== ref.uid) {
      const claim = kind === 'secret' ? 'service account secret ref claim' : `service account ${kind} ref claim`;
      return `${kind} UID (${uid}) does not match ${claim} (${ref.uid})`;
    }
    return undefined;
  }
}

/** Deleted more than a minute ago (kube's leeway) and still present awaiting finalizers. */
function isDeleted(obj: Obj): boolean {
  const meta = isObject(obj.metadata) ? obj.metadata : {};
  const ts = meta.deletionTimestamp;
  return typeof ts === 'string' && Date.parse(ts) < Date.now() - 60_000;
}
