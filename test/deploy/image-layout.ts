/**
 * Reproduces a Dockerfile's runtime image layout on the host, without Docker, by following the
 * parsed instructions:
 *
 * - Each stage's WORKDIR stands for one host directory; container paths outside it are refused.
 * - A stage that compiles TypeScript (a RUN calling `tsc`) stands for the repository itself: its
 *   output is the `dist/` the test build already produced. This holds only while every file it
 *   COPYs lands at the same relative path as in the repository, which is checked.
 * - Any other stage named by a `COPY --from` is built in a temporary directory: its context COPYs
 *   are followed, then its own RUN commands run there (npm with a private, temporary cache).
 * - The final stage's COPYs fill the layout directory; `.dockerignore` applies to context copies.
 *
 * Not reproduced: the base image, --chown (files belong to the current user) and USER. Anything
 * else the model does not understand (ADD, wildcards, a second WORKDIR, a runtime RUN other than
 * apt-get) throws, so a changed Dockerfile fails loudly instead of being half followed.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix, relative, sep } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export interface Instruction {
  keyword: string;
  args: string;
  stage: number;
}

/** Dockerfile instructions with line continuations joined and comments dropped. */
export function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  let stage = -1;
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const full = `${pending}${line}`.trim();
    pending = '';
    if (full === '' || full.startsWith('#')) continue;
    const m = /^(\w+)\s+(.*)$/s.exec(full);
    if (!m) throw new Error(`unparseable Dockerfile line: ${full}`);
    const keyword = m[1].toUpperCase();
    if (keyword === 'FROM') stage++;
    out.push({ keyword, args: m[2], stage });
  }
  return out;
}

/** One build stage: its name (`AS name`, else its index), single WORKDIR and ENV. */
export interface Stage {
  index: number;
  name: string;
  /** The stage's WORKDIR (absolute), or undefined when it sets none. */
  workdir: string | undefined;
  env: Record<string, string>;
  instructions: Instruction[];
}

/** Groups instructions into stages (instructions before the first FROM, such as ARG, are dropped). */
export function stagesOf(instructions: Instruction[]): Stage[] {
  const stages: Stage[] = [];
  for (const inst of instructions) {
    if (inst.stage < 0) continue;
    if (inst.keyword === 'FROM') {
      const name = / AS\s+(\S+)\s*$/i.exec(inst.args)?.[1] ?? String(inst.stage);
      stages.push({ index: inst.stage, name, workdir: undefined, env: {}, instructions: [] });
    }
    const stage = stages[stages.length - 1];
    stage.instructions.push(inst);
    if (inst.keyword === 'WORKDIR') {
      if (stage.workdir !== undefined) throw new Error(`stage ${stage.name}: more than one WORKDIR is not modelled`);
      if (!inst.args.startsWith('/')) throw new Error(`stage ${stage.name}: relative WORKDIR ${inst.args} is not modelled`);
      stage.workdir = posix.normalize(inst.args.trim());
    }
    if (inst.keyword === 'ENV') Object.assign(stage.env, parseEnv(inst.args));
  }
  return stages;
}

/** `ENV a=b c="d e"` or the legacy `ENV key value`. */
function parseEnv(args: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!/^[^\s=]+=/.test(args)) {
    const m = /^(\S+)\s+(.*)$/s.exec(args);
    if (!m) throw new Error(`unparseable ENV ${args}`);
    out[m[1]] = m[2];
    return out;
  }
  for (const m of args.matchAll(/([^\s=]+)=("(?:[^"\\]|\\.)*"|\S*)/g)) {
    const value = m[2];
    out[m[1]] = value.startsWith('"') ? (JSON.parse(value) as string) : value;
  }
  return out;
}

/** The argv of an exec-form (JSON array) instruction; shell form is refused. */
export function execForm(args: string, what: string): string[] {
  const text = args.trim();
  if (!text.startsWith('[')) throw new Error(`${what} is not in exec form: ${text}`);
  return JSON.parse(text) as string[];
}

interface Copy {
  from: string | undefined;
  sources: string[];
  dest: string;
}

