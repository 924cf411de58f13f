import { isObject, metadataOf, objectKey, stringField, type Obj } from '../api/object-util.js';
import type { ServiceAccountTokens } from '../auth/service-account-tokens.js';
import { type Storage } from '../storage/storage.js';
import { StorageError } from '../api/storage-error.js';

/** The Secret type of legacy service account tokens, and the annotations naming their account. */
export const SERVICE_ACCOUNT_TOKEN_TYPE = 'kubernetes.io/service-account-token';
const ACCOUNT_NAME = 'kubernetes.io/service-account.name';
const ACCOUNT_UID = 'kubernetes.io/service-account.uid';

function annotationsOf(obj: Obj): Record<string, unknown> {
  const a = metadataOf(obj).annotations;
  return isObject(a) ? a : {};
}

function b64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

/**
 * kube-controller-manager's serviceaccount-token controller: every Secret of type
 * kubernetes.io/service-account-token whose annotated ServiceAccount exists (with the annotated uid,
 * when one is given) gets a legacy token (see ServiceAccountTokens.issueLegacy), the cluster CA
 * (`ca.crt`, when Capstan has one) and its `namespace` in its data, and the account's uid annotation;
 * a Secret whose account is missing or replaced is deleted, and so are an account's Secrets when it
 * is deleted. Writes are compare-and-swapped, so a concurrent change (or a second controller) only
 * makes a pass start over from the stored object.
 */
export class ServiceAccountTokenController {
  private readonly abort = new AbortController();
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly storage: Storage,
    private readonly tokens: ServiceAccountTokens,
    private readonly caBundle: string | undefined,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  /** Lists Secrets and ServiceAccounts, follows their changes, and syncs every listed token Secret. */
  async start(): Promise<void> {
    const accounts = await this.storage.list('serviceaccounts');
    await this.storage.watch(
      'serviceaccounts',
      accounts.resourceVersion,
      (e) => {
        this.enqueue(() => this.syncSecretsOf(JSON.parse(e.json) as Obj));
      },
      this.abort.signal,
      (err) => this.onError(err),
    );
    const secrets = await this.storage.list('secrets');
    await this.storage.watch(
      'secrets',
      secrets.resourceVersion,
      (e) => {
        if (e.type !== 'DELETED') this.enqueueSecret(e.key);
      },
      this.abort.signal,
      (err) => this.onError(err),
    );
    for (const item of secrets.items) this.enqueueSecret(item.key);
    await this.queue;
  }

  stop(): void {
    this.abort.abort();
  }

  private enqueue(work: () => Promise<void>): void {
    this.queue = this.queue
      .then(async () => {
        if (!this.abort.signal.aborted) await work();
      })
      .catch(this.onError);
  }

  private enqueueSecret(key: string): void {
    this.enqueue(() => this.syncSecret(key));
  }

  /** An account created, changed or deleted: its token Secrets get their tokens, or go with it. */
  private async syncSecretsOf(account: Obj): Promise<void> {
    for (const key of await this.secretKeysOf(account)) await this.syncSecret(key);
  }

  /** The token Secrets naming `account` (by name, and by uid where annotated). */
  private async secretKeysOf(account: Obj): Promise<string[]> {
    const meta = metadataOf(account);
    const namespace = stringField(meta, 'namespace');
    const listed = await this.storage.list('secrets', { namespace });
    return listed.items
      .filter((item) => {
        const secret = JSON.parse(item.json) as Obj;
        return secret.type === SERVICE_ACCOUNT_TOKEN_TYPE && annotationsOf(secret)[ACCOUNT_NAME] === stringField(meta, 'name');
      })
      .map((item) => item.key);
  }

  private async syncSecret(key: string): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const stored = await this.storage.get('secrets', key);
      if (stored === undefined) return;
      const secret = JSON.parse(stored.json) as Obj;
      if (secret.type !== SERVICE_ACCOUNT_TOKEN_TYPE) return;
      const meta = metadataOf(secret);
      if (meta.deletionTimestamp !== undefined) return;
      const namespace = stringField(meta, 'namespace');
      const annotations = annotationsOf(secret);
      const accountName = typeof annotations[ACCOUNT_NAME] === 'string' ? annotations[ACCOUNT_NAME] : '';
      const wantUid = typeof annotations[ACCOUNT_UID] === 'string' ? annotations[ACCOUNT_UID] : '';
      const accountStored = accountName === '' ? undefined : await this.storage.get('serviceaccounts', objectKey(namespace, accountName));
      const account = accountStored === undefined ? undefined : (JSON.parse(accountStored.json) as Obj);
      const accountUid = account === undefined ? '' : stringField(metadataOf(account), 'uid');
      try {
        if (account === undefined || (wantUid !== '' && wantUid !== accountUid)) {
          await this.storage.delete('secrets', key, stored.resourceVersion);
          return;
        }
        const data = isObject(secret.data) ? { ...secret.data } : {};
        let changed = false;
        if (typeof data.token !== 'string' || data.token === '') {
          data.token = b64(this.tokens.issueLegacy(namespace, { name: accountName, uid: accountUid }, stringField(meta, 'name')));
          changed = true;
        }
        if (this.caBundle !== undefined && data['ca.crt'] !== b64(this.caBundle)) {
          data['ca.crt'] = b64(this.caBundle);
          changed = true;
        }
        if (data.namespace !== b64(namespace)) {
          data.namespace = b64(namespace);
          changed = true;
        }
        if (annotations[ACCOUNT_UID] !== accountUid) {
          meta.annotations = { ...annotations, [ACCOUNT_UID]: accountUid };
          changed = true;
        }
        if (!changed) return;
        secret.data = data;
        await this.storage.update('secrets', key, secret, stored.resourceVersion);
        return;
      } catch (err) {
        if (err instanceof StorageError && (err.code === 'Conflict' || err.code === 'NotFound')) continue;
        throw err;
      }
    }
  }
}
