/**
 * The pure parts of CRD serving: kube's naming controller decisions (accepted names, conflict reasons
 * and messages, Established), condition transition times, kube's version priority, and the printer
 * column JSONPath subset with kube's cell typing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareKubeVersions } from '../../src/crd/crd-model.js';
import { computeNames, setCondition } from '../../src/crd/crd-status.js';
import { customResourcePrinter, evaluateJsonPath, parseJsonPath } from '../../src/strategy/printers/custom-columns.js';

function crd(names: Record<string, unknown>, accepted?: Record<string, unknown>): Record<string, unknown> {
  return { spec: { group: 'example.com', names }, status: accepted === undefined ? {} : { acceptedNames: accepted } };
}

test('names free in the group are accepted and the CRD is established', () => {
  const r = computeNames(crd({ plural: 'widgets', kind: 'Widget', shortNames: ['wg'], categories: ['all'] }), []);
  assert.deepEqual(r.names, { plural: 'widgets', singular: 'widgets', kind: 'Widget', listKind: 'WidgetList', shortNames: ['wg'], categories: ['all'] });
  assert.deepEqual(r.namesAccepted, { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' });
  assert.deepEqual(r.established, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' });
});

test('names another CRD accepted are refused; the last conflict names the reason', () => {
  const other = crd({}, { plural: 'widgets', singular: 'widget', shortNames: ['wg'], kind: 'Widget', listKind: 'WidgetList' });
  const plural = computeNames(crd({ plural: 'widgets', singular: 'thing', kind: 'Thing' }), [other]);
  assert.deepEqual([plural.namesAccepted.reason, plural.namesAccepted.message], ['PluralConflict', '"widgets" is already in use']);
  assert.equal(plural.names.plural, '');
  assert.equal(plural.names.kind, 'Thing');
  assert.deepEqual(plural.established, { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' });
  const short = computeNames(crd({ plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo', shortNames: ['wg', 'gz'] }), [other]);
  assert.deepEqual([short.namesAccepted.reason, short.namesAccepted.message], ['ShortNamesConflict', '"wg" is already in use']);
  assert.deepEqual(short.names.shortNames, []);
  const kind = computeNames(crd({ plural: 'gizmos', singular: 'gizmo', kind: 'Widget', listKind: 'GizmoList' }), [other]);
  assert.deepEqual([kind.namesAccepted.reason, kind.namesAccepted.message], ['KindConflict', '"Widget" is already in use']);
});

test('an established CRD stays established when a later name change conflicts', () => {
  const self = {
    ...crd({ plural: 'widgets', kind: 'Widget', shortNames: ['x'] }, { plural: 'widgets', singular: 'widgets', kind: 'Widget', listKind: 'WidgetList' }),
  };
  (self.status as Record<string, unknown>).conditions = [{ type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'm' }];
  const other = crd({}, { plural: 'xs', shortNames: ['x'], kind: 'X', listKind: 'XList' });
  const r = computeNames(self, [other]);
  assert.equal(r.namesAccepted.reason, 'ShortNamesConflict');
  assert.equal(r.established.status, 'True');
});

test('a condition keeps its transition time while its status holds', () => {
  const first = setCondition([], { type: 'A', status: 'True', reason: 'r', message: 'm' }, 't1');
  assert.deepEqual(first, [{ type: 'A', status: 'True', lastTransitionTime: 't1', reason: 'r', message: 'm' }]);
  const same = setCondition(first, { type: 'A', status: 'True', reason: 'r2', message: 'm2' }, 't2');
  assert.equal(same[0]?.lastTransitionTime, 't1');
  assert.equal(same[0]?.reason, 'r2');
  const flipped = setCondition(first, { type: 'A', status: 'False', reason: 'r', message: 'm' }, 't3');
  assert.equal(flipped[0]?.lastTransitionTime, 't3');
});

test('versions sort as kube sorts them: GA, beta, alpha, then others alphabetically', () => {
  assert.deepEqual(['v1alpha1', 'foo', 'v2beta1', 'v1', 'v2', 'v1beta2', 'v1beta1', 'bar', 'v10alpha3'].sort(compareKubeVersions), [
    'v2',
    'v1',
    'v2beta1',
    'v1beta2',
    'v1beta1',
    'v10alpha3',
    'v1alpha1',
    'bar',
    'foo',
  ]);
});

test('printer column JSONPaths: fields, indexes, wildcards, filters; unsupported paths read nothing', () => {
  const obj = {
    spec: { a: { b: 1 }, list: [{ n: 'x' }, { n: 'y' }] },
    status: {
      conditions: [
        { type: 'A', status: 'False' },
        { type: 'Ready', status: 'True' },
      ],
    },
  };
  const at = (path: string): unknown[] => {
    const steps = parseJsonPath(path);
    assert.ok(steps, path);
    return evaluateJsonPath(obj, steps);
  };
  assert.deepEqual(at('.spec.a.b'), [1]);
  assert.deepEqual(at('.spec.list[1].n'), ['y']);
  assert.deepEqual(at('.spec.list[*].n'), ['x', 'y']);
  assert.deepEqual(at('.status.conditions[?(@.type=="Ready")].status'), ['True']);
  assert.deepEqual(at('.spec.missing.x'), []);
  assert.equal(parseJsonPath('.spec..a'), undefined);
});

test('custom printer cells follow the column type as kube types them', () => {
  const printer = customResourcePrinter([
    { name: 'S', type: 'string', format: '', description: '', priority: 0, jsonPath: '.spec.n' },
    { name: 'I', type: 'integer', format: '', description: 'mine', priority: 1, jsonPath: '.spec.f' },
    { name: 'B', type: 'boolean', format: '', description: '', priority: 0, jsonPath: '.spec.n' },
    { name: 'D', type: 'date', format: '', description: '', priority: 0, jsonPath: '.spec.when' },
    { name: 'O', type: 'string', format: '', description: '', priority: 0, jsonPath: '.spec.obj' },
  ]);
  assert.deepEqual(
    printer.columns.map((c) => [c.name, c.description]),
    [
      ['Name', printer.columns[0]?.description],
      ['S', 'Custom resource definition column (in JSONPath format): .spec.n'],
      ['I', 'mine'],
      ['B', 'Custom resource definition column (in JSONPath format): .spec.n'],
      ['D', 'Custom resource definition column (in JSONPath format): .spec.when'],
      ['O', 'Custom resource definition column (in JSONPath format): .spec.obj'],
    ],
  );
  const now = Date.parse('2026-01-01T00:10:00Z');
  const row = printer.row({ metadata: { name: 'n' }, spec: { n: 5, f: 2.7, when: '2026-01-01T00:00:00Z', obj: { k: 'v' } } }, now);
  assert.deepEqual(row.cells, ['n', '5', 2, null, '10m', '{"k":"v"}']);
});
