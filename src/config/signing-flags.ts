import { parseDuration } from './duration.js';
import type { FlagSpec } from './server-config.js';

/** The signing flags, with kube-controller-manager's names and defaults. */
export const SIGNING_FLAGS: FlagSpec[] = [
  {
    name: 'cluster-signing-cert-file',
    group: 'controllers',
    default: '',
    help: 'PEM CA certificate the certificatesigningrequest-signing-controller signs approved CSRs of the kubernetes.io signers with. Default: the --cert-dir CA (which client certificates are always verified against).',
    apply: (c, v) => {
      c.clusterSigningCertFile = v;
    },
  },
  {
    name: 'cluster-signing-key-file',
    group: 'controllers',
    default: '',
    help: 'PEM private key (RSA or ECDSA) of --cluster-signing-cert-file.',
    apply: (c, v) => {
      c.clusterSigningKeyFile = v;
    },
  },
  {
    name: 'cluster-signing-duration',
    group: 'controllers',
    default: '8760h0m0s',
    help: 'The max length of duration signed certificates will be given. Individual CSRs may request shorter certs by setting spec.expirationSeconds.',
    apply: (c, v) => {
      try {
        c.clusterSigningDurationMs = parseDuration(v);
      } catch (err) {
        throw new Error(`invalid argument "${v}" for "--cluster-signing-duration" flag: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
  },
];
