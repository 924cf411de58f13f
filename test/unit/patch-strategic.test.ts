import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../src/api/errors.js';
import { applyPatch } from '../../src/patch/apply-patch.js';
import { applyStrategicMergePatch } from '../../src/patch/strategic-merge-patch.js';
import { schemaForDefinition, type SchemaNode } from '../../src/schema/openapi-schema.js';

function schema(name: string): SchemaNode {
  const s = schemaForDefinition(name);
  assert.ok(s, name);
  return s;
}

const deploymentSchema = schema('io.k8s.api.apps.v1.Deployment');
const podSchema = schema('io.k8s.api.core.v1.Pod');

function deployment(): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: { app: 'web' }, annotations: { a: '1' }, finalizers: ['f1', 'f2'] },
    spec: {
      replicas: 2,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'app',
              image: 'app:1',
              ports: [
                { containerPort: 80, protocol: 'TCP' },
                { containerPort: 443, protocol: 'TCP' },
              ],
              env: [
                { name: 'A', value: '1' },
                { name: 'B', value: '2' },
              ],
              args: ['--x'],
            },
            { name: 'sidecar', image: 'side:1' },
          ],
          volumes: [
            { name: 'data', emptyDir: {} },
            { name: 'cfg', configMap: { name: 'c' } },
          ],
          tolerations: [{ key: 'k1', operator: 'Exists' }],
        },
      },
    },
  };
}

type Json = Record<string, unknown>;
const at = (v: unknown, ...path: (string | number)[]): unknown => {
  let cur: unknown = v;
  for (const p of path) {
    if (typeof p === 'number') cur = Array.isArray(cur) ? cur[p] : undefined;
    else cur = typeof cur === 'object' && cur !== null && !Array.isArray(cur) ? (cur as Json)[p] : undefined;
  }
  return cur;
};
const podSpec = (v: unknown): unknown => at(v, 'spec', 'template', 'spec');
const names = (list: unknown): unknown[] => (Array.isArray(list) ? list.map((x) => at(x, 'name')) : []);

function smp(patch: unknown, original: unknown = deployment(), s: SchemaNode = deploymentSchema): unknown {
  return applyStrategicMergePatch(original, patch, s);
}

function expectError(fn: () => unknown, code: number, reason: string, message?: string | RegExp): void {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ApiError, String(e));
    assert.equal(e.code, code, e.message);
    assert.equal(e.reason, reason);
    if (typeof message === 'string') assert.equal(e.message, message);
    else if (message) assert.match(e.message, message);
    return;
  }
  assert.fail('expected an error');
}

const tmpl = (spec: Json): Json => ({ spec: { template: { spec } } });

