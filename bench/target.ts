/**
 * A target is one way of running the server under test: `memory` (embedded store), `redis`
 * (--storage=redis against a redis-server spawned here) or `redis-workers2` (the same with two
 * worker processes). Each scenario starts a fresh target and stops it afterwards. The `url` target
 * is a server the benchmark neither starts nor stops (see endpoint.ts).
 */
import type { BenchOptions, BuiltinTargetName, TargetName } from './options.js';
import { cpuMeter, type CpuMeter } from './proc-cpu.js';
import { spawnRedis, spawnServer, type RedisOptions, type RedisProcess, type ServerProcess } from './processes.js';
import { processTree, startRssSampler, type RssSampler } from './proc-memory.js';

/** `name` as a target the benchmark starts; throws for `url`, which it cannot start. */
export function builtinTarget(name: TargetName): BuiltinTargetName {
  if (name === 'url') throw new Error('this scenario needs a server the benchmark starts itself; it does not run against --url');
  return name;
}

export interface RunningTarget {
  readonly name: BuiltinTargetName;
  readonly server: ServerProcess;
  readonly redis: RedisProcess | undefined;
  /** RSS of the server's process tree, sampled every 50 ms. */
  readonly rss: RssSampler;
  /** CPU of the server's process tree (primary and workers) and of its redis-server. */
  readonly cpu: CpuMeter;
  /** Why the server is gone (exited, or killed for exceeding the memory ceiling); undefined while it runs. */
  deathReason(): string | undefined;
  /** Throws `deathReason()` when the server is gone. */
  assertAlive(): void;
  stop(): Promise<void>;
}

/** Server flags for a target (besides --port and --bind-address). */
export function targetArgs(name: BuiltinTargetName, redisUrl: string | undefined): string[] {
  switch (name) {
    case 'memory':
      return [];
    case 'redis':
      return ['--storage=redis', '--redis-url', redisUrl ?? ''];
    case 'redis-workers2':
      return ['--storage=redis', '--redis-url', redisUrl ?? '', '--workers', '2'];
  }
}

/** Starts Redis (with `redis` options) when the target needs it. */
export async function startBackend(name: BuiltinTargetName, redis: RedisOptions = {}): Promise<RedisProcess | undefined> {
  return name === 'memory' ? undefined : spawnRedis(redis);
}

/** Spawns the server for `name` against `redis` (when given) and explains start-up failures. */
export async function startTargetServer(
  name: BuiltinTargetName,
  redis: RedisProcess | undefined,
  nodeArgs: string[],
  pollMs = 5,
  extraArgs: string[] = [],
): Promise<ServerProcess> {
  try {
    return await spawnServer([...targetArgs(name, redis?.url), ...extraArgs], { pollMs, label: `target ${name}`, nodeArgs });
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    const hint = name === 'memory' ? '' : `\n(target ${name} needs the Redis storage backend in the server; it failed to start with it)`;
    throw new Error(`${msg}${hint}`);
  }
}

/**
 * Starts the backend and the server for `name` (with `extraArgs`, e.g. feature gates), with an RSS
 * sampler enforcing --max-server-rss-mb.
 */
export async function startTarget(name: BuiltinTargetName, options: BenchOptions, extraArgs: string[] = []): Promise<RunningTarget> {
  const redis = await startBackend(name);
  let server: ServerProcess;
  try {
    server = await startTargetServer(name, redis, options.serverNodeArgs, 5, [...extraArgs, ...options.serverArgs]);
  } catch (err) {
    await redis?.stop();
    throw err;
  }
  let killedFor: string | undefined;
  const limit = options.maxServerRssMb * 1024 * 1024;
  const rss = startRssSampler(server.pid, 50, limit, (bytes) => {
    killedFor = `server killed by the benchmark: RSS ${(bytes / 1048576).toFixed(0)} MiB exceeded --max-server-rss-mb ${options.maxServerRssMb}`;
    process.stderr.write(`  ${killedFor}\n`);
    server.kill();
  });
  const deathReason = (): string | undefined => {
    if (killedFor !== undefined) return killedFor;
    if (server.exited()) return `server ${server.exitDescription()} during the scenario; stderr tail:\n${server.stderrTail().slice(-2000)}`;
    return undefined;
  };
  return {
    name,
    server,
    redis,
    rss,
    cpu: cpuMeter(() => [...processTree(server.pid), ...(redis ? [redis.pid] : [])]),
    deathReason,
    assertAlive: () => {
      const reason = deathReason();
      if (reason !== undefined) throw new Error(reason);
    },
    stop: async () => {
      rss.stop();
      await server.stop();
      await redis?.stop();
    },
  };
}
