import { boolFlag } from './flag-values.js';
import type { FlagSpec } from './server-config.js';

/**
 * kube-apiserver flags that Capstan accepts so that tools which launch kube-apiserver (envtest,
 * scripts written for a real control plane) can launch Capstan unchanged. None of them changes
 * what Capstan does: the etcd flags describe a store Capstan does not use (it serves from its
 * embedded store or Redis, chosen by --storage), and --allow-privileged=false is not enforced.
 * Values are still checked where kube checks them, so a typo fails as it would with kube.
 */

/** A flag taking any string, accepted and ignored. */
function ignored(name: string, help: string): FlagSpec {
  return { name, group: 'compatibility', default: '', help, apply: () => undefined };
}

const ETCD = 'Ignored: Capstan keeps objects in its embedded store or Redis (--storage), not etcd.';

export const COMPAT_FLAGS: FlagSpec[] = [
  {
    name: 'allow-privileged',
    group: 'compatibility',
    default: 'true',
    help: "Accepted for kube-apiserver compatibility (envtest passes true). Capstan admits privileged containers whatever the value: it does not enforce kube's --allow-privileged=false.",
    apply: (_c, v) => {
      boolFlag('allow-privileged', v);
    },
  },
  ignored('etcd-servers', `Comma-separated etcd URLs. ${ETCD}`),
  ignored('etcd-prefix', `Key prefix of objects in etcd. ${ETCD}`),
  ignored('etcd-cafile', `CA bundle of etcd's serving certificate. ${ETCD}`),
  ignored('etcd-certfile', `Client certificate for etcd. ${ETCD}`),
  ignored('etcd-keyfile', `Client key for etcd. ${ETCD}`),
  ignored('etcd-servers-overrides', `Per-resource etcd servers. ${ETCD}`),
  ignored('etcd-compaction-interval', `Interval of etcd compaction requests. ${ETCD}`),
  ignored('etcd-count-metric-poll-period', `How often object counts are read from etcd. ${ETCD}`),
  ignored('etcd-db-metric-poll-interval', `How often the etcd database size is read. ${ETCD}`),
  ignored('etcd-healthcheck-timeout', `Timeout of the etcd health check. ${ETCD}`),
  ignored('etcd-readycheck-timeout', `Timeout of the etcd readiness check. ${ETCD}`),
  {
    name: 'storage-backend',
    group: 'compatibility',
    default: '',
    help: "Accepted for kube-apiserver compatibility: only etcd3 (kube's one backend) is allowed, and it has no effect (see --storage).",
    apply: (_c, v) => {
      if (v !== '' && v !== 'etcd3') throw new Error(`invalid argument "${v}" for "--storage-backend" flag: must be etcd3`);
    },
  },
];