describe('strategic merge patch: merge keys on real schemas', () => {
  const cases: { name: string; patch: unknown; check: (r: unknown) => void }[] = [
    {
      name: 'maps merge and null deletes (labels, annotations)',
      patch: { metadata: { labels: { tier: 'fe', app: null }, annotations: { b: '2' } } },
      check: (r) => {
        assert.deepEqual(at(r, 'metadata', 'labels'), { tier: 'fe' });
        assert.deepEqual(at(r, 'metadata', 'annotations'), { a: '1', b: '2' });
      },
    },
    {
      name: 'containers merge by name: changed element keeps its place and untouched fields',
      patch: tmpl({ containers: [{ name: 'sidecar', image: 'side:2' }] }),
      check: (r) => {
        assert.deepEqual(names(at(podSpec(r), 'containers')), ['app', 'sidecar']);
        assert.equal(at(podSpec(r), 'containers', 1, 'image'), 'side:2');
        assert.equal(at(podSpec(r), 'containers', 0, 'image'), 'app:1');
      },
    },
    {
      name: 'a new container without $setElementOrder goes before server-only ones (kube order rule)',
      patch: tmpl({ containers: [{ name: 'new', image: 'n:1' }] }),
      check: (r) => assert.deepEqual(names(at(podSpec(r), 'containers')), ['new', 'app', 'sidecar']),
    },
    {
      name: 'ports merge by containerPort',
      patch: tmpl({ containers: [{ name: 'app', ports: [{ containerPort: 443, name: 'https' }] }] }),
      check: (r) => {
        const ports = at(podSpec(r), 'containers', 0, 'ports');
        assert.deepEqual(ports, [
          { containerPort: 80, protocol: 'TCP' },
          { containerPort: 443, protocol: 'TCP', name: 'https' },
        ]);
      },
    },
    {
      name: 'env merges by name and $patch: delete removes an element',
      patch: tmpl({
        containers: [
          {
            name: 'app',
            env: [
              { name: 'B', value: '3' },
              { name: 'A', $patch: 'delete' },
            ],
          },
        ],
      }),
      check: (r) => assert.deepEqual(at(podSpec(r), 'containers', 0, 'env'), [{ name: 'B', value: '3' }]),
    },
    {
      name: 'volumes merge by name',
      patch: tmpl({ volumes: [{ name: 'cfg', configMap: { name: 'c2' } }] }),
      check: (r) =>
        assert.deepEqual(at(podSpec(r), 'volumes'), [
          { name: 'data', emptyDir: {} },
          { name: 'cfg', configMap: { name: 'c2' } },
        ]),
    },
    {
      name: 'tolerations (atomic) are replaced',
      patch: tmpl({ tolerations: [{ key: 'k2', operator: 'Exists' }] }),
      check: (r) => assert.deepEqual(at(podSpec(r), 'tolerations'), [{ key: 'k2', operator: 'Exists' }]),
    },
    {
      name: 'args (no strategy) are replaced',
      patch: tmpl({ containers: [{ name: 'app', args: ['--y'] }] }),
      check: (r) => assert.deepEqual(at(podSpec(r), 'containers', 0, 'args'), ['--y']),
    },
    {
      name: 'finalizers (merge, primitives) union with new items first and $deleteFromPrimitiveList',
      patch: { metadata: { finalizers: ['f3', 'f1'], '$deleteFromPrimitiveList/finalizers': ['f2'] } },
      check: (r) => assert.deepEqual(at(r, 'metadata', 'finalizers'), ['f3', 'f1']),
    },
    {
      name: '$patch: replace on a merge list replaces it',
      patch: tmpl({ containers: [{ name: 'only', image: 'o:1' }, { $patch: 'replace' }] }),
      check: (r) => assert.deepEqual(at(podSpec(r), 'containers'), [{ name: 'only', image: 'o:1' }]),
    },
    {
      name: '$patch: replace on a map replaces it',
      patch: { metadata: { labels: { $patch: 'replace', x: 'y' } } },
      check: (r) => assert.deepEqual(at(r, 'metadata', 'labels'), { x: 'y' }),
    },
    {
      name: '$patch: delete on a map empties it',
      patch: { spec: { strategy: { $patch: 'delete' } } },
      check: (r) => assert.deepEqual(at(r, 'spec', 'strategy'), {}),
    },
    {
      name: '$retainKeys clears keys not listed (deployment strategy)',
      patch: { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } },
      check: (r) => assert.deepEqual(at(r, 'spec', 'strategy'), { type: 'Recreate' }),
    },
    {
      name: 'scalars replace, new fields are added, unknown fields merge like merge patch',
      patch: { spec: { replicas: 5, paused: true }, extra: { a: { b: 1 } } },
      check: (r) => {
        assert.equal(at(r, 'spec', 'replicas'), 5);
        assert.equal(at(r, 'spec', 'paused'), true);
        assert.deepEqual(at(r, 'extra'), { a: { b: 1 } });
      },
    },
    {
      name: 'null patch changes nothing',
      patch: null,
      check: (r) => assert.deepEqual(r, deployment()),
    },
  ];
  for (const c of cases) test(c.name, () => c.check(smp(c.patch)));
});

describe('strategic merge patch: $setElementOrder (kubectl apply patches)', () => {
  test('reorders and adds containers as the parallel list says', () => {
    const r = smp(
      tmpl({
        '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'new' }, { name: 'app' }],
        containers: [{ name: 'new', image: 'n:1' }],
      }),
    );
    assert.deepEqual(names(at(podSpec(r), 'containers')), ['sidecar', 'new', 'app']);
  });

  test('appends a new container when listed last', () => {
    const r = smp(
      tmpl({
        '$setElementOrder/containers': [{ name: 'app' }, { name: 'sidecar' }, { name: 'new' }],
        containers: [{ name: 'new', image: 'n:1' }],
      }),
    );
    assert.deepEqual(names(at(podSpec(r), 'containers')), ['app', 'sidecar', 'new']);
  });

  test('pod spec.containers[].ports with $setElementOrder and a deletion', () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: podSpec(deployment()) };
    const r = smp(
      {
        spec: {
          '$setElementOrder/containers': [{ name: 'app' }, { name: 'sidecar' }],
          containers: [
            {
              name: 'app',
              '$setElementOrder/ports': [{ containerPort: 8080 }, { containerPort: 80 }],
              ports: [
                { containerPort: 8080, protocol: 'TCP' },
                { containerPort: 443, $patch: 'delete' },
              ],
            },
          ],
        },
      },
      pod,
      podSchema,
    );
    assert.deepEqual(at(r, 'spec', 'containers', 0, 'ports'), [
      { containerPort: 8080, protocol: 'TCP' },
      { containerPort: 80, protocol: 'TCP' },
    ]);
    assert.deepEqual(names(at(r, 'spec', 'containers')), ['app', 'sidecar']);
  });

  test('primitive merge list ordered by $setElementOrder', () => {
    const r = smp({ metadata: { '$setElementOrder/finalizers': ['f2', 'f3', 'f1'], finalizers: ['f3'] } });
    assert.deepEqual(at(r, 'metadata', 'finalizers'), ['f2', 'f3', 'f1']);
  });

  test('volumes with $retainKeys inside elements (kubectl apply on merge,retainKeys lists)', () => {
    const r = smp(
      tmpl({
        '$setElementOrder/volumes': [{ name: 'data' }, { name: 'cfg' }],
        volumes: [{ $retainKeys: ['name', 'secret'], name: 'cfg', secret: { secretName: 's' } }],
      }),
    );
    assert.deepEqual(at(podSpec(r), 'volumes'), [
      { name: 'data', emptyDir: {} },
      { name: 'cfg', secret: { secretName: 's' } },
    ]);
  });
});

