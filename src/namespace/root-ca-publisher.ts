import { randomUUID } from 'node:crypto';
import { canonicalize, isObject, jsonEqual, metadataOf, nowTimestamp, type Obj } from '../api/object-util.js';
import { type Storage } from '../storage/storage.js';
import { StorageError } from '../api/storage-error.js';

/** The ConfigMap kube-controller-manager's root-ca-cert-publisher keeps in every namespace. */
export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

/**
 * kube's root-ca-cert-publisher: every namespace that is not terminating has a ConfigMap
 * `kube-root-ca.crt` whose `ca.crt` is the CA bundle clients use to verify the server, with kube's
 * description annotation. It is created when a namespace appears (and for all at start), created
 * again when deleted, and its data (and annotation) restored when changed. Writes are
 * create-if-absent and compare-and-swap, so several processes never fight over it.
 */
export class RootCAPublisher {
  private readonly abort = new AbortController();
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly storage: Storage,
    private readonly caBundle: string,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  async start(): Promise<void> {
    const namespaces = await this.storage.list('namespaces');
    const configMaps = await this.storage.currentResourceVersion('configmaps');
    await this.storage.watch(
      'namespaces',
      namespaces.resourceVersion,
      (e) => {
        if (e.type === 'ADDED' || e.type === 'MODIFIED') this.enqueue(nameOf(e.json));
      },
      this.abort.signal,
    );
    await this.storage.watch(
      'configmaps',
      configMaps,
      (e) => {
        const [namespace, name] = e.key.split('/');
        if (name === ROOT_CA_CONFIGMAP && (e.type === 'DELETED' || e.type === 'MODIFIED')) this.enqueue(namespace);
      },
      this.abort.signal,
    );
    for (const item of namespaces.items) this.enqueue(nameOf(item.json));
    await this.queue;
  }

  stop(): void {
    this.abort.abort();
  }

  private enqueue(namespace: string): void {
    if (namespace === '') return;
    this.queue = this.queue.then(() => this.ensure(namespace)).catch(this.onError);
  }

  private async ensure(namespace: string): Promise<void> {
    if (this.abort.signal.aborted) return;
    const ns = await this.storage.get('namespaces', namespace);
    if (ns === undefined || metadataOf(JSON.parse(ns.json) as Obj).deletionTimestamp !== undefined) return;
    const key = `${namespace}/${ROOT_CA_CONFIGMAP}`;
    const data = { 'ca.crt': this.caBundle };
    const current = await this.storage.get('configmaps', key);
    try {
      if (current === undefined) {
        const cm = canonicalize(
          {
            metadata: {
              name: ROOT_CA_CONFIGMAP,
              namespace,
              uid: randomUUID(),
              creationTimestamp: nowTimestamp(),
              annotations: { 'kubernetes.io/description': DESCRIPTION },
            },
            data,
          },
          'ConfigMap',
          'v1',
        );
        await this.storage.create('configmaps', key, cm);
        return;
      }
      const cm = JSON.parse(current.json) as Obj;
      const meta = metadataOf(cm);
      const annotations = isObject(meta.annotations) ? meta.annotations : {};
      if (jsonEqual(cm.data, data) && annotations['kubernetes.io/description'] === DESCRIPTION) return;
      meta.annotations = { ...annotations, 'kubernetes.io/description': DESCRIPTION };
      cm.data = data;
      delete cm.binaryData;
      await this.storage.update('configmaps', key, cm, current.resourceVersion);
    } catch (err) {
      // Another process (or a real controller) wrote first: its change comes back as an event.
      if (err instanceof StorageError && (err.code === 'AlreadyExists' || err.code === 'Conflict' || err.code === 'NotFound')) return;
      throw err;
    }
  }
}

function nameOf(json: string): string {
  const meta = metadataOf(JSON.parse(json) as Obj);
  return typeof meta.name === 'string' ? meta.name : '';
}
