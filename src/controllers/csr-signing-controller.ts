/**
 * kube-controller-manager's csrsigning controller: an approved CertificateSigningRequest of a
 * built-in signer, not failed and without a certificate yet, gets `status.certificate` signed by the
 * cluster signing CA; a request its signer refuses (usages, subject, SANs) gets a `Failed` condition
 * (reason `SignerValidationFailure`) with kube's message instead. Status writes are
 * compare-and-swap on the stored object; a lost race is retried from the newer object. Run it in one
 * process per storage.
 */
import { isObject, nowTimestamp, type Obj } from '../api/object-util.js';
import { BUILT_IN_SIGNERS, signerRefusal } from '../certificates/signer-names.js';
import { parseRequest, signingDuration, type SigningAuthority } from '../certificates/signing-authority.js';
import { logger } from '../logging/logger.js';
import { type Storage } from '../storage/storage.js';
import { WatchedCollection, type CollectionChange } from '../storage/watched-collection.js';
import { WorkQueue, type WorkOutcome } from './work-queue.js';
import { StorageError } from '../api/storage-error.js';

/** Storage type of CertificateSigningRequests. */
export const CSR_TYPE = 'certificatesigningrequests.certificates.k8s.io';

/** Where the controller's CA comes from, and the longest certificate it issues. */
export interface SigningConfig {
  /** Loads the CA (once per term as leader, so a rotated CA is picked up on the next term). */
  authority: () => Promise<SigningAuthority>;
  /** kube's --cluster-signing-duration, in ms. */
  maxDurationMs: number;
}

function conditions(csr: Obj): Obj[] {
  const status = isObject(csr.status) ? csr.status : {};
  return Array.isArray(status.conditions) ? status.conditions.filter(isObject) : [];
}

function hasTrueCondition(csr: Obj, type: string): boolean {
  return conditions(csr).some((c) => c.type === type && c.status === 'True');
}

/** kube's IsCertificateRequestApproved: Approved and not Denied. */
function isApproved(csr: Obj): boolean {
  return hasTrueCondition(csr, 'Approved') && !hasTrueCondition(csr, 'Denied');
}

/** Whether the controller has anything to do for `csr`. */
function needsSigning(csr: Obj): boolean {
  const spec = isObject(csr.spec) ? csr.spec : {};
  const status = isObject(csr.status) ? csr.status : {};
  if (typeof status.certificate === 'string' && status.certificate !== '') return false;
  if (!isApproved(csr) || hasTrueCondition(csr, 'Failed')) return false;
  return typeof spec.signerName === 'string' && BUILT_IN_SIGNERS.includes(spec.signerName);
}

export class CsrSigningController {
  private readonly abort = new AbortController();
  private readonly csrs: WatchedCollection;
  private readonly queue: WorkQueue<string>;
  /** The CA, read when this term first signs (not when it starts leading: that would load X.509 code at start-up). */
  private authority: Promise<SigningAuthority> | undefined;

  constructor(
    private readonly storage: Storage,
    private readonly config: SigningConfig,
  ) {
    this.csrs = new WatchedCollection(storage, CSR_TYPE, (c) => this.changed(c), this.abort.signal, this.report);
    this.queue = new WorkQueue(
      (key) => this.sync(key),
      (key, err) => this.report(err, key),
    );
  }

  /** Signs what is pending, then follows changes until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    signal.addEventListener('abort', () => this.abort.abort(), { once: true });
    this.authority = undefined;
    await this.csrs.start();
    await this.queue.run(1, this.abort.signal);
  }

  private readonly report = (err: unknown, key?: string): void => {
    if (this.abort.signal.aborted) return;
    logger.warn('csrsigning controller', { csr: key, error: err instanceof Error ? err.message : String(err) });
  };

  private changed(c: CollectionChange): void {
    if (c.current !== undefined && needsSigning(c.current)) this.queue.add(c.key);
  }

  private async sync(key: string): Promise<WorkOutcome> {
    const stored = await this.storage.get(CSR_TYPE, key);
    if (stored === undefined) return 'done';
    const csr = JSON.parse(stored.json) as Obj;
    if (!needsSigning(csr)) return 'done';
    const spec = isObject(csr.spec) ? csr.spec : {};
    const signerName = typeof spec.signerName === 'string' ? spec.signerName : '';
    const usages = Array.isArray(spec.usages) ? spec.usages.filter((u): u is string => typeof u === 'string') : [];
    const status: Obj = isObject(csr.status) ? { ...csr.status } : {};
    let request;
    try {
      request = parseRequest(typeof spec.request === 'string' ? spec.request : '');
    } catch (err) {
      // kube logs and retries an unparsable request; it cannot become parsable, so it is left alone.
      this.report(new Error(`unable to parse csr ${JSON.stringify(key)}: ${err instanceof Error ? err.message : String(err)}`), key);
      return 'done';
    }
    const refusal = signerRefusal(signerName, request, usages);
    if (refusal !== undefined) {
      const now = nowTimestamp();
      status.conditions = [
        ...conditions(csr),
        { type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: refusal, lastUpdateTime: now, lastTransitionTime: now },
      ];
    } else {
      const expiration = typeof spec.expirationSeconds === 'number' ? spec.expirationSeconds : undefined;
      let authority: SigningAuthority;
      try {
        authority = await (this.authority ??= this.config.authority());
      } catch (err) {
        // Read again for the next CSR; the queue reports this one's error.
        this.authority = undefined;
        throw err;
      }
      const pem = await authority.sign(request, usages, signingDuration(expiration, this.config.maxDurationMs));
      status.certificate = Buffer.from(pem).toString('base64');
    }
    csr.status = status;
    try {
      await this.storage.update(CSR_TYPE, key, csr, stored.resourceVersion);
    } catch (err) {
      if (err instanceof StorageError && err.code === 'NotFound') return 'done';
      if (err instanceof StorageError && err.code === 'Conflict') return 'retry';
      throw err;
    }
    return 'done';
  }
}
