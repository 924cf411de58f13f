import { chmodSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, usage } from './flags.js';
import { ETCD_STAND_IN_USAGE } from '../envtest/etcd-usage.js';

/**
 * `capstan envtest-assets DIR [FLAGS...]`: writes a directory that controller-runtime's envtest
 * uses in place of its downloaded binaries (`KUBEBUILDER_ASSETS=DIR go test ./...`):
 * - `kube-apiserver`: runs this Capstan (same node, same build) with FLAGS and then the flags
 *   envtest passes, on the embedded store unless FLAGS say otherwise;
 * - `etcd`: a stand-in that answers envtest's health check and exits on SIGTERM (Capstan does not
 *   use etcd; see src/envtest/etcd-stand-in.ts);
 * - `kubectl`: a link to the kubectl on PATH, when there is one (envtest needs it only for
 *   `AuthenticatedUser.Kubectl().Run`).
 * FLAGS are checked now, so a bad flag fails here rather than inside a test run.
 *
 * envtest runs `kube-apiserver --help` and `etcd --help` before starting each (CheckFlag reads the
 * flags they list). Each script prints that text itself, written into it here by the same build, so
 * that check costs no Node start (about 0.2 s of envtest's Start on a quiet machine).
 */

export const ENVTEST_ASSETS_USAGE = `Usage: capstan envtest-assets DIR [CAPSTAN_FLAGS...]

Writes DIR/kube-apiserver (this Capstan, with CAPSTAN_FLAGS before the flags envtest passes),
DIR/etcd (a stand-in answering envtest's health check) and DIR/kubectl (a link to kubectl on PATH,
if any). Then: KUBEBUILDER_ASSETS=DIR go test ./...
`;

/** A word for /bin/sh, single-quoted. */
function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Ends the help text's here-document; never a line of a help text (checked). */
const HELP_END = 'CAPSTAN_HELP_END';

/**
 * Writes an executable /bin/sh script that runs `words` with its own arguments appended, except that
 * a lone `--help` or `-h` prints `help` (what the command prints for it) without starting the command.
 */
function writeExecutable(path: string, words: string[], help: string): void {
  if (help.split('\n').includes(HELP_END)) throw new Error(`help text holds the line ${HELP_END}`);
  const script =
    `#!/bin/sh\n# Written by capstan envtest-assets.\n` +
    `if [ "$#" -eq 1 ] && { [ "$1" = --help ] || [ "$1" = -h ]; }; then\n` +
    `  cat <<'${HELP_END}'\n${help.endsWith('\n') ? help : `${help}\n`}${HELP_END}\n  exit 0\nfi\n` +
    `exec ${words.map(shellQuote).join(' ')} "$@"\n`;
  writeFileSync(path, script);
  chmodSync(path, 0o755);
}

function kubectlOnPath(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, 'kubectl');
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/**
 * The folder holding the entry `main.js` (dist/src): this module's own folder when it runs inside the
 * bundle (which is main.js), its parent when it runs as tsc's dist/src/cli/envtest-assets.js.
 */
function compiledSourceDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return existsSync(join(here, 'main.js')) ? here : dirname(here);
}

/** What was written, for the command's summary. */
export interface EnvtestAssets {
  dir: string;
  kubectl: string | undefined;
}

/** Writes the assets directory; throws with a one-line message when FLAGS are invalid. */
export function writeEnvtestAssets(dir: string, capstanFlags: string[]): EnvtestAssets {
  const parsed = parseArgs(capstanFlags);
  if (parsed.help) throw new Error('--help is not a flag to bake into kube-apiserver');
  const target = resolve(dir);
  mkdirSync(target, { recursive: true });
  const dist = compiledSourceDir();
  const main = join(dist, 'main.js');
  const etcd = join(dist, 'envtest', 'etcd-stand-in.js');
  writeExecutable(join(target, 'kube-apiserver'), [process.execPath, main, ...capstanFlags], usage());
  writeExecutable(join(target, 'etcd'), [process.execPath, etcd], ETCD_STAND_IN_USAGE);
  const kubectl = kubectlOnPath();
  const link = join(target, 'kubectl');
  rmSync(link, { force: true });
  if (kubectl !== undefined) symlinkSync(kubectl, link);
  return { dir: target, kubectl };
}

/** The command: returns the process exit code. */
export function envtestAssetsCommand(argv: string[]): number {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h') {
    (argv.length === 0 ? process.stderr : process.stdout).write(ENVTEST_ASSETS_USAGE);
    return argv.length === 0 ? 2 : 0;
  }
  try {
    const written = writeEnvtestAssets(argv[0], argv.slice(1));
    process.stdout.write(
      `Wrote ${written.dir}: kube-apiserver (Capstan), etcd (stand-in)${written.kubectl === undefined ? ' (no kubectl on PATH)' : `, kubectl -> ${written.kubectl}`}\n` +
        `Run: KUBEBUILDER_ASSETS=${written.dir} go test ./...\n`,
    );
    return 0;
  } catch (err) {
    process.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
}
