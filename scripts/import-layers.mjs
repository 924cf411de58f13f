/**
 * The layers of src/, lowest first: a folder may import its own layer and the layers below it,
 * never one above. eslint.config.js turns this list into no-restricted-imports rules per folder,
 * test/unit/import-layers.test.ts checks that every folder is placed and that no import circle
 * exists, and docs/architecture.md draws it. A new folder goes into the lowest layer its imports allow.
 */
export const LAYERS = [
  { name: 'ground', folders: ['logging', 'api', 'config'], says: 'API types and errors, server configuration, the logger' },
  { name: 'facts', folders: ['metrics', 'schema', 'certificates'], says: 'generated API facts, metrics, X.509 signing' },
  { name: 'encoding', folders: ['codec', 'catalog', 'tls'], says: 'media types and Go-exact values, the served types, serving certificates' },
  { name: 'storage', folders: ['storage'], says: 'memory and Redis backends, one Storage contract' },
  {
    name: 'checks',
    folders: ['webhook', 'validation', 'selectors', 'patch', 'quota', 'nodes', 'services', 'proxy', 'kubelet'],
    says: 'validation, selectors, patches, quota, service allocation, the webhook client, HTTP proxying, the kubelet client',
  },
  { name: 'cel', folders: ['cel'], says: 'CEL: parse, type check, cost, evaluate' },
  { name: 'crd', folders: ['crd'], says: 'CustomResourceDefinitions: their validation and the schemas of custom resources' },
  { name: 'conversion', folders: ['conversion'], says: 'version conversion of built-in kinds and custom resources' },
  { name: 'strategy', folders: ['strategy'], says: "each kind's facts: defaults, validation, printers, field selectors, store hooks" },
  { name: 'policy', folders: ['fieldmanager', 'auth', 'audit', 'openapi'], says: 'managedFields, authentication and authorization, audit, OpenAPI' },
  { name: 'admission', folders: ['admission'], says: 'the admission chain and its plugins' },
  { name: 'verbs', folders: ['rest', 'apply'], says: 'the store verbs over storage, server-side apply' },
  { name: 'serving', folders: ['watch', 'discovery', 'health', 'flowcontrol'], says: 'watch streams, discovery, health checks, flow control' },
  {
    name: 'controllers',
    folders: ['controllers', 'namespace', 'aggregator'],
    says: 'in-server controllers, the aggregation layer (APIService proxy and availability)',
  },
  { name: 'handlers', folders: ['handlers'], says: 'HTTP handlers: one request scope per request' },
  { name: 'server', folders: ['server'], says: 'the Express app, components started and stopped as a list' },
  { name: 'process', folders: ['cli', 'cluster', 'envtest'], says: 'command line, cluster primary and workers' },
];

/** The folders above `folder`'s layer, which it may not import. */
export function foldersAbove(folder) {
  const at = LAYERS.findIndex((l) => l.folders.includes(folder));
  return LAYERS.slice(at + 1).flatMap((l) => l.folders);
}
