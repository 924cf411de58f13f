/**
 * A Pod's QoS class against kube 1.36's: test/golden/defaulting/ records the status kube's pod strategy
 * gives each corpus Pod created with `prepareForCreate` (qos.ComputePodQOS over the defaulted spec,
 * pod-level resources included), and Capstan's computation over the same defaulted spec must agree.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { podQosClass } from '../../src/validation/pod-qos.js';

const GOLDEN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'golden', 'defaulting', 'v1.Pod.json');

interface GoldenFile {
  cases: Array<{ name: string; defaulted: { spec?: unknown; status?: { qosClass?: string } } }>;
}

test("pods get kube's QoS class", () => {
  const golden = JSON.parse(readFileSync(GOLDEN, 'utf8')) as GoldenFile;
  const withStatus = golden.cases.filter((c) => typeof c.defaulted.status?.qosClass === 'string');
  assert.ok(withStatus.length >= 10, `${withStatus.length} cases`);
  for (const c of withStatus) assert.equal(podQosClass(c.defaulted), c.defaulted.status?.qosClass, c.name);
});
