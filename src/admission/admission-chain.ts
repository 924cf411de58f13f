import type { Authorizer } from '../auth/authorizer.js';
import type { Storage } from '../storage/storage.js';
import { Admission, type AdmissionPlugin } from './admission.js';
import { AlwaysDeny } from './always-deny.js';
import { CertificateApproval, CertificateSigning, CertificateSubjectRestriction } from './certificate-admission.js';
import { DefaultIngressClass } from './default-ingress-class.js';
import { DefaultStorageClass } from './default-storage-class.js';
import { DefaultTolerationSeconds } from './default-toleration-seconds.js';
import { LimitRanger } from './limit-ranger.js';
import { NamespaceLifecycle } from './namespace-lifecycle.js';
import { NodeDeclaredFeatureValidator } from './node-declared-feature-validator.js';
import { NodeRestriction } from './node-restriction.js';
import { enabledAdmissionPlugins } from './plugin-names.js';
import { PodSecurityAdmission } from './pod-security/pod-security-admission.js';
import { PodResizeValidator } from './pod-resize-validator.js';
import { PodTopologyLabels } from './pod-topology-labels.js';
import { PersistentVolumeClaimResize } from './persistent-volume-claim-resize.js';
import { PriorityAdmission } from './priority.js';
import { ResourceQuotaAdmission } from './resource-quota.js';
import { RuntimeClassAdmission } from './runtime-class.js';
import { ServiceAccountAdmission } from './service-account.js';
import { StorageObjectInUseProtection } from './storage-object-in-use-protection.js';
import { TaintNodesByCondition } from './taint-nodes-by-condition.js';
import type { WebhookAdmission } from './webhook-admission.js';

/** What plugins are built from. */
export interface AdmissionDependencies {
  storage: Storage;
  /** The webhook plugins (their configurations are watched by the server). */
  webhooks?: WebhookAdmission;
  /** The admission policy plugins (their policies and bindings are watched by the server). */
  mutatingPolicies?: AdmissionPlugin;
  validatingPolicies?: AdmissionPlugin;
  /** The server's authorizer (NodeRestriction asks it whether a node may request a token audience). */
  authorizer?: Authorizer;
  /** Ends the caches plugins keep (NamespaceLifecycle's namespaces); without it they read live. */
  signal?: AbortSignal;
}

/** The plugins Capstan implements, by kube's name. Enabled plugins missing here do not run. */
const PLUGINS: Record<string, (deps: AdmissionDependencies) => AdmissionPlugin | undefined> = {
  AlwaysAdmit: () => ({ name: 'AlwaysAdmit' }),
  NamespaceLifecycle: (d) => new NamespaceLifecycle(d.storage, d.signal),
  LimitRanger: (d) => new LimitRanger(d.storage),
  ServiceAccount: (d) => new ServiceAccountAdmission(d.storage),
  NodeRestriction: (d) => new NodeRestriction(d.storage, d.authorizer),
  TaintNodesByCondition: () => new TaintNodesByCondition(),
  PodSecurity: (d) => new PodSecurityAdmission(d.storage),
  Priority: (d) => new PriorityAdmission(d.storage),
  DefaultTolerationSeconds: () => new DefaultTolerationSeconds(),
  DefaultStorageClass: (d) => new DefaultStorageClass(d.storage),
  CertificateApproval: (d) => new CertificateApproval(d.authorizer),
  CertificateSigning: (d) => new CertificateSigning(d.authorizer),
  CertificateSubjectRestriction: () => new CertificateSubjectRestriction(),
  StorageObjectInUseProtection: () => new StorageObjectInUseProtection(),
  PersistentVolumeClaimResize: (d) => new PersistentVolumeClaimResize(d.storage),
  RuntimeClass: (d) => new RuntimeClassAdmission(d.storage),
  DefaultIngressClass: (d) => new DefaultIngressClass(d.storage),
  PodTopologyLabels: (d) => new PodTopologyLabels(d.storage),
  NodeDeclaredFeatureValidator: (d) => new NodeDeclaredFeatureValidator(d.storage),
  PodResizeValidator: (d) => new PodResizeValidator(d.storage),
  MutatingAdmissionPolicy: (d) => d.mutatingPolicies,
  MutatingAdmissionWebhook: (d) => d.webhooks?.mutating,
  ValidatingAdmissionPolicy: (d) => d.validatingPolicies,
  ValidatingAdmissionWebhook: (d) => d.webhooks?.validating,
  ResourceQuota: (d) => new ResourceQuotaAdmission(d.storage),
  AlwaysDeny: () => new AlwaysDeny(),
};

/** Whether Capstan has the plugin `name` (a kube plugin name). */
export function isImplementedAdmissionPlugin(name: string): boolean {
  return name in PLUGINS;
}

/**
 * The admission chain of `--enable-admission-plugins` / `--disable-admission-plugins`: kube's
 * enabled plugins, in kube's order, that Capstan implements.
 */
export function admissionChain(enable: string[], disable: string[], deps: AdmissionDependencies): Admission {
  const names = enabledAdmissionPlugins(enable, disable).filter(isImplementedAdmissionPlugin);
  const plugins = names.map((n) => PLUGINS[n]?.(deps)).filter((p): p is AdmissionPlugin => p !== undefined);
  return new Admission(plugins);
}
