/**
 * Capstan as a compared server: `--authorization-mode=RBAC`, a static token file whose admin is in
 * system:masters (as kube-up.sh's), served over HTTPS from a fresh certificate directory; the Redis
 * targets get a redis-server with an append-only file fsynced on every write (etcd fsyncs its log).
 * The server is started twice: the first start creates the certificates (its time is "start to
 * ready, fresh certificate directory"), the second, measured one reuses them. Every process is
 * stopped and every file removed by `stop()`.
 */
import type { BuiltinTargetName } from '../options.js';
import { writeAccessFiles } from '../access-identities.js';
import { cpuMeter } from '../proc-cpu.js';
import { processTree, treeMemory } from '../proc-memory.js';
import type { ServerProcess } from '../processes.js';
import { startBackend, startTargetServer } from '../target.js';
import type { LiveTarget } from './live-target.js';

const DESCRIPTIONS: Record<BuiltinTargetName, string> = {
  memory: 'Capstan, embedded memory store',
  redis: 'Capstan, Redis (AOF, appendfsync always), 1 worker',
  'redis-workers2': 'Capstan, Redis (AOF, appendfsync always), 2 workers',
};

/**
 * Starts Capstan target `name` for a comparison; `nodeArgs` are extra node flags (e.g. --cpu-prof),
 * `extraArgs` extra Capstan flags after the comparison's own.
 */
export async function startCapstanTarget(name: BuiltinTargetName, nodeArgs: string[], extraArgs: string[] = []): Promise<LiveTarget> {
  const files = writeAccessFiles();
  const redis = await startBackend(name, { fsyncEveryWrite: true }).catch((err: unknown) => {
    files.remove();
    throw err;
  });
  let server: ServerProcess | undefined;
  try {
    const first = await startTargetServer(name, redis, nodeArgs, 5, [...files.serverArgs, ...extraArgs]);
    const readyFreshMs = first.readyMs;
    await first.stop();
    server = await startTargetServer(name, redis, nodeArgs, 5, [...files.serverArgs, ...extraArgs]);
    const running = server;
    const secureUrl = running.secureUrl;
    if (secureUrl === undefined) throw new Error(`capstan (${name}) announced no HTTPS URL`);
    const pids = (): number[] => [...processTree(running.pid), ...(redis ? [redis.pid] : [])];
    const gone = (): string | undefined =>
      running.exited() ? `capstan (${name}) ${running.exitDescription()}; stderr tail:\n${running.stderrTail().slice(-2000)}` : undefined;
    return {
      label: name,
      description: DESCRIPTIONS[name],
      url: secureUrl,
      access: { token: files.adminToken, insecureTls: true },
      cpu: cpuMeter(pids),
      pids,
      cpuScope: `capstan primary and workers${redis ? ' + redis-server' : ''}`,
      startedHere: true,
      readyFreshMs,
      readyExistingCertsMs: running.readyMs,
      startupNote: undefined,
      rssBytes: () => treeMemory(pids()).rss,
      assertAlive: () => {
        const why = gone();
        if (why !== undefined) throw new Error(why);
      },
      exited: () => running.exited(),
      stop: async () => {
        await running.stop();
        await redis?.stop();
        files.remove();
      },
    };
  } catch (err) {
    await server?.stop();
    await redis?.stop();
    files.remove();
    throw err;
  }
}
