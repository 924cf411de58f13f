/**
 * The names `--controllers` accepts, with kube-controller-manager's syntax and matching rules
 * (`*`, `name`, `-name`, aliases). Kept apart from the controllers so the flag parser stays light.
 */

/** A controller the flag names: canonical name and aliases. */
export interface ControllerName {
  name: string;
  aliases: string[];
}

/** The garbage collector, under kube-controller-manager's name and aliases. */
export const GARBAGE_COLLECTOR: ControllerName = { name: 'garbage-collector-controller', aliases: ['garbagecollector', 'garbage-collector'] };

/** The disruption controller (PodDisruptionBudget status), under kube-controller-manager's name and aliases. */
export const DISRUPTION: ControllerName = { name: 'disruption-controller', aliases: ['disruption'] };

/** The resourcequota controller (ResourceQuota status), under kube-controller-manager's name and aliases. */
export const RESOURCE_QUOTA: ControllerName = { name: 'resourcequota-controller', aliases: ['resourcequota'] };

/** The publisher of `kube-root-ca.crt` in every namespace (with HTTPS), under kube-controller-manager's name. */
export const ROOT_CA_PUBLISHER: ControllerName = { name: 'root-ca-certificate-publisher-controller', aliases: ['root-ca-cert-publisher'] };

/** The tokens controller (legacy tokens into kubernetes.io/service-account-token Secrets), under kube-controller-manager's name. */
export const SERVICE_ACCOUNT_TOKEN: ControllerName = { name: 'serviceaccount-token-controller', aliases: ['serviceaccount-token'] };

/** The signer of approved CertificateSigningRequests (with HTTPS), under kube-controller-manager's name and alias. */
export const CSR_SIGNING: ControllerName = { name: 'certificatesigningrequest-signing-controller', aliases: ['csrsigning'] };

/** The pvc-protection controller (removes `kubernetes.io/pvc-protection` from unused claims), under kube-controller-manager's name. */
export const PVC_PROTECTION: ControllerName = { name: 'persistentvolumeclaim-protection-controller', aliases: ['pvc-protection'] };

/** The pv-protection controller (removes `kubernetes.io/pv-protection` from unbound volumes), under kube-controller-manager's name. */
export const PV_PROTECTION: ControllerName = { name: 'persistentvolume-protection-controller', aliases: ['pv-protection'] };

/** The node lifecycle controller (only its NoSchedule tainting pass), under kube-controller-manager's name and alias. */
export const NODE_LIFECYCLE: ControllerName = { name: 'node-lifecycle-controller', aliases: ['nodelifecycle'] };

/** The namespace controller (deletes a Terminating namespace's content, then the namespace), under kube-controller-manager's name. */
export const NAMESPACE: ControllerName = { name: 'namespace-controller', aliases: ['namespace'] };

/** The serviceaccount controller (the `default` ServiceAccount of every namespace), under kube-controller-manager's name. */
export const SERVICE_ACCOUNT: ControllerName = { name: 'serviceaccount-controller', aliases: ['serviceaccount'] };

/** The ClusterRole aggregation controller (rules of ClusterRoles with an aggregationRule), under kube-controller-manager's name. */
export const CLUSTER_ROLE_AGGREGATION: ControllerName = { name: 'clusterrole-aggregation-controller', aliases: ['clusterrole-aggregation'] };

/** The ValidatingAdmissionPolicy status controller (`status.typeChecking`), under kube-controller-manager's name. */
export const VALIDATING_ADMISSION_POLICY_STATUS: ControllerName = { name: 'validatingadmissionpolicy-status-controller', aliases: [] };

/** Every controller the server can run. */
export const KNOWN_CONTROLLER_NAMES: ControllerName[] = [
  GARBAGE_COLLECTOR,
  DISRUPTION,
  RESOURCE_QUOTA,
  ROOT_CA_PUBLISHER,
  SERVICE_ACCOUNT_TOKEN,
  PVC_PROTECTION,
  PV_PROTECTION,
  CSR_SIGNING,
  NODE_LIFECYCLE,
  NAMESPACE,
  SERVICE_ACCOUNT,
  CLUSTER_ROLE_AGGREGATION,
  VALIDATING_ADMISSION_POLICY_STATUS,
];

/**
 * Checks a `--controllers` list; throws `"x" is not in the list of known controllers` (kube's
 * message) for an unknown name.
 */
export function validateControllerList(list: string[]): void {
  for (const entry of list) {
    if (entry === '*') continue;
    const name = entry.startsWith('-') ? entry.slice(1) : entry;
    if (!KNOWN_CONTROLLER_NAMES.some((c) => c.name === name || c.aliases.includes(name)))
      throw new Error(`${JSON.stringify(name)} is not in the list of known controllers`);
  }
}

/** kube's IsControllerEnabled: the first explicit `name` or `-name` decides, else `*` enables it. */
export function isControllerEnabled(controller: ControllerName, list: string[]): boolean {
  const names = [controller.name, ...controller.aliases];
  let star = false;
  for (const entry of list) {
    if (names.includes(entry)) return true;
    if (entry.startsWith('-') && names.includes(entry.slice(1))) return false;
    if (entry === '*') star = true;
  }
  return star;
}
