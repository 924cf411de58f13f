/**
 * The fuzz suite at test size (issue 8): generated hostile requests of every class against the
 * embedded store and Redis with two workers. Each answer is a 4xx Status (or kube's plain-text
 * 400/404), never a 5xx, within the bound; no process crashes or restarts; canaries are
 * byte-identical afterwards. Seeded: CAPSTAN_FUZZ_SEED and CAPSTAN_FUZZ_COUNT change the run; a
 * failure names the seed and request index, and `npm run fuzz -- --seed S --count N` replays it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeRequest, prepare, runFuzz } from './runner.js';
import { TARGETS } from './targets.js';

const SEED = Number(process.env.CAPSTAN_FUZZ_SEED ?? 20261124);
const COUNT = Number(process.env.CAPSTAN_FUZZ_COUNT ?? 400);

for (const [name, start] of Object.entries(TARGETS)) {
  test(`fuzz: ${COUNT} hostile requests (seed ${SEED}) against ${name}: no 5xx, no crash, no hang, canaries intact`, { timeout: 600_000 }, async (t) => {
    const target = await start();
    try {
      const { layout, snapshot } = await prepare(target.url, 'test');
      const summary = await runFuzz({ url: target.url, seed: SEED, count: COUNT }, layout, snapshot);
      t.diagnostic(`classes ${JSON.stringify(summary.byKind)}`);
      t.diagnostic(`max ${summary.maxMs} ms, p99 ${summary.p99Ms} ms`);
      const problems = summary.problems.slice(0, 10).map((o) => `${o.problem}\n    ${describeRequest(SEED, o.index, layout)}`);
      assert.deepEqual(problems, [], `${summary.problems.length} answers broke the rules`);
      assert.deepEqual(summary.canaryDiffs, [], 'canaries are byte-identical');
      assert.deepEqual(target.health(), [], 'every process still runs, none restarted');
      assert.equal(summary.count, COUNT);
      // Every class was exercised.
      assert.ok(Object.keys(summary.byKind).length >= 12, JSON.stringify(Object.keys(summary.byKind)));
    } finally {
      await target.stop();
    }
  });
}
