import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** Runs the helm binary at `helm` with its caches under the checkout's .tmp/ (not the user's home); returns stdout. */
export async function runHelm(helm: string, args: string[]): Promise<string> {
  const { stdout } = await execFileAsync(helm, args, {
    maxBuffer: 16 * 1024 * 1024,
    env: {
      ...process.env,
      HELM_CACHE_HOME: join(ROOT, '.tmp', 'helm-cache'),
      HELM_CONFIG_HOME: join(ROOT, '.tmp', 'helm-config'),
      HELM_DATA_HOME: join(ROOT, '.tmp', 'helm-data'),
    },
  });
  return stdout;
}
