#!/usr/bin/env node
// Writes test/fixtures/managedfields/apply/generated.json: sequences of server-side applies (with
// and without force), merge-patch updates and status-subresource writes by several managers over
// a corpus of applied configurations per kind (ConfigMap, Deployment, Service, Pod, and SsaWidget,
// the CRD-shaped kind of test/fixtures/managedfields/crds/ with set, two-key list-map, atomic and
// granular maps, preserve-unknown-fields, int-or-string and embedded-resource fields, in two
// versions). `npm run gen:goldens` then has apimachinery's field manager (tools/goldens
// `managedfields`) record what kube makes of each; test/unit/fieldmanager-apply.test.ts replays them.
// Usage: node scripts/generate-managedfields-sequences.mjs
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const meta = (extra = {}) => ({ name: 'o', namespace: 'ns', ...extra });

const podSpec = (containers, extra = {}) => ({ containers, ...extra });
const deploy = (spec, m = {}) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta(m), spec });
const tmpl = (spec) => ({ metadata: { labels: { app: 'x' } }, spec });
const sel = { matchLabels: { app: 'x' } };
const widget = (spec, version = 'v1', m = {}) => ({ apiVersion: `ssa.capstan.example/${version}`, kind: 'SsaWidget', metadata: meta(m), spec });

