import type { FlagSpec } from './server-config.js';
import { boolFlag } from './flag-values.js';

/** The aggregator flags, with kube-apiserver's names and defaults. */
export const AGGREGATOR_FLAGS: FlagSpec[] = [
  {
    name: 'proxy-client-cert-file',
    group: 'aggregation',
    default: '',
    help: 'Client certificate used to prove the identity of the aggregator when it proxies requests to extension API servers (its CA must be the --requestheader-client-ca-file). Default with HTTPS and no --requestheader-client-ca-file: a front-proxy CA and client certificate generated in --cert-dir.',
    apply: (c, v) => {
      c.proxyClientCertFile = v;
    },
  },
  {
    name: 'proxy-client-key-file',
    group: 'aggregation',
    default: '',
    help: 'Private key of --proxy-client-cert-file.',
    apply: (c, v) => {
      c.proxyClientKeyFile = v;
    },
  },
  {
    name: 'enable-aggregator-routing',
    group: 'aggregation',
    default: 'false',
    help: "Turns on aggregator routing requests to endpoints IP rather than cluster IP (Capstan reaches a cluster IP through the Service's endpoints either way; see docs/aggregation.md).",
    apply: (c, v) => {
      c.enableAggregatorRouting = boolFlag('enable-aggregator-routing', v);
    },
  },
  {
    name: 'aggregator-reject-forwarding-redirect',
    group: 'aggregation',
    default: 'true',
    help: 'Aggregator reject forwarding redirect response back to client.',
    apply: (c, v) => {
      c.aggregatorRejectForwardingRedirect = boolFlag('aggregator-reject-forwarding-redirect', v);
    },
  },
];