function parseCopy(args: string): Copy {
  let rest = args.trim();
  let from: string | undefined;
  for (let m = /^--([\w-]+)(?:=(\S*))?\s+/.exec(rest); m; m = /^--([\w-]+)(?:=(\S*))?\s+/.exec(rest)) {
    const flag = m[1];
    if (flag === 'from') from = m[2];
    // Ownership, permissions and layer linking do not change which files the image holds.
    else if (!['chown', 'chmod', 'link'].includes(flag)) throw new Error(`COPY --${flag} is not modelled`);
    rest = rest.slice(m[0].length);
  }
  const parts = rest.startsWith('[') ? (JSON.parse(rest) as string[]) : rest.split(/\s+/);
  if (parts.length < 2) throw new Error(`COPY needs a source and a destination: ${args}`);
  const sources = parts.slice(0, -1);
  for (const s of sources) if (/[*?[]/.test(s)) throw new Error(`COPY wildcard ${s} is not modelled`);
  return { from, sources, dest: parts[parts.length - 1] };
}

/** `.dockerignore` patterns as a predicate over context-relative paths (a match excludes the subtree). */
function dockerignore(root: string): (rel: string) => boolean {
  const file = join(root, '.dockerignore');
  const patterns = existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '' && !l.startsWith('#'))
    : [];
  const regexes = patterns.map((p) => {
    if (p.startsWith('!')) throw new Error(`.dockerignore exception ${p} is not modelled`);
    const clean = posix.normalize(p.replace(/^\/+/, ''));
    const body = clean
      .split(/(\*\*|\*|\?)/)
      .map((part) => {
        if (part === '**') return '.*';
        if (part === '*') return '[^/]*';
        if (part === '?') return '[^/]';
        return part.replace(/[.+^${}()|[\]\\]/g, '\\$&');
      })
      .join('');
    return new RegExp(`^${body}$`);
  });
  return (rel) => {
    const segments = rel.split(sep).join('/').split('/');
    for (let i = 1; i <= segments.length; i++) {
      const prefix = segments.slice(0, i).join('/');
      if (regexes.some((r) => r.test(prefix))) return true;
    }
    return false;
  };
}

/** A host directory standing for a stage's WORKDIR. */
export interface StageDir {
  stage: Stage;
  dir: string;
}

/** Host path of CONTAINER_PATH (absolute, or relative to the WORKDIR), which must lie inside the WORKDIR. */
export function hostPath(at: StageDir, containerPath: string): string {
  const workdir = at.stage.workdir;
  if (workdir === undefined) throw new Error(`stage ${at.stage.name} has no WORKDIR to map ${containerPath} from`);
  const abs = posix.resolve(workdir, containerPath);
  if (abs === workdir) return at.dir;
  if (!abs.startsWith(`${workdir}/`)) throw new Error(`${abs} lies outside stage ${at.stage.name}'s WORKDIR ${workdir}`);
  return join(at.dir, ...abs.slice(workdir.length + 1).split('/'));
}

export interface ImageLayout {
  /** The temporary directory holding every reproduced stage (runtime.dir lies directly in it). */
  tmp: string;
  stages: Stage[];
  /** The final stage and the directory holding its WORKDIR's files. */
  runtime: StageDir;
  /** Every stage that was reproduced, by name. */
  built: Map<string, StageDir>;
  /** Wall-clock time of each RUN that was executed, in ms. */
  runTimes: Array<{ stage: string; command: string; ms: number }>;
  /** Removes every temporary directory. */
  cleanup(): void;
}