/** Per kind: applied configurations, merge patches another manager writes, status writes, reset fields. */
const KINDS = {
  configmap: {
    configs: [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta({ labels: { x: 'y' } }), data: { a: '1', b: '2' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(), data: { a: '1' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta({ labels: { z: 'w' } }), data: { a: '9', c: '3' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta({ annotations: { n: 'm' }, finalizers: ['f/a'] }), data: { b: '2' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta({ labels: { x: 'y' }, finalizers: ['f/b', 'f/a'] }), binaryData: { k: 'AAE=' } },
    ],
    patches: [{ data: { a: 'patched', d: '4' } }, { metadata: { labels: { x: null, p: 'q' } }, data: { b: null } }],
  },
  deployment: {
    reset: [['status']],
    statusReset: [['spec'], ['metadata', 'labels']],
    configs: [
      deploy({ replicas: 2, selector: sel, template: tmpl(podSpec([{ name: 'c', image: 'nginx', ports: [{ containerPort: 80, protocol: 'TCP' }] }])) }),
      deploy({
        replicas: 3,
        selector: sel,
        template: tmpl(podSpec([{ name: 'c', image: 'nginx:2', env: [{ name: 'A', value: '1' }] }])),
      }),
      deploy({
        selector: sel,
        template: tmpl(
          podSpec([
            { name: 'c', image: 'nginx', ports: [{ containerPort: 80 }, { containerPort: 53, protocol: 'UDP' }] },
            { name: 'd', image: 'busybox', args: ['a', 'b'] },
          ]),
        ),
      }),
      deploy({ replicas: 5, selector: sel }),
      deploy(
        {
          selector: sel,
          minReadySeconds: 4,
          strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '50%', maxUnavailable: 1 } },
          template: tmpl(podSpec([{ name: 'c', image: 'nginx' }], { nodeSelector: { disk: 'ssd' }, tolerations: [{ key: 'k', operator: 'Exists' }] })),
        },
        { finalizers: ['f/a'], labels: { team: 'a' } },
      ),
      deploy({
        selector: sel,
        template: tmpl(podSpec([{ name: 'c', image: 'nginx', resources: { limits: { cpu: '500m', memory: '1Gi' } }, ports: [{ containerPort: 80 }] }])),
      }),
    ],
    patches: [{ spec: { replicas: 7, paused: true } }, { metadata: { labels: { team: 'b' } }, spec: { template: { metadata: { annotations: { r: '1' } } } } }],
    status: [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: meta({ labels: { st: 'x' } }),
        spec: { replicas: 9 },
        status: { replicas: 2, observedGeneration: 1 },
      },
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: meta(),
        status: { replicas: 3, conditions: [{ type: 'Available', status: 'True', reason: 'r' }] },
      },
    ],
    statusPatch: { status: { readyReplicas: 1, conditions: [{ type: 'Progressing', status: 'True' }] } },
  },
  service: {
    reset: [['status']],
    configs: [
      { apiVersion: 'v1', kind: 'Service', metadata: meta(), spec: { ports: [{ port: 80, targetPort: 8080 }], selector: { app: 'x' } } },
      { apiVersion: 'v1', kind: 'Service', metadata: meta(), spec: { ports: [{ port: 80, targetPort: 'http' }] } },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: meta(),
        spec: {
          ports: [
            { port: 80, protocol: 'UDP', name: 'u' },
            { port: 80, name: 't' },
          ],
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: meta({ labels: { a: 'b' } }),
        spec: { selector: { app: 'y' }, type: 'ClusterIP', sessionAffinity: 'None' },
      },
      { apiVersion: 'v1', kind: 'Service', metadata: meta(), spec: { externalIPs: ['1.2.3.4', '5.6.7.8'], ports: [{ port: 443, targetPort: 443 }] } },
    ],
    patches: [{ spec: { selector: { app: 'z' } } }, { spec: { ports: [{ port: 81, protocol: 'TCP' }] } }],
  },
  pod: {
    reset: [['status']],
    statusReset: [['spec'], ['metadata', 'deletionTimestamp'], ['metadata', 'ownerReferences']],
    configs: [
      { apiVersion: 'v1', kind: 'Pod', metadata: meta(), spec: podSpec([{ name: 'c', image: 'a' }]) },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: meta(),
        spec: podSpec(
          [
            { name: 'c', image: 'b' },
            { name: 'd', image: 'c' },
          ],
          { volumes: [{ name: 'v', emptyDir: {} }] },
        ),
      },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: meta(),
        spec: podSpec([{ name: 'c', image: 'a', env: [{ name: 'X', value: '1' }] }], { nodeSelector: { k: 'v' } }),
      },
      { apiVersion: 'v1', kind: 'Pod', metadata: meta({ labels: { a: 'b' } }), spec: podSpec([{ name: 'c', image: 'a', ports: [{ containerPort: 80 }] }]) },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: meta(),
        spec: podSpec([{ name: 'c', image: 'a' }], { tolerations: [{ key: 'a', operator: 'Exists' }], initContainers: [{ name: 'i', image: 'x' }] }),
      },
    ],
    patches: [{ spec: { activeDeadlineSeconds: 30 } }, { metadata: { labels: { a: 'c' }, annotations: { n: '1' } } }],
    status: [
      { apiVersion: 'v1', kind: 'Pod', metadata: meta(), status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } },
      { apiVersion: 'v1', kind: 'Pod', metadata: meta(), status: { message: 'm', conditions: [{ type: 'PodScheduled', status: 'True' }] } },
    ],
    statusPatch: { status: { reason: 'r', conditions: [{ type: 'Initialized', status: 'True' }] } },
  },
  widget: {
    reset: [['status']],
    statusReset: [['metadata'], ['spec']],
    configs: [
      widget({ replicas: 1, color: 'red', tags: ['a', 'b'], ports: [{ name: 'http', protocol: 'TCP', port: 80 }] }),
      widget({ tags: ['b', 'c'], ports: [{ name: 'http', protocol: 'UDP', port: 81 }], selector: { a: 'b' } }),
      widget({ extra: { x: { q: 1 }, z: [1] }, port: 80, settings: { a: '1' } }),
      widget({
        port: 'http',
        atomicList: ['x', 'y'],
        items: [{ key: 'k1', value: 'v' }],
        template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: { a: 'b' } }, spec: { q: 1 } },
      }),
      widget({ labels: { l: '1' }, selector: { c: 'd' }, extra: { x: { r: 2 } }, settings: { b: '2' } }, 'v1', { labels: { w: 'v' } }),
      widget(
        {
          ports: [
            { name: 'http', protocol: 'TCP', port: 8080 },
            { name: 'dns', protocol: 'UDP', port: 53 },
          ],
          items: [
            { key: 'k1', value: 'v2' },
            { key: 'k2', value: 'w' },
          ],
        },
        'v2',
      ),
    ],
    patches: [{ spec: { color: 'blue', tags: ['z'] } }, { spec: { extra: { x: { q: 2, s: 3 } }, selector: { e: 'f' } } }],
    status: [
      {
        apiVersion: 'ssa.capstan.example/v1',
        kind: 'SsaWidget',
        metadata: meta({ labels: { s: 't' } }),
        spec: { color: 'x' },
        status: { phase: 'Running', replicas: 3, conditions: [{ type: 'Ready', status: 'True' }] },
      },
      { apiVersion: 'ssa.capstan.example/v2', kind: 'SsaWidget', metadata: meta(), status: { conditions: [{ type: 'Synced', status: 'False' }] } },
    ],
    statusPatch: { status: { phase: 'Done', conditions: [{ type: 'Ready', status: 'False' }] } },
  },
};