describe('strategic merge patch: errors as kube-apiserver reports them', () => {
  test('patch that is not an object is 400', () => {
    expectError(() => smp([1]), 400, 'BadRequest', 'json: cannot unmarshal array into Go value of type map[string]interface {}');
  });
  test('malformed directives are 400', () => {
    expectError(() => smp({ spec: { strategy: { $retainKeys: 'type' } } }), 400, 'BadRequest', 'invalid patch format of retainKeys');
    expectError(
      () => smp({ spec: { strategy: { $retainKeys: ['type'], rollingUpdate: null, extra: 1 } } }),
      400,
      'BadRequest',
      'invalid patch format of retainKeys',
    );
    expectError(() => smp({ metadata: { $deleteFromPrimitiveListfinalizers: ['f1'] } }), 400, 'BadRequest', 'invalid patch format of primitive list');
    expectError(() => smp({ metadata: { $setElementOrderfinalizers: ['f1'] } }), 400, 'BadRequest', 'invalid patch format of setElementOrder list');
  });
  test('lists of lists are 422', () => {
    const original = { ...deployment(), metadata: { name: 'web', finalizers: [] } };
    expectError(() => smp({ metadata: { finalizers: [['x']] } }, original), 422, 'Invalid', 'the server rejected our request due to an error in our request');
    expectError(() => smp({ metadata: { finalizers: [['x']] } }), 400, 'BadRequest', 'list element types are not identical: [[f1 f2] [[x]]]');
  });
  test('missing merge key, bad $patch values and order mismatches are 400 with the library text (kube answers 500)', () => {
    expectError(() => smp(tmpl({ containers: [{ image: 'x' }] })), 400, 'BadRequest', 'map: map[image:x] does not contain declared merge key: name');
    expectError(() => smp({ metadata: { labels: { $patch: 'bogus' } } }), 400, 'BadRequest', 'unknown patch type: bogus in map: map[$patch:bogus]');
    expectError(() => smp(tmpl({ containers: [{ name: 'app', $patch: 'merge' }] })), 400, 'BadRequest', 'merging lists cannot yet be specified in the patch');
    expectError(
      () =>
        smp(
          tmpl({
            '$setElementOrder/containers': [{ name: 'app' }, { name: 'sidecar' }],
            containers: [
              { name: 'sidecar', image: 'x' },
              { name: 'app', image: 'y' },
            ],
          }),
        ),
      400,
      'BadRequest',
      /^The order in patch list:\n/,
    );
  });
});

describe('strategic merge patch: purity', () => {
  test('inputs are not mutated and the result shares nothing with the patch', () => {
    const original = deployment();
    const patch = tmpl({
      '$setElementOrder/containers': [{ name: 'app' }, { name: 'sidecar' }],
      containers: [{ name: 'app', env: [{ name: 'C', value: '3' }], resources: { limits: { cpu: '1' } } }],
    });
    const patchCopy = JSON.parse(JSON.stringify(patch)) as unknown;
    const r = smp(patch, original);
    assert.deepEqual(original, deployment());
    assert.deepEqual(patch, patchCopy);
    const limits = at(podSpec(r), 'containers', 0, 'resources', 'limits') as Json;
    limits.cpu = '2';
    assert.deepEqual(patch, patchCopy);
  });
});

describe('applyPatch dispatch', () => {
  test('dispatches on the media type, ignoring a charset parameter', () => {
    const r = applyPatch('application/merge-patch+json; charset=utf-8', { a: 1 }, { b: 2 }, undefined);
    assert.deepEqual(r, { a: 1, b: 2 });
    const j = applyPatch('application/json-patch+json', { a: 1 }, [{ op: 'remove', path: '/a' }], undefined);
    assert.deepEqual(j, {});
    const s = applyPatch('application/strategic-merge-patch+json', deployment(), { spec: { replicas: 9 } }, deploymentSchema);
    assert.equal(at(s, 'spec', 'replicas'), 9);
  });

  test('raw bytes are accepted', () => {
    const r = applyPatch('application/merge-patch+json', { a: 1 }, Buffer.from('{"a":null}'), undefined);
    assert.deepEqual(r, {});
    expectError(() => applyPatch('application/merge-patch+json', { a: 1 }, Buffer.from('{nope'), undefined), 400, 'BadRequest', 'Invalid JSON Patch');
  });

  test('strategic merge patch on a type without schema is 415 with kube message', () => {
    expectError(
      () => applyPatch('application/strategic-merge-patch+json', {}, {}, undefined),
      415,
      'UnsupportedMediaType',
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    );
  });

  test('unknown media type is 415 listing the built-in types', () => {
    expectError(
      () => applyPatch('application/json', {}, {}, deploymentSchema),
      415,
      'UnsupportedMediaType',
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml',
    );
  });
});