/** Builds the runtime layout of DOCKERFILE_TEXT with ROOT as the build context and compiled repository. */
export async function assembleImageLayout(root: string, dockerfileText: string): Promise<ImageLayout> {
  const stages = stagesOf(parseDockerfile(dockerfileText));
  if (stages.length === 0) throw new Error('Dockerfile has no FROM');
  const ignored = dockerignore(root);
  const tmp = mkdtempSync(join(tmpdir(), 'capstan-image-'));
  const built = new Map<string, StageDir>();
  const runTimes: ImageLayout['runTimes'] = [];

  const copyInto = async (target: StageDir, copy: Copy): Promise<void> => {
    const destIsDir = copy.dest.endsWith('/') || copy.dest === '.' || copy.sources.length > 1;
    const dest = hostPath(target, copy.dest);
    for (const source of copy.sources) {
      let src: string;
      let filter: ((path: string) => boolean) | undefined;
      if (copy.from === undefined) {
        const rel = posix.normalize(source.replace(/^\/+/, ''));
        if (rel.startsWith('..')) throw new Error(`COPY source ${source} lies outside the context`);
        if (ignored(rel)) throw new Error(`COPY source ${source} is excluded by .dockerignore`);
        src = join(root, ...rel.split('/'));
        filter = (path) => !ignored(relative(root, path));
      } else {
        const from = await stageDir(copy.from);
        src = hostPath(from, posix.resolve('/', source));
      }
      if (!existsSync(src)) throw new Error(`COPY source ${source}${copy.from ? ` from stage ${copy.from}` : ''} does not exist (${src})`);
      if (statSync(src).isDirectory()) {
        cpSync(src, dest, { recursive: true, verbatimSymlinks: true, filter });
      } else {
        const file = destIsDir ? join(dest, basename(src)) : dest;
        mkdirSync(dirname(file), { recursive: true });
        cpSync(src, file);
      }
    }
  };

  const runIn = async (at: StageDir, args: string): Promise<void> => {
    const argv = args.trim().startsWith('[') ? execForm(args, 'RUN') : ['/bin/sh', '-c', args];
    const env: NodeJS.ProcessEnv = { ...process.env, ...at.stage.env };
    delete env.NODE_TEST_CONTEXT;
    // The stage may run `npm cache clean --force`: give npm its own empty cache (as a fresh
    // image build has) so this machine's shared cache is left alone.
    env.npm_config_cache = mkdtempSync(join(tmp, 'npm-cache-'));
    const started = Date.now();
    try {
      await execFileAsync(argv[0], argv.slice(1), { cwd: at.dir, env, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      throw new Error(`RUN ${args} in stage ${at.stage.name} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
    }
    runTimes.push({ stage: at.stage.name, command: args, ms: Date.now() - started });
  };

  /** Follows a stage's instructions into AT.dir; EXECUTE says whether its RUNs run there. */
  const follow = async (at: StageDir, execute: boolean): Promise<void> => {
    for (const inst of at.stage.instructions) {
      switch (inst.keyword) {
        case 'COPY':
          await copyInto(at, parseCopy(inst.args));
          break;
        case 'RUN':
          if (execute) await runIn(at, inst.args);
          else if (!/^apt-get update\b.*apt-get install\b/s.test(inst.args.trim())) {
            // System packages (tini) live outside the WORKDIR; any other runtime RUN may change
            // the layout, which this model cannot follow.
            throw new Error(`RUN in stage ${at.stage.name} is not modelled: ${inst.args}`);
          }
          break;
        case 'ADD':
        case 'SHELL':
        case 'ONBUILD':
        case 'VOLUME':
          throw new Error(`${inst.keyword} is not modelled`);
        default:
          // FROM, ARG, ENV, WORKDIR, USER, EXPOSE, LABEL, HEALTHCHECK, STOPSIGNAL, ENTRYPOINT, CMD:
          // no files (ENV and WORKDIR are read by stagesOf).
          break;
      }
    }
  };

  const pending = new Map<string, Promise<StageDir>>();
  const stageDir = (name: string): Promise<StageDir> => {
    let p = pending.get(name);
    if (!p) {
      p = reproduce(name);
      pending.set(name, p);
    }
    return p;
  };

  const reproduce = async (name: string): Promise<StageDir> => {
    const stage = stages.find((s) => s.name === name || String(s.index) === name);
    if (!stage) throw new Error(`COPY --from=${name}: no such stage`);
    let at: StageDir;
    if (stage.instructions.some((i) => i.keyword === 'RUN' && /\btsc\b/.test(i.args))) {
      at = { stage, dir: root };
      for (const inst of stage.instructions.filter((i) => i.keyword === 'COPY')) {
        const copy = parseCopy(inst.args);
        if (copy.from !== undefined) throw new Error(`stage ${stage.name} copies from ${copy.from}: it cannot stand for the repository`);
        const destIsDir = copy.dest.endsWith('/') || copy.dest === '.' || copy.sources.length > 1;
        for (const source of copy.sources) {
          // A directory's contents land in the destination; a file lands inside a directory destination.
          const isDir = existsSync(join(root, source)) && statSync(join(root, source)).isDirectory();
          const landed = destIsDir && !isDir ? join(hostPath(at, copy.dest), basename(source)) : hostPath(at, copy.dest);
          if (landed !== join(root, source)) throw new Error(`stage ${stage.name} puts ${source} at ${copy.dest}: not the repository's layout`);
        }
      }
    } else {
      at = { stage, dir: mkdtempSync(join(tmp, `stage-${stage.name}-`)) };
      await follow(at, true);
    }
    built.set(stage.name, at);
    return at;
  };

  try {
    const last = stages[stages.length - 1];
    const runtime: StageDir = { stage: last, dir: mkdtempSync(join(tmp, 'runtime-')) };
    await follow(runtime, false);
    built.set(last.name, runtime);
    return { tmp, stages, runtime, built, runTimes, cleanup: () => rmSync(tmp, { recursive: true, force: true }) };
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}
