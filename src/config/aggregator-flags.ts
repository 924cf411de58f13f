import type { FlagSpec } from './server-config.js';

/** How the aggregation layer reaches extension API servers (kube-apiserver's aggregator flags). */
export interface AggregatorConfig {
  /**
   * Client certificate (and key) the aggregator presents to extension API servers, which verify it
   * against the `requestheader-client-ca-file` of the `extension-apiserver-authentication` ConfigMap.
   * Both '' (with HTTPS): Capstan generates a front-proxy CA and this certificate in `--cert-dir`.
   */
  proxyClientCertFile: string;
  proxyClientKeyFile: string;
  /** Route to a Service's endpoints (EndpointSlices) instead of its cluster IP. */
  enableAggregatorRouting: boolean;
  /** Answer 502 instead of passing on a redirect an extension API server sends. */
  aggregatorRejectForwardingRedirect: boolean;
}

function bool(name: string, v: string): boolean {
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new Error(`invalid argument "${v}" for "--${name}" flag: must be true or false`);
}

/** The aggregator flags, with kube-apiserver's names and defaults. */
export const AGGREGATOR_FLAGS: FlagSpec[] = [
  {
    name: 'proxy-client-cert-file',
    default: '',
    help: 'Client certificate used to prove the identity of the aggregator when it proxies requests to extension API servers (its CA must be the --requestheader-client-ca-file). Default with HTTPS and no --requestheader-client-ca-file: a front-proxy CA and client certificate generated in --cert-dir.',
    apply: (c, v) => {
      c.proxyClientCertFile = v;
    },
  },
  {
    name: 'proxy-client-key-file',
    default: '',
    help: 'Private key of --proxy-client-cert-file.',
    apply: (c, v) => {
      c.proxyClientKeyFile = v;
    },
  },
  {
    name: 'enable-aggregator-routing',
    default: 'false',
    help: "Turns on aggregator routing requests to endpoints IP rather than cluster IP (Capstan reaches a cluster IP through the Service's endpoints either way; see docs/aggregation.md).",
    apply: (c, v) => {
      c.enableAggregatorRouting = bool('enable-aggregator-routing', v);
    },
  },
  {
    name: 'aggregator-reject-forwarding-redirect',
    default: 'true',
    help: 'Aggregator reject forwarding redirect response back to client.',
    apply: (c, v) => {
      c.aggregatorRejectForwardingRedirect = bool('aggregator-reject-forwarding-redirect', v);
    },
  },
];
