import { createHash } from 'node:crypto';
import { observeRedisCommand } from '../../metrics/metrics.js';
import { batchWritesThisTurn } from './write-batching.js';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Cluster, Redis } from 'ioredis';

/** A standalone/Sentinel client or a Cluster client: both route a script by its first key. */
export type RedisClient = Redis | Cluster;

/** One Lua script from `lua/`, read once; run with EVALSHA, falling back to EVAL once per connection. */
export interface LuaScript {
  readonly name: string;
  readonly source: string;
  readonly sha: string;
  readonly keyCount: number;
}

/** The scripts of the Redis backend, by operation. */
export interface StorageScripts {
  readonly create: LuaScript;
  readonly update: LuaScript;
  readonly delete: LuaScript;
  readonly list: LuaScript;
  readonly info: LuaScript;
  readonly advance: LuaScript;
}

const FILES = {
  create: 'create-5.lua',
  update: 'update-5.lua',
  delete: 'delete-5.lua',
  list: 'list-4.lua',
  info: 'info-2.lua',
  advance: 'advance-3.lua',
} as const;

/** The project's `lua/` folder, found by walking up from this module (src/ or dist/src/). */
function luaDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'lua');
    if (existsSync(join(candidate, FILES.create))) return candidate;
    dir = dirname(dir);
  }
  throw new Error('lua/ scripts not found next to the Capstan installation');
}

/** Replaces each `-- @include NAME` line with lua/lib/NAME, so scripts share helpers yet stay one EVAL each. */
async function inlineIncludes(dir: string, source: string): Promise<string> {
  const parts = source.split(/^-- @include ([\w.-]+)$/m);
  let out = parts[0];
  for (let i = 1; i < parts.length; i += 2) {
    out += await readFile(join(dir, 'lib', parts[i]), 'utf8');
    out += parts[i + 1] ?? '';
  }
  return out;
}

let cached: Promise<StorageScripts> | undefined;

/** Reads every script once per process; later calls share the result. */
export function loadScripts(): Promise<StorageScripts> {
  cached ??= (async () => {
    const dir = luaDir();
    const load = async (file: string): Promise<LuaScript> => {
      const source = await inlineIncludes(dir, await readFile(join(dir, file), 'utf8'));
      const keyCount = Number(/-(\d+)\.lua$/.exec(file)?.[1] ?? '0');
      return { name: file, source, sha: createHash('sha1').update(source).digest('hex'), keyCount };
    };
    return {
      create: await load(FILES.create),
      update: await load(FILES.update),
      delete: await load(FILES.delete),
      list: await load(FILES.list),
      info: await load(FILES.info),
      advance: await load(FILES.advance),
    };
  })();
  return cached;
}

function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}

/** Arguments of EVALSHA/EVAL for `script`. */
export function scriptArgs(script: LuaScript, keys: readonly string[], args: readonly (string | number)[]): (string | number)[] {
  if (keys.length !== script.keyCount) throw new Error(`${script.name} takes ${script.keyCount} keys, got ${keys.length}`);
  return [keys.length, ...keys, ...args];
}

/**
 * Runs `script` by SHA; when the server does not know it yet (new or restarted server, failover),
 * sends the source once with EVAL, which also caches it there.
 */
export async function runScript(client: RedisClient, script: LuaScript, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
  const rest = scriptArgs(script, keys, args);
  const started = performance.now();
  try {
    batchWritesThisTurn(client);
    const reply = await client.call('EVALSHA', [script.sha, ...rest]);
    observeRedisCommand(script.name, (performance.now() - started) / 1000);
    return reply;
  } catch (err) {
    if (!isNoScript(err)) {
      observeRedisCommand(script.name, (performance.now() - started) / 1000, err);
      throw err;
    }
    return client.call('EVAL', [script.source, ...rest]);
  }
}

/**
 * Runs a write `script` and then `WAIT replicas timeoutMs` in one pipeline, so WAIT reaches the
 * same node (and connection) that applied the write, also in a Cluster. Returns the script's reply
 * and how many replicas acknowledged.
 */
export async function runScriptAndWait(
  client: RedisClient,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
  replicas: number,
  timeoutMs: number,
): Promise<{ reply: unknown; acknowledged: number }> {
  const rest = scriptArgs(script, keys, args);
  for (const command of ['evalsha', 'eval'] as const) {
    const first = command === 'evalsha' ? script.sha : script.source;
    batchWritesThisTurn(client);
    const results = await client
      .pipeline([
        [command, first, ...rest],
        ['wait', replicas, timeoutMs],
      ])
      .exec();
    if (results === null) throw new Error('pipeline aborted');
    const [scriptResult, waitResult] = results;
    if (!scriptResult || !waitResult) throw new Error('pipeline returned too few replies');
    const [scriptErr, reply] = scriptResult;
    if (scriptErr) {
      if (command === 'evalsha' && isNoScript(scriptErr)) continue;
      throw scriptErr;
    }
    const [waitErr, acknowledged] = waitResult;
    if (waitErr) throw waitErr;
    return { reply, acknowledged: typeof acknowledged === 'number' ? acknowledged : Number(acknowledged) };
  }
  throw new Error(`${script.name} could not be loaded`);
}
