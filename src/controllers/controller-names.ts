/**
 * The names `--controllers` accepts, with kube-controller-manager's syntax and matching rules
 * (`*`, `name`, `-name`, aliases). Kept apart from the controllers so the flag parser stays light.
 */

/** A controller the flag names: canonical name and aliases. */
export interface ControllerName {
  name: string;
  aliases: string[];
  /** What it does in Capstan, for `--help` and docs/flags.md. */
  help: string;
}

const PER_SERVER = 'Not under the Lease: runs in the first worker of every Capstan server (its only process without --workers).';

/** The garbage collector, under kube-controller-manager's name and aliases. */
export const GARBAGE_COLLECTOR: ControllerName = {
  name: 'garbage-collector-controller',
  aliases: ['garbage-collector', 'garbagecollector'],
  help: `Deletes dependents whose owners are gone and carries out foreground and orphan deletion.`,
};

/** The disruption controller (PodDisruptionBudget status), under kube-controller-manager's name and aliases. */
export const DISRUPTION: ControllerName = {
  name: 'disruption-controller',
  aliases: ['disruption'],
  help: `Keeps PodDisruptionBudget status, which eviction reads.`,
};

/** The resourcequota controller (ResourceQuota status), under kube-controller-manager's name and aliases. */
export const RESOURCE_QUOTA: ControllerName = {
  name: 'resourcequota-controller',
  aliases: ['resourcequota'],
  help: `Keeps ResourceQuota status.hard and status.used, which quota admission reads.`,
};

/** The publisher of `kube-root-ca.crt` in every namespace (with HTTPS), under kube-controller-manager's name. */
export const ROOT_CA_PUBLISHER: ControllerName = {
  name: 'root-ca-certificate-publisher-controller',
  aliases: ['root-ca-cert-publisher'],
  help: `Writes the kube-root-ca.crt ConfigMap (the serving CA) into every namespace; with HTTPS only. ${PER_SERVER}`,
};

/** The tokens controller (legacy tokens into kubernetes.io/service-account-token Secrets), under kube-controller-manager's name. */
export const SERVICE_ACCOUNT_TOKEN: ControllerName = {
  name: 'serviceaccount-token-controller',
  aliases: ['serviceaccount-token'],
  help: `Fills kubernetes.io/service-account-token Secrets with a legacy token, ca.crt and namespace, and deletes them with their ServiceAccount. ${PER_SERVER}`,
};

/** The signer of approved CertificateSigningRequests (with HTTPS), under kube-controller-manager's name and alias. */
export const CSR_SIGNING: ControllerName = {
  name: 'certificatesigningrequest-signing-controller',
  aliases: ['csrsigning'],
  help: `Signs approved CSRs of the kubernetes.io/kube-apiserver-client, kube-apiserver-client-kubelet, kubelet-serving and legacy-unknown signers with the cluster signing CA; with HTTPS or --cluster-signing-cert-file only.`,
};

/** The pvc-protection controller (removes `kubernetes.io/pvc-protection` from unused claims), under kube-controller-manager's name. */
export const PVC_PROTECTION: ControllerName = {
  name: 'persistentvolumeclaim-protection-controller',
  aliases: ['pvc-protection'],
  help: `Lets a deleted PersistentVolumeClaim go once no scheduled pod uses it.`,
};

/** The pv-protection controller (removes `kubernetes.io/pv-protection` from unbound volumes), under kube-controller-manager's name. */
export const PV_PROTECTION: ControllerName = {
  name: 'persistentvolume-protection-controller',
  aliases: ['pv-protection'],
  help: `Lets a deleted PersistentVolume go once it is not Bound.`,
};

/** The node lifecycle controller (only its NoSchedule tainting pass), under kube-controller-manager's name and alias. */
export const NODE_LIFECYCLE: ControllerName = {
  name: 'node-lifecycle-controller',
  aliases: ['nodelifecycle'],
  help: `Only kube's NoSchedule tainting pass: keeps each Node's condition taints (so new Nodes lose the not-ready taint once their conditions allow). No heartbeat monitoring, no NoExecute taints, no eviction.`,
};

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
