import type { ServerConfig } from '../cli/flags.js';
import type { Storage } from './storage.js';

/** Opens the Redis backend configured by the command line. */
export async function openRedisStorage(config: ServerConfig): Promise<Storage> {
  void config;
  throw new Error('--storage=redis is not available in this build yet');
}
