/**
 * The custom resource schema modules in process: the compiled validator is cached per key and a new
 * key (the CRD changed) compiles the new schema; pruning keeps what preserve-unknown-fields,
 * additionalProperties and embedded resources keep; defaulting follows kube's nullable rules;
 * ratcheting correlates map lists by key and not atomic lists.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compiledValidator, validateBySchema } from '../../src/crd/cr-schema-validation.js';
import { pruneCustomResource } from '../../src/crd/cr-pruning.js';
import { defaultCustomResource } from '../../src/crd/cr-defaulting.js';
import { isRatcheted } from '../../src/crd/cr-ratcheting.js';

const schema = (max: number) => ({ type: 'object', properties: { spec: { type: 'object', properties: { n: { type: 'integer', maximum: max } } } } });

describe('compiled validators', () => {
  test('one compile per key; a new key (the CRD changed) validates by the new schema', () => {
    const a = compiledValidator('uid-1/5/v1', schema(3));
    assert.equal(compiledValidator('uid-1/5/v1', schema(100)), a);
    const obj = { spec: { n: 5 } };
    assert.equal(validateBySchema(obj, 'uid-1/5/v1', schema(3)).length, 1);
    assert.deepEqual(validateBySchema(obj, 'uid-1/6/v1', schema(10)), []);
  });
});

describe('pruning', () => {
  test('keeps preserved, additionalProperties and embedded resource fields; prunes embedded metadata to ObjectMeta', () => {
    const s = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            map: { type: 'object', additionalProperties: { type: 'object', properties: { a: { type: 'string' } } } },
            emb: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: {} },
          },
        },
      },
    };
    const obj = {
      apiVersion: 'g/v1',
      kind: 'K',
      metadata: { name: 'x', junk: 1 },
      spec: {
        free: { deep: { x: 1 } },
        map: { k: { a: 'v', b: 2 } },
        emb: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', bad: true }, spec: {} },
        gone: 1,
      },
    };
    assert.deepEqual(pruneCustomResource(obj, s), ['metadata.junk', 'spec.emb.metadata.bad', 'spec.emb.spec', 'spec.gone', 'spec.map.k.b']);
    assert.deepEqual(obj, {
      apiVersion: 'g/v1',
      kind: 'K',
      metadata: { name: 'x' },
      spec: { free: { deep: { x: 1 } }, map: { k: { a: 'v' } }, emb: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } } },
    });
  });
});

describe('defaulting', () => {
  test('absent and non-nullable null take the default; nullable null stays; nulls without default go', () => {
    const s = {
      type: 'object',
      properties: {
        a: { type: 'string', default: 'x' },
        b: { type: 'string', default: 'y' },
        c: { type: 'string', nullable: true, default: 'z' },
        d: { type: 'string' },
        e: { type: 'object', default: {}, properties: { f: { type: 'integer', default: 1 } } },
      },
    };
    const obj: Record<string, unknown> = { b: null, c: null, d: null };
    defaultCustomResource(obj, s);
    assert.deepEqual(obj, { a: 'x', b: 'y', c: null, e: { f: 1 } });
  });
});

describe('ratcheting', () => {
  const s = {
    type: 'object',
    properties: {
      m: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['k'],
        items: { type: 'object', properties: { v: { type: 'integer' } } },
      },
      l: { type: 'array', items: { type: 'integer' } },
    },
  };
  test('map list items correlate by key; atomic list items do not', () => {
    const old = {
      m: [
        { k: 'a', v: 9 },
        { k: 'b', v: 1 },
      ],
      l: [9, 1],
    };
    const next = {
      m: [
        { k: 'b', v: 2 },
        { k: 'a', v: 9 },
      ],
      l: [9, 2],
    };
    assert.equal(isRatcheted(s, next, old, '/m/1/v'), true);
    assert.equal(isRatcheted(s, next, old, '/m/0/v'), false);
    assert.equal(isRatcheted(s, next, old, '/l/0'), false);
  });
});
