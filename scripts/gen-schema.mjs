#!/usr/bin/env node
// Generates the schema facts the server reads at run time (schema/*.json) from the Kubernetes API
// facts in a k8s-api folder (default ../shared/k8s-api). The server never reads that folder itself:
// run this script when the facts change and commit its output.
//
//   node scripts/gen-schema.mjs [K8S_API_DIR]
import { readFileSync, writeFileSync, copyFileSync, mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = process.argv[2] ?? join(root, '..', 'shared', 'k8s-api');
const out = join(root, 'schema');
mkdirSync(out, { recursive: true });

const openapi = JSON.parse(readFileSync(join(src, 'openapi-v2.json'), 'utf8'));

/**
 * The facts' OpenAPI document lost every property *named* `description` when descriptions were
 * stripped (PriorityClass.description, CRD printer columns' and JSONSchemaProps' descriptions). The
 * protobuf descriptor kept them: each message with a string field `description` whose definition
 * lacks it gets it back, properties kept in the document's alphabetical order.
 */
function restoreDescriptionFields(doc) {
  const proto = JSON.parse(readFileSync(join(src, 'protobuf.json'), 'utf8'));
  const restored = [];
  const walk = (node, path) => {
    if (node.fields?.description?.type === 'string') {
      // k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.X -> io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.X
      const name = 'io.k8s.' + path.replace(/^k8s\.io\./, '').replace(/_/g, '-');
      const def = doc.definitions[name];
      if (def?.properties !== undefined && def.properties.description === undefined) {
        def.properties = Object.fromEntries(Object.entries({ ...def.properties, description: { type: 'string' } }).sort(([a], [b]) => (a < b ? -1 : 1)));
        restored.push(name);
      }
    }
    for (const [k, v] of Object.entries(node.nested ?? {})) walk(v, path === '' ? k : `${path}.${k}`);
  };
  walk(proto, '');
  console.log(`openapi-v2.json: restored description on ${restored.length} definitions`);
  return doc;
}

// Discovery facts that the OpenAPI document does not carry (kube-apiserver's REST storage sets them).
const SHORT_NAMES = {
  'componentstatuses': ['cs'], 'configmaps': ['cm'], 'endpoints': ['ep'], 'events': ['ev'],
  'limitranges': ['limits'], 'namespaces': ['ns'], 'nodes': ['no'], 'persistentvolumeclaims': ['pvc'],
  'persistentvolumes': ['pv'], 'pods': ['po'], 'replicationcontrollers': ['rc'],
  'resourcequotas': ['quota'], 'serviceaccounts': ['sa'], 'services': ['svc'],
  'apiextensions.k8s.io/customresourcedefinitions': ['crd', 'crds'],
  'apps/daemonsets': ['ds'], 'apps/deployments': ['deploy'], 'apps/replicasets': ['rs'],
  'apps/statefulsets': ['sts'], 'autoscaling/horizontalpodautoscalers': ['hpa'],
  'batch/cronjobs': ['cj'], 'certificates.k8s.io/certificatesigningrequests': ['csr'],
  'events.k8s.io/events': ['ev'], 'networking.k8s.io/ingresses': ['ing'],
  'networking.k8s.io/networkpolicies': ['netpol'], 'policy/poddisruptionbudgets': ['pdb'],
  'scheduling.k8s.io/priorityclasses': ['pc'], 'storage.k8s.io/storageclasses': ['sc'],
};
const CATEGORY_ALL = new Set([
  'pods', 'services', 'replicationcontrollers', 'apps/daemonsets', 'apps/deployments',
  'apps/replicasets', 'apps/statefulsets', 'autoscaling/horizontalpodautoscalers', 'batch/cronjobs',
  'batch/jobs',
]);
const CATEGORY_API_EXTENSIONS = new Set([
  'apiextensions.k8s.io/customresourcedefinitions', 'apiregistration.k8s.io/apiservices',
  'admissionregistration.k8s.io/mutatingwebhookconfigurations',
  'admissionregistration.k8s.io/validatingwebhookconfigurations',
  'admissionregistration.k8s.io/validatingadmissionpolicies',
  'admissionregistration.k8s.io/validatingadmissionpolicybindings',
  'admissionregistration.k8s.io/mutatingadmissionpolicies',
  'admissionregistration.k8s.io/mutatingadmissionpolicybindings',
]);

const CONNECT_KINDS = {
  'pods/attach': 'PodAttachOptions', 'pods/exec': 'PodExecOptions', 'pods/portforward': 'PodPortForwardOptions',
  'pods/proxy': 'PodProxyOptions', 'nodes/proxy': 'NodeProxyOptions', 'services/proxy': 'ServiceProxyOptions',
};

const ACTION_TO_VERB = {
  get: 'get', list: 'list', post: 'create', put: 'update', patch: 'patch', delete: 'delete',
  deletecollection: 'deletecollection', connect: 'connect',
};

/** @type {Map<string, any>} key group/version/resource */
const resources = new Map();
/** @type {Map<string, Set<string>>} group -> versions */
const groups = new Map();

const pathRe = /^\/(?:api|apis\/([^/]+))\/([^/]+)\/(watch\/)?(?:namespaces\/\{namespace\}\/)?([^/{]+)(?:\/\{name\}(?:\/([^{]+?))?)?(\/\{path\})?\/?$/;

for (const [path, item] of Object.entries(openapi.paths)) {
  const m = pathRe.exec(path);
  if (!m) continue;
  const [, group = '', version, watchPrefix, resource, subresourceRaw, proxyPath] = m;
  if (proxyPath) continue;
  const namespacedPath = path.includes('/namespaces/{namespace}/');
  const isNamedPath = path.includes('{name}');
  if (!groups.has(group)) groups.set(group, new Set());
  groups.get(group).add(version);
  const key = `${group}/${version}/${resource}`;
  for (const [method, op] of Object.entries(item)) {
    if (method === 'parameters' || !op['x-kubernetes-action']) continue;
    const action = op['x-kubernetes-action'];
    const gvk = op['x-kubernetes-group-version-kind'] ?? {};
    let r = resources.get(key);
    if (!r) {
      r = { group, version, resource, kind: '', namespaced: false, verbs: new Set(), subresources: {} };
      resources.set(key, r);
    }
    if (subresourceRaw) {
      const sub = subresourceRaw.replace(/\/$/, '');
      const s = (r.subresources[sub] ??= { verbs: new Set(), kind: gvk.kind ?? '', group: gvk.group ?? '', version: gvk.version ?? '' });
      if (action === 'connect') {
        // Connect subresources map HTTP methods to verbs and use their own options kinds (kube's discovery).
        s.verbs.add({ get: 'get', post: 'create', put: 'update', patch: 'patch', delete: 'delete' }[method] ?? 'get');
        s.kind = CONNECT_KINDS[`${resource}/${sub}`] ?? s.kind;
      }
      else s.verbs.add(ACTION_TO_VERB[action] ?? action);
      if (namespacedPath) r.namespaced = true;
      continue;
    }
    if (watchPrefix) {
      if (action === 'watch' || action === 'watchlist') r.verbs.add('watch');
      continue;
    }
    if (action === 'list' && !namespacedPath && r.kind === '' && !isNamedPath) {
      // "/api/v1/pods" lists across namespaces; the namespaced path decides scope below.
    }
    r.verbs.add(ACTION_TO_VERB[action] ?? action);
    if (gvk.kind && !r.kind) r.kind = gvk.kind;
    if (namespacedPath) r.namespaced = true;
  }
}

// Definition name per group/version/kind, for schema lookups (patch strategies, validation).
const definitionByGvk = {};
for (const [name, def] of Object.entries(openapi.definitions)) {
  for (const gvk of def['x-kubernetes-group-version-kind'] ?? []) {
    const k = `${gvk.group}/${gvk.version}/${gvk.kind}`;
    if (!(k in definitionByGvk) || name.startsWith('io.k8s.api.')) definitionByGvk[k] = name;
  }
}

// kube-apiserver orders versions: GA before beta before alpha, higher numbers first.
function versionPriority(v) {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
  if (!m) return [3, 0, 0];
  const stage = m[2] === undefined ? 0 : m[2] === 'beta' ? 1 : 2;
  return [stage, -Number(m[1]), -Number(m[3] ?? 0)];
}
function compareVersions(a, b) {
  const pa = versionPriority(a), pb = versionPriority(b);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i] - pb[i];
  return a.localeCompare(b);
}

const resourceList = [...resources.values()]
  .filter((r) => r.kind !== '' || Object.keys(r.subresources).length > 0)
  .map((r) => {
    const gr = r.group ? `${r.group}/${r.resource}` : r.resource;
    const categories = [];
    if (CATEGORY_ALL.has(gr)) categories.push('all');
    if (CATEGORY_API_EXTENSIONS.has(gr)) categories.push('api-extensions');
    const verbOrder = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
    return {
      group: r.group,
      version: r.version,
      resource: r.resource,
      kind: r.kind,
      namespaced: r.namespaced,
      verbs: verbOrder.filter((v) => r.verbs.has(v)),
      singularName: r.kind.toLowerCase(),
      shortNames: SHORT_NAMES[gr] ?? [],
      categories,
      definition: definitionByGvk[`${r.group}/${r.version}/${r.kind}`] ?? '',
      subresources: Object.fromEntries(Object.entries(r.subresources).sort().map(([name, s]) => [name, {
        kind: s.kind, group: s.group, version: s.version,
        verbs: verbOrder.filter((v) => s.verbs.has(v)),
      }])),
    };
  })
  .sort((a, b) => a.group.localeCompare(b.group) || compareVersions(a.version, b.version) || a.resource.localeCompare(b.resource));

// Group order as kube-apiserver's discovery lists them: core first, then the built-in order.
const GROUP_ORDER = [
  '', 'apiregistration.k8s.io', 'apps', 'events.k8s.io', 'authentication.k8s.io', 'authorization.k8s.io',
  'autoscaling', 'batch', 'certificates.k8s.io', 'networking.k8s.io', 'policy', 'rbac.authorization.k8s.io',
  'storage.k8s.io', 'admissionregistration.k8s.io', 'apiextensions.k8s.io', 'scheduling.k8s.io',
  'coordination.k8s.io', 'node.k8s.io', 'discovery.k8s.io', 'resource.k8s.io', 'flowcontrol.apiserver.k8s.io',
  'internal.apiserver.k8s.io', 'storagemigration.k8s.io',
];
const groupList = [...groups.entries()]
  .filter(([g, vs]) => resourceList.some((r) => r.group === g && vs.has(r.version)))
  .map(([name, vs]) => ({
    name,
    versions: [...vs].filter((v) => resourceList.some((r) => r.group === name && r.version === v)).sort(compareVersions),
  }))
  .sort((a, b) => {
    const ia = GROUP_ORDER.indexOf(a.name), ib = GROUP_ORDER.indexOf(b.name);
    return (ia < 0 ? 999 : ia) - (ib < 0 ? 999 : ib) || a.name.localeCompare(b.name);
  });

writeFileSync(join(out, 'resources.json'), JSON.stringify({ groups: groupList, resources: resourceList }, null, 1) + '\n');
for (const f of ['protobuf.json', 'openapi-v2-protobuf.json']) copyFileSync(join(src, f), join(out, f));
const described = restoreDescriptionFields(openapi);
writeFileSync(join(out, 'openapi-v2.json'), JSON.stringify(described));
// The definitions alone, for the server's type checks and protobuf plans: a fifth of the document,
// parsed in a fifth of the time on a process's first decode (src/schema/openapi-schema.ts).
writeFileSync(join(out, 'openapi-v2-definitions.json'), JSON.stringify({ definitions: described.definitions }));
console.log(`schema/: ${groupList.length} groups, ${resourceList.length} resources`);
