import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../src/api/errors.js';
import { applyJsonPatch } from '../../src/patch/json-patch.js';
import { applyMergePatch } from '../../src/patch/merge-patch.js';
import { patchErrorDetail } from '../../src/patch/patch-errors.js';

const base = () => ({
  metadata: { name: 'd', labels: { app: 'web', tier: 'fe' } },
  spec: { replicas: 1, list: ['a', 'b', 'c'], nested: { x: 1 } },
});

function expectApiError(fn: () => unknown, code: number, reason: string, message?: string | RegExp): ApiError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ApiError, `expected ApiError, got ${String(e)}`);
    assert.equal(e.code, code);
    assert.equal(e.reason, reason);
    if (typeof message === 'string') assert.equal(e.message, message);
    else if (message) assert.match(e.message, message);
    return e;
  }
  assert.fail('expected an error');
}

describe('JSON patch', () => {
  type Doc = { metadata: { name: string; labels: Record<string, unknown> }; spec: Record<string, unknown> };
  const cases: { name: string; ops: unknown; check: (r: Doc) => void }[] = [
    { name: 'add member', ops: [{ op: 'add', path: '/metadata/labels/x', value: 'y' }], check: (r) => assert.equal(r.metadata.labels.x, 'y') },
    {
      name: 'add array element at index',
      ops: [{ op: 'add', path: '/spec/list/1', value: 'z' }],
      check: (r) => assert.deepEqual(r.spec.list, ['a', 'z', 'b', 'c']),
    },
    {
      name: 'add array "-" appends',
      ops: [{ op: 'add', path: '/spec/list/-', value: 'z' }],
      check: (r) => assert.deepEqual(r.spec.list, ['a', 'b', 'c', 'z']),
    },
    {
      name: 'add at index == length appends',
      ops: [{ op: 'add', path: '/spec/list/3', value: 'z' }],
      check: (r) => assert.deepEqual(r.spec.list, ['a', 'b', 'c', 'z']),
    },
    { name: 'negative index counts from end', ops: [{ op: 'remove', path: '/spec/list/-1' }], check: (r) => assert.deepEqual(r.spec.list, ['a', 'b']) },
    { name: 'remove member', ops: [{ op: 'remove', path: '/metadata/labels/tier' }], check: (r) => assert.deepEqual(r.metadata.labels, { app: 'web' }) },
    { name: 'replace member', ops: [{ op: 'replace', path: '/spec/replicas', value: 3 }], check: (r) => assert.equal(r.spec.replicas, 3) },
    {
      name: 'replace of a missing member adds it (v4 quirk)',
      ops: [{ op: 'replace', path: '/spec/paused', value: true }],
      check: (r) => assert.equal(r.spec.paused, true),
    },
    {
      name: 'move',
      ops: [{ op: 'move', from: '/spec/nested/x', path: '/spec/moved' }],
      check: (r) => {
        assert.equal(r.spec.moved, 1);
        assert.deepEqual(r.spec.nested, {});
      },
    },
    { name: 'copy', ops: [{ op: 'copy', from: '/spec/nested', path: '/spec/copied' }], check: (r) => assert.deepEqual(r.spec.copied, { x: 1 }) },
    {
      name: 'test then replace',
      ops: [
        { op: 'test', path: '/metadata/labels/app', value: 'web' },
        { op: 'replace', path: '/metadata/labels/app', value: 'api' },
      ],
      check: (r) => assert.equal(r.metadata.labels.app, 'api'),
    },
    {
      name: 'test of a missing member with null value passes',
      ops: [{ op: 'test', path: '/metadata/labels/none', value: null }],
      check: (r) => assert.equal(r.metadata.name, 'd'),
    },
    {
      name: 'escaped keys ~1 and ~0',
      ops: [{ op: 'add', path: '/metadata/labels/a~1b~0c', value: 'v' }],
      check: (r) => assert.equal(r.metadata.labels['a/b~c'], 'v'),
    },
    { name: 'null body is an empty patch', ops: null, check: (r) => assert.deepEqual(r, base()) },
  ];
  for (const c of cases) {
    test(c.name, () => c.check(applyJsonPatch(base(), c.ops) as Doc));
  }

  test('body that is not a list is 400 with the Go decoder message', () => {
    expectApiError(() => applyJsonPatch(base(), { op: 'add' }), 400, 'BadRequest', 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
    expectApiError(() => applyJsonPatch(base(), [1]), 400, 'BadRequest', 'json: cannot unmarshal number into Go value of type jsonpatch.Operation');
    expectApiError(
      () => applyJsonPatch(base(), { op: 'add' }, { strictDecoding: true }),
      400,
      'BadRequest',
      'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp',
    );
  });

  const failures: { name: string; ops: unknown; detail: string }[] = [
    { name: 'failed test', ops: [{ op: 'test', path: '/spec/replicas', value: 2 }], detail: 'testing value /spec/replicas failed: test failed' },
    {
      name: 'remove missing member',
      ops: [{ op: 'remove', path: '/metadata/labels/none' }],
      detail: "error in remove for path: '/metadata/labels/none': Unable to remove nonexistent key: none: missing value",
    },
    {
      name: 'missing parent',
      ops: [{ op: 'add', path: '/spec/none/x', value: 1 }],
      detail: 'add operation does not apply: doc is missing path: "/spec/none/x": missing value',
    },
    {
      name: 'index out of range',
      ops: [{ op: 'add', path: '/spec/list/9', value: 1 }],
      detail: "error in add for path: '/spec/list/9': Unable to access invalid index: 9: invalid index referenced",
    },
    { name: 'unknown op', ops: [{ op: 'frobnicate', path: '/x' }], detail: 'Unexpected kind: frobnicate' },
    {
      name: 'replace array index out of range',
      ops: [{ op: 'replace', path: '/spec/list/5', value: 1 }],
      detail: 'replace operation does not apply: doc is missing key: /spec/list/5: missing value',
    },
  ];
  for (const f of failures) {
    test(`422 on ${f.name}`, () => {
      const err = expectApiError(() => applyJsonPatch(base(), f.ops), 422, 'Invalid', 'the server rejected our request due to an error in our request');
      assert.equal(patchErrorDetail(err), f.detail);
    });
  }

  test('a failing op leaves no partial result and inputs untouched', () => {
    const orig = base();
    const ops = [
      { op: 'add', path: '/spec/obj', value: { a: 1 } },
      { op: 'add', path: '/spec/obj/b', value: 2 },
    ];
    const snapshotOps = JSON.parse(JSON.stringify(ops)) as unknown;
    const out = applyJsonPatch(orig, ops) as { spec: { obj: unknown } };
    assert.deepEqual(out.spec.obj, { a: 1, b: 2 });
    assert.deepEqual(orig, base());
    assert.deepEqual(ops, snapshotOps);
  });

  test('more than 10000 operations is 413', () => {
    const ops = Array.from({ length: 10001 }, () => ({ op: 'test', path: '/spec/replicas', value: 1 }));
    expectApiError(
      () => applyJsonPatch(base(), ops),
      413,
      'RequestEntityTooLarge',
      'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001',
    );
  });
});

describe('JSON merge patch', () => {
  const cases: { name: string; patch: unknown; expected: unknown }[] = [
    {
      name: 'null deletes, objects merge',
      patch: { metadata: { labels: { tier: null, new: 'x' } } },
      expected: { metadata: { name: 'd', labels: { app: 'web', new: 'x' } }, spec: base().spec },
    },
    { name: 'arrays replace', patch: { spec: { list: ['z'] } }, expected: { ...base(), spec: { ...base().spec, list: ['z'] } } },
    {
      name: 'new object member has nested nulls pruned',
      patch: { spec: { added: { a: null, b: 1, arr: [1, null, 2] } } },
      expected: { ...base(), spec: { ...base().spec, added: { b: 1, arr: [1, 2] } } },
    },
    { name: 'scalar replaces object', patch: { spec: { nested: 5 } }, expected: { ...base(), spec: { ...base().spec, nested: 5 } } },
    { name: 'deleting an absent key is a no-op', patch: { spec: { absent: null } }, expected: base() },
  ];
  for (const c of cases) {
    test(c.name, () => assert.deepEqual(applyMergePatch(base(), c.patch), c.expected));
  }

  test('null or scalar patch is 400 Invalid JSON Patch', () => {
    expectApiError(() => applyMergePatch(base(), null), 400, 'BadRequest', 'Invalid JSON Patch');
    expectApiError(() => applyMergePatch(base(), 'x'), 400, 'BadRequest', 'Invalid JSON Patch');
    expectApiError(
      () => applyMergePatch(base(), [1], { strictDecoding: true }),
      400,
      'BadRequest',
      'error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}',
    );
  });

  test('inputs are not mutated and the result shares nothing with them', () => {
    const orig = base();
    const patch = { spec: { nested: { y: { deep: 1 } } } };
    const out = applyMergePatch(orig, patch) as { spec: { nested: { y: { deep: number } } } };
    out.spec.nested.y.deep = 99;
    assert.deepEqual(orig, base());
    assert.deepEqual(patch, { spec: { nested: { y: { deep: 1 } } } });
  });

  test('__proto__ keys become own data, never the prototype', () => {
    const patch = JSON.parse('{"metadata":{"labels":{"__proto__":{"polluted":"yes"}}}}') as unknown;
    const out = applyMergePatch(base(), patch) as { metadata: { labels: Record<string, unknown> } };
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.ok(Object.prototype.hasOwnProperty.call(out.metadata.labels, '__proto__'));
  });
});
