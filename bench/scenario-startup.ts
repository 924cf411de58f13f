/**
 * startup: spawn to first `/readyz` 200, polled every 5 ms; median of several starts. Also the first
 * protobuf GET half a second after ready, as a client-go program's first request finds the server
 * (envtest's arrives tens of milliseconds after its health check).
 */
import { metric } from './metrics.js';
import { processTree, SETTLE_SECONDS, settledRss, treeMemory } from './proc-memory.js';
import { median } from './stats.js';
import { builtinTarget, startBackend, startTargetServer } from './target.js';
import { sleep, type Scenario } from './scenario.js';

export const startupScenario: Scenario = {
  name: 'startup',
  title: 'startup: process spawn -> first /readyz 200 (poll every 5 ms)',
  async run(name, options) {
    const target = builtinTarget(name);
    const redis = await startBackend(target);
    const ready: number[] = [];
    const serving: number[] = [];
    const firstProtobufGet: number[] = [];
    let idleRss = Number.NaN;
    let settledIdleRss = Number.NaN;
    try {
      for (let i = 0; i < options.startups; i++) {
        const server = await startTargetServer(target, redis, options.serverNodeArgs, 5);
        try {
          ready.push(server.readyMs);
          serving.push(server.servingMs);
          await sleep(500);
          firstProtobufGet.push(await timedProtobufGet(server.url));
          if (i === options.startups - 1) {
            await sleep(1000);
            idleRss = treeMemory(processTree(server.pid)).rss;
            settledIdleRss = await settledRss(() => treeMemory(processTree(server.pid)).rss);
          }
        } finally {
          await server.stop();
        }
      }
    } finally {
      await redis?.stop();
    }
    return {
      metrics: [
        metric('spawn -> /readyz 200, median', median(ready), 'ms', { goal: { op: '<', value: 500 } }),
        metric('spawn -> /readyz 200, min', Math.min(...ready), 'ms'),
        metric('spawn -> /readyz 200, max', Math.max(...ready), 'ms'),
        metric('spawn -> "serving" log, median', median(serving), 'ms'),
        metric('first protobuf GET 0.5 s after ready, median', median(firstProtobufGet), 'ms'),
        metric('idle RSS 1 s after ready', idleRss, 'bytes'),
        metric(`idle RSS ${SETTLE_SECONDS + 1} s after ready`, settledIdleRss, 'bytes'),
      ],
      notes: [`${options.startups} starts`],
    };
  },
};

/** Milliseconds for one GET of the default Namespace in protobuf, as client-go asks for it. */
async function timedProtobufGet(url: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${url}/api/v1/namespaces/default`, { headers: { accept: 'application/vnd.kubernetes.protobuf, application/json' } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`protobuf GET of the default namespace: HTTP ${res.status}`);
  if (!(res.headers.get('content-type') ?? '').startsWith('application/vnd.kubernetes.protobuf'))
    throw new Error('the default namespace was not served in protobuf');
  return performance.now() - started;
}
