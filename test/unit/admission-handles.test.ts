/**
 * The admission chain calls a plugin only for the writes it says it handles (operation, resource,
 * subresource), in the chain's order, in both phases and in the reinvoked mutating pass; a plugin
 * without `handles` sees every write. Built-in plugins keep acting on their own kinds through a
 * real chain: a pod create gets ServiceAccount's and DefaultTolerationSeconds' defaults, a
 * ConfigMap create is left as it was.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Admission, type AdmissionAttributes, type AdmissionPlugin } from '../../src/admission/admission.js';
import { admissionChain } from '../../src/admission/admission-chain.js';
import type { ResourceInfo } from '../../src/api/resource-info.js';
import { MemoryStorage } from '../../src/storage/memory-storage.js';

function info(group: string, resource: string, kind: string): ResourceInfo {
  return {
    group,
    version: 'v1',
    resource,
    kind,
    namespaced: true,
    verbs: [],
    singularName: '',
    shortNames: [],
    categories: [],
    definition: '',
    subresources: {},
  };
}

const PODS = info('', 'pods', 'Pod');
const CONFIGMAPS = info('', 'configmaps', 'ConfigMap');

function attrs(
  resourceInfo: ResourceInfo,
  operation: AdmissionAttributes['operation'],
  subresource = '',
  object: Record<string, unknown> = {},
): AdmissionAttributes {
  return { operation, info: resourceInfo, namespace: 'default', name: 'x', subresource, object, oldObject: undefined, dryRun: false };
}

/** A plugin that records its calls, handling only pod creates when `podCreatesOnly`. */
function recorder(name: string, calls: string[], asked: string[], podCreatesOnly: boolean, reinvoke = false): AdmissionPlugin {
  return {
    name,
    ...(podCreatesOnly
      ? {
          handles: (operation: AdmissionAttributes['operation'], i: ResourceInfo, subresource: string) => {
            asked.push(`${name} ${operation} ${i.resource}/${subresource}`);
            return operation === 'CREATE' && i.resource === 'pods' && subresource === '';
          },
        }
      : {}),
    admit: (a) => {
      calls.push(`${name} admit ${a.info.resource}`);
      if (reinvoke && a.reinvocation?.isReinvoke === false) a.reinvocation.shouldReinvoke = true;
      return Promise.resolve();
    },
    validate: (a) => {
      calls.push(`${name} validate ${a.info.resource}`);
      return Promise.resolve();
    },
  };
}

test('a plugin is called only for the writes it handles, asked once per kind of write', async () => {
  const calls: string[] = [];
  const asked: string[] = [];
  const chain = new Admission([recorder('pods-only', calls, asked, true), recorder('every', calls, asked, false)]);
  for (let i = 0; i < 3; i++) await chain.run(attrs(CONFIGMAPS, 'CREATE'));
  assert.deepEqual(calls, [
    'every admit configmaps',
    'every validate configmaps',
    'every admit configmaps',
    'every validate configmaps',
    'every admit configmaps',
    'every validate configmaps',
  ]);
  calls.length = 0;
  await chain.run(attrs(PODS, 'CREATE'));
  await chain.run(attrs(PODS, 'UPDATE'));
  await chain.run(attrs(PODS, 'CREATE', 'binding'));
  await chain.run(attrs(PODS, 'CREATE'));
  assert.deepEqual(calls, [
    'pods-only admit pods',
    'every admit pods',
    'pods-only validate pods',
    'every validate pods',
    'every admit pods',
    'every validate pods',
    'every admit pods',
    'every validate pods',
    'pods-only admit pods',
    'every admit pods',
    'pods-only validate pods',
    'every validate pods',
  ]);
  assert.deepEqual(asked, ['pods-only CREATE configmaps/', 'pods-only CREATE pods/', 'pods-only UPDATE pods/', 'pods-only CREATE pods/binding']);
});

test('the reinvoked mutating pass runs the handling plugins again, in order', async () => {
  const calls: string[] = [];
  const chain = new Admission([recorder('pods-only', calls, [], true), recorder('asks-again', calls, [], false, true)]);
  await chain.admit(attrs(CONFIGMAPS, 'CREATE'));
  assert.deepEqual(calls, ['asks-again admit configmaps', 'asks-again admit configmaps']);
  calls.length = 0;
  await chain.admit(attrs(PODS, 'CREATE'));
  assert.deepEqual(calls, ['pods-only admit pods', 'asks-again admit pods', 'pods-only admit pods', 'asks-again admit pods']);
});

test("kube's default plugins still default a pod and leave a ConfigMap alone", async () => {
  const storage = new MemoryStorage({ historyMs: 60_000 });
  await storage.create('serviceaccounts', 'default/default', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: 'default' } });
  const chain = admissionChain([], [], { storage });
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'i' }] } };
  await chain.admit(attrs(PODS, 'CREATE', '', pod));
  const spec = pod.spec as Record<string, unknown>;
  assert.equal(spec.serviceAccountName, 'default', 'ServiceAccount named the default account');
  assert.deepEqual(
    (spec.tolerations as Array<Record<string, unknown>>).map((t) => t.key),
    ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'],
    'DefaultTolerationSeconds added its tolerations',
  );
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' }, data: { a: 'b' } };
  const before = JSON.stringify(configMap);
  await chain.admit(attrs(CONFIGMAPS, 'CREATE', '', configMap));
  assert.equal(JSON.stringify(configMap), before);
});
