import type { AdmissionPlugin } from './admission.js';

/**
 * kube-apiserver's admission plugin names and order (AllOrderedPlugins of 1.36) and its defaults, for
 * `--enable-admission-plugins` / `--disable-admission-plugins`. Plugins run in this order (the
 * server lists the ones it has in it), whatever order the flags name them in. Capstan implements some of them; enabling one it does not
 * implement is accepted (the name is kube's) and has no effect.
 */
export const ADMISSION_PLUGIN_ORDER: readonly string[] = [
  'AlwaysAdmit',
  'NamespaceAutoProvision',
  'NamespaceLifecycle',
  'NamespaceExists',
  'LimitPodHardAntiAffinityTopology',
  'LimitRanger',
  'ServiceAccount',
  'NodeRestriction',
  'TaintNodesByCondition',
  'AlwaysPullImages',
  'ImagePolicyWebhook',
  'PodSecurity',
  'PodNodeSelector',
  'Priority',
  'DefaultTolerationSeconds',
  'PodTolerationRestriction',
  'EventRateLimit',
  'ExtendedResourceToleration',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'PodGroupProtection',
  'OwnerReferencesPermissionEnforcement',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'DenyServiceExternalIPs',
  'PodTopologyLabels',
  'PodGroupWorkloadExists',
  'NodeDeclaredFeatureValidator',
  'JobValidation',
  'PodResizeValidator',
  'MutatingAdmissionPolicy',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'AlwaysDeny',
];

/** The plugins kube-apiserver 1.36 enables when no flag says otherwise. */
const DEFAULT_ON = new Set([
  'NamespaceLifecycle',
  'LimitRanger',
  'ServiceAccount',
  'DefaultStorageClass',
  'PersistentVolumeClaimResize',
  'DefaultTolerationSeconds',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'StorageObjectInUseProtection',
  'PodGroupProtection',
  'Priority',
  'TaintNodesByCondition',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'PodSecurity',
  'PodTopologyLabels',
  'MutatingAdmissionPolicy',
  'ValidatingAdmissionPolicy',
  'PodGroupWorkloadExists',
  'NodeDeclaredFeatureValidator',
  'JobValidation',
  'PodResizeValidator',
]);

/** Throws kube's error for a name it does not know (`FLAG plugin "X" is unknown`). */
export function checkAdmissionPluginNames(flag: string, names: readonly string[]): void {
  const unknown = names.find((n) => !ADMISSION_PLUGIN_ORDER.includes(n));
  if (unknown !== undefined) throw new Error(`${flag} plugin "${unknown}" is unknown`);
}

/** Throws kube's error for names both enabled and disabled. */
export function checkAdmissionPluginOverlap(enable: readonly string[], disable: readonly string[]): void {
  const both = [...new Set(enable.filter((n) => disable.includes(n)))].sort();
  if (both.length > 0) throw new Error(`[${both.join(' ')}] in enable-admission-plugins and disable-admission-plugins overlapped`);
}

/** The enabled plugin names in kube's order: the defaults plus `enable`, less `disable`. */
export function enabledAdmissionPluginNames(enable: readonly string[], disable: readonly string[]): string[] {
  return ADMISSION_PLUGIN_ORDER.filter((n) => (DEFAULT_ON.has(n) || enable.includes(n)) && !disable.includes(n));
}

/**
 * The plugins of `available` (listed in kube's order) that the flags leave on. A plugin whose name
 * is not one of kube's is always kept.
 */
export function admissionChain(available: readonly AdmissionPlugin[], enable: readonly string[], disable: readonly string[]): AdmissionPlugin[] {
  const enabled = new Set(enabledAdmissionPluginNames(enable, disable));
  return available.filter((p) => enabled.has(p.name) || !ADMISSION_PLUGIN_ORDER.includes(p.name));
}
