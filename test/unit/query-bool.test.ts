import assert from 'node:assert/strict';
import { test } from 'node:test';
import { queryBool, queryOptionalBool } from '../../src/api/request-options.js';

test('query booleans read as kube-apiserver converts them: only "0" and "false" (any case) are false', () => {
  const read = (q: string): boolean => queryBool(new URLSearchParams(q), 'watch');
  for (const q of ['watch=0', 'watch=false', 'watch=FALSE', 'watch=False', 'watch=0&watch=1', '']) assert.equal(read(q), false, q);
  // Go's strconv.ParseBool would read "f" and "F" as false; kube's query conversion does not.
  for (const q of ['watch=1', 'watch=true', 'watch=', 'watch=f', 'watch=F', 'watch=no', 'watch=1&watch=0']) assert.equal(read(q), true, q);
  assert.equal(queryOptionalBool(new URLSearchParams('a=1'), 'orphanDependents'), undefined);
  assert.equal(queryOptionalBool(new URLSearchParams('orphanDependents=f'), 'orphanDependents'), true);
});