const apply = (kind, manager, object, force = false, subresource = '') => ({
  op: 'apply',
  ...(force ? { force: true } : {}),
  manager,
  subresource,
  reset: (subresource === 'status' ? kind.statusReset : kind.reset) ?? [],
  object,
});
const patch = (kind, manager, p, subresource = '') => ({
  op: 'patch',
  manager,
  subresource,
  reset: (subresource === 'status' ? kind.statusReset : kind.reset) ?? [],
  patch: p,
});

const cases = [];
for (const [name, kind] of Object.entries(KINDS)) {
  const n = kind.configs.length;
  // One applier changes its configuration: fields it stops applying are removed, new ones owned.
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++)
      if (i !== j) cases.push({ name: `${name}-reapply-${i}-${j}`, steps: [apply(kind, 'a', kind.configs[i]), apply(kind, 'a', kind.configs[j])] });
  // Two appliers: shared and conflicting fields, force, ownership transfer, giving fields up.
  for (let i = 0; i < n; i++)
    for (let j = i + 1; j < n; j++)
      cases.push({
        name: `${name}-two-appliers-${i}-${j}`,
        steps: [
          apply(kind, 'a', kind.configs[i]),
          apply(kind, 'b', kind.configs[j]),
          apply(kind, 'b', kind.configs[j], true),
          apply(kind, 'a', kind.configs[i]),
          apply(kind, 'a', kind.configs[j]),
          apply(kind, 'b', kind.configs[i], true),
        ],
      });
  // An updater (merge patch) takes fields; the applier conflicts with it, forces, then drops them.
  for (let i = 0; i < n; i++)
    kind.patches.forEach((p, k) =>
      cases.push({
        name: `${name}-update-${i}-${k}`,
        steps: [
          apply(kind, 'a', kind.configs[i]),
          patch(kind, 'u', p),
          apply(kind, 'a', kind.configs[i]),
          apply(kind, 'a', kind.configs[i], true),
          patch(kind, 'u2', kind.patches[(k + 1) % kind.patches.length]),
          apply(kind, 'a', kind.configs[(i + 1) % n]),
        ],
      }),
    );
  // The status subresource: applied and patched under `status`, beside the spec's appliers.
  if (kind.status !== undefined)
    for (let i = 0; i < n; i++)
      kind.status.forEach((s, k) =>
        cases.push({
          name: `${name}-status-${i}-${k}`,
          steps: [
            apply(kind, 'a', kind.configs[i]),
            apply(kind, 's', s, false, 'status'),
            patch(kind, 'controller', kind.statusPatch, 'status'),
            apply(kind, 's', s, false, 'status'),
            apply(kind, 's', s, true, 'status'),
            apply(kind, 'a', kind.configs[(i + 1) % n]),
            apply(kind, 's', kind.status[(k + 1) % kind.status.length], false, 'status'),
          ],
        }),
      );
}

writeFileSync(join(root, 'test', 'fixtures', 'managedfields', 'apply', 'generated.json'), `${JSON.stringify({ cases }, null, 2)}\n`);
console.log(`${cases.length} sequences, ${cases.reduce((s, c) => s + c.steps.length, 0)} steps`);
