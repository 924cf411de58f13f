/**
 * kube-apiserver 1.36's admission plugin names, in the order it runs them, which of them it enables
 * by default, and the `--enable-admission-plugins` / `--disable-admission-plugins` arithmetic: the
 * enabled plugins always run in this order, whatever order the flags list them in.
 */
export const ORDERED_ADMISSION_PLUGINS = [
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
] as const;

/** The plugins kube-apiserver runs when no flag says otherwise. */
const DEFAULT_ON = new Set<string>([
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

const KNOWN = new Set<string>(ORDERED_ADMISSION_PLUGINS);

/** Whether kube-apiserver runs the plugin `name` when no flag names it. */
export function isDefaultAdmissionPlugin(name: string): boolean {
  return DEFAULT_ON.has(name);
}

/** The flags' problems as kube-apiserver words them (unknown names, a name both enabled and disabled). */
export function admissionFlagProblems(enable: string[], disable: string[]): string[] {
  const problems = [
    ...enable.filter((n) => !KNOWN.has(n)).map((n) => `enable-admission-plugins plugin "${n}" is unknown`),
    ...disable.filter((n) => !KNOWN.has(n)).map((n) => `disable-admission-plugins plugin "${n}" is unknown`),
  ];
  const both = [...new Set(enable.filter((n) => disable.includes(n)))].sort();
  if (both.length > 0) problems.push(`[${both.join(' ')}] in enable-admission-plugins and disable-admission-plugins overlapped`);
  return problems;
}

/** The enabled plugins in kube's order: the defaults, plus `enable`, minus `disable`. */
export function enabledAdmissionPlugins(enable: string[], disable: string[]): string[] {
  return ORDERED_ADMISSION_PLUGINS.filter((n) => enable.includes(n) || (DEFAULT_ON.has(n) && !disable.includes(n)));
}
