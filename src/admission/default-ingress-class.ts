import type { ResourceInfo } from '../api/resource-info.js';
import type { Obj } from '../api/object-util.js';
import type { Storage } from '../storage/storage.js';
import { asObject } from '../api/values.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';

const DEFAULT_CLASS_ANNOTATION = 'ingressclass.kubernetes.io/is-default-class';
/** The pre-`ingressClassName` way of naming an Ingress's class. */
const LEGACY_CLASS_ANNOTATION = 'kubernetes.io/ingress.class';

/**
 * kube's DefaultIngressClass plugin: an Ingress created without `spec.ingressClassName` (and without
 * the legacy `kubernetes.io/ingress.class` annotation) gets the default IngressClass, the one
 * annotated `is-default-class: "true"`; of several, the newest (ties: the first by name). Without a
 * default class the Ingress is left alone.
 */
export class DefaultIngressClass implements AdmissionPlugin {
  readonly name = 'DefaultIngressClass';

  constructor(private readonly storage: Storage) {}

  /** Ingress creates only. */
  handles(operation: AdmissionAttributes['operation'], info: ResourceInfo, subresource: string): boolean {
    return operation === 'CREATE' && subresource === '' && info.group === 'networking.k8s.io' && info.resource === 'ingresses';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' || a.info.group !== 'networking.k8s.io' || a.info.resource !== 'ingresses' || a.subresource !== '') return;
    const ingress = a.object;
    if (ingress === undefined) return;
    const spec = asObject(ingress.spec);
    if (spec.ingressClassName != null || LEGACY_CLASS_ANNOTATION in asObject(asObject(ingress.metadata).annotations)) return;
    const chosen = await this.defaultClass();
    if (chosen === undefined) return;
    spec.ingressClassName = chosen;
    ingress.spec = spec;
  }

  private async defaultClass(): Promise<string | undefined> {
    const listed = await this.storage.list('ingressclasses.networking.k8s.io');
    const defaults = listed.items
      .map((item) => asObject((JSON.parse(item.json) as Obj).metadata))
      .filter((meta) => asObject(meta.annotations)[DEFAULT_CLASS_ANNOTATION] === 'true')
      .map((meta) => ({ name: String(meta.name), created: Date.parse(String(meta.creationTimestamp)) || 0 }));
    defaults.sort((x, y) => (x.created === y.created ? (x.name < y.name ? -1 : 1) : y.created - x.created));
    return defaults[0]?.name;
  }
}
