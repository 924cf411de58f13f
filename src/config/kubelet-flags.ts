import type { FlagSpec } from './server-config.js';
import { listFlag } from './flag-values.js';

/** The node address types kube knows, in kube-apiserver's default order of preference. */
const ADDRESS_TYPES = ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'];

/** The kubelet client flags, with kube-apiserver's names and defaults. */
export const KUBELET_FLAGS: FlagSpec[] = [
  {
    name: 'kubelet-client-certificate',
    group: 'serving',
    default: '',
    help: 'Client certificate presented to kubelets (pod logs, exec, attach, port-forward). Unset: none.',
    apply: (c, v) => {
      c.kubeletClientCertificate = v;
    },
  },
  {
    name: 'kubelet-client-key',
    group: 'serving',
    default: '',
    help: 'Private key of --kubelet-client-certificate.',
    apply: (c, v) => {
      c.kubeletClientKey = v;
    },
  },
  {
    name: 'kubelet-certificate-authority',
    group: 'serving',
    default: '',
    help: "PEM CA bundle that kubelets' serving certificates are verified against. Unset: kubelets' certificates are not verified, as in kube-apiserver.",
    apply: (c, v) => {
      c.kubeletCertificateAuthority = v;
    },
  },
  {
    name: 'kubelet-preferred-address-types',
    group: 'serving',
    default: ADDRESS_TYPES.join(','),
    help: "The order of a node's status address types tried when connecting to its kubelet.",
    apply: (c, v) => {
      const types = listFlag(v);
      const unknown = types.find((t) => !ADDRESS_TYPES.includes(t));
      if (unknown !== undefined)
        throw new Error(`invalid argument "${v}" for "--kubelet-preferred-address-types" flag: unknown address type ${JSON.stringify(unknown)}`);
      c.kubeletPreferredAddressTypes = types;
    },
  },
  {
    name: 'kubelet-port',
    group: 'serving',
    default: '10250',
    help: "The kubelet's port when a node's status.daemonEndpoints names none (deprecated in kube-apiserver, kept for the same meaning).",
    apply: (c, v) => {
      const port = Number(v);
      if (!/^\d+$/.test(v) || port > 65535) throw new Error(`invalid argument "${v}" for "--kubelet-port" flag: must be a port number`);
      c.kubeletPort = port;
    },
  },
];
