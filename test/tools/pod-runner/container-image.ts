/**
 * The images the pod runner can run and what each one is: its file system (read-only layers built
 * once per image under WORKDIR/images, the lower layers of every container's overlay root), its
 * entrypoint and default command, and the PATH its containers start with. Stand-ins for kube's e2e
 * images:
 * - busybox (registry.k8s.io/e2e-test-images/busybox, docker.io's busybox): a static busybox 1.37
 *   (scripts/pod-runner/build-busybox.sh builds upstream's, as the image has it; Debian's packages
 *   drop environment variables whose names are not shell names, which kube's envFrom tests print)
 *   at /bin/busybox with a symbolic link per applet at its usual path (/bin/sh, /usr/bin/wc, ...),
 *   /etc/passwd and /etc/group as the image has them; default command `sh`.
 * - agnhost: the busybox layer (the image is Alpine, whose shell and tools are busybox's too) plus the
 *   natively built agnhost binary at /agnhost with /agnhost-2 linking to it, the host's curl and
 *   OpenBSD nc (Debian's netcat-openbsd, as the image has it), porter's
 *   /localhost.crt and /localhost.key, /uploads, and the image's user-defined-in-image (1000) and
 *   group-defined-in-image (50000); entrypoint /agnhost, default arguments `pause`.
 * - pause: agnhost at /pause, run as `/pause pause`.
 * - sample-apiserver (/sample-apiserver) and etcd (/usr/local/bin/etcd), when the runner has them.
 * A native binary's layer also holds the shared libraries `ldd` names for it, at their host paths.
 * Which image runs a container follows its image name; any other image is unsupported.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The kinds of image the runner can run. */
export type ImageKind = 'busybox' | 'agnhost' | 'pause' | 'sample-apiserver' | 'etcd';

/** What the runner knows of an image. */
export interface Image {
  kind: ImageKind;
  /** The image's ENTRYPOINT and CMD. */
  entrypoint: string[];
  cmd: string[];
  /** The environment the image sets (PATH). */
  env: Record<string, string>;
}

/** The native binaries standing in for images (agnhost always; the others when built). */
export interface Programs {
  agnhost: string;
  /** A static busybox (build-busybox.sh's); default /bin/busybox, else /usr/bin/busybox. */
  busybox?: string;
  sampleApiserver?: string;
  etcd?: string;
}

const IMAGE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const REGISTRY = '(registry\\.k8s\\.io|k8s\\.gcr\\.io|gcr\\.io/k8s-staging-e2e-test-images)';
const PATTERNS: Array<[ImageKind, RegExp]> = [
  ['busybox', new RegExp(`^(${REGISTRY}/e2e-test-images/busybox|(docker\\.io/)?(library/)?busybox)(:|@|$)`)],
  ['agnhost', new RegExp(`^${REGISTRY}/e2e-test-images/agnhost(:|@|$)`)],
  ['pause', /^(registry\.k8s\.io|k8s\.gcr\.io)\/pause(:|@|$)/],
  ['sample-apiserver', new RegExp(`^${REGISTRY}/e2e-test-images/sample-apiserver(:|@|$)`)],
  ['etcd', /^(registry\.k8s\.io|k8s\.gcr\.io|gcr\.io\/etcd-development)\/etcd(:|@|$)/],
];

const IMAGES: Record<ImageKind, Omit<Image, 'kind'>> = {
  busybox: { entrypoint: [], cmd: ['sh'], env: { PATH: IMAGE_PATH } },
  agnhost: { entrypoint: ['/agnhost'], cmd: ['pause'], env: { PATH: IMAGE_PATH } },
  pause: { entrypoint: ['/pause', 'pause'], cmd: [], env: { PATH: IMAGE_PATH } },
  'sample-apiserver': { entrypoint: ['/sample-apiserver'], cmd: [], env: { PATH: IMAGE_PATH } },
  etcd: { entrypoint: ['/usr/local/bin/etcd'], cmd: [], env: { PATH: IMAGE_PATH } },
};

/** The image a container's image name stands for, or why the runner cannot run it. */
export function imageOf(imageName: string, programs: Programs): Image | { unsupported: string } {
  const found = PATTERNS.find(([, re]) => re.test(imageName));
  if (found === undefined) return { unsupported: `image ${imageName} is not busybox, agnhost, pause, sample-apiserver or etcd` };
  const kind = found[0];
  if (kind === 'sample-apiserver' && programs.sampleApiserver === undefined) return { unsupported: `image ${imageName} needs a sample-apiserver binary (pod runner flag --sample-apiserver)` };
  if (kind === 'etcd' && programs.etcd === undefined) return { unsupported: `image ${imageName} needs an etcd binary (pod runner flag --etcd)` };
  return { kind, ...IMAGES[kind] };
}

/** The process a container runs, as the kubelet builds it: command, else the entrypoint; args, else (without a command) the image's CMD. */
export function containerArgv(container: { command?: string[]; args?: string[] }, image: Image): string[] {
  const command = container.command ?? [];
  const args = container.args ?? [];
  if (command.length > 0) return [...command, ...args];
  return [...image.entrypoint, ...(args.length > 0 ? args : image.cmd)];
}

const PASSWD = [
  'root:x:0:0:root:/root:/bin/sh',
  'daemon:x:1:1:daemon:/usr/sbin:/bin/false',
  'bin:x:2:2:bin:/bin:/bin/false',
  'sys:x:3:3:sys:/dev:/bin/false',
  'sync:x:4:100:sync:/bin:/bin/sync',
  'mail:x:8:8:mail:/var/spool/mail:/bin/false',
  'www-data:x:33:33:www-data:/var/www:/bin/false',
  'operator:x:37:37:Operator:/var:/bin/false',
  'nobody:x:65534:65534:nobody:/home:/bin/false',
];
const GROUP = ['root:x:0:', 'daemon:x:1:', 'bin:x:2:', 'sys:x:3:', 'adm:x:4:', 'tty:x:5:', 'disk:x:6:', 'wheel:x:10:root', 'mail:x:12:', 'www-data:x:33:', 'users:x:100:', 'nogroup:x:65534:'];

/** Puts `source` at `target`: a hard link when both are on one file system, else a copy. */
function place(source: string, target: string): void {
  mkdirSync(dirname(target), { recursive: true });
  try {
    linkSync(source, target);
  } catch {
    copyFileSync(source, target);
    chmodSync(target, 0o755);
  }
}

/** The binary at `path` in the layer, with the shared libraries it loads at their host paths. */
function nativeBinary(layer: string, binary: string, path: string): void {
  place(binary, join(layer, path));
  let ldd = '';
  try {
    ldd = execFileSync('ldd', [binary], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return; // static
  }
  for (const m of ldd.matchAll(/(?:=>\s*)?(\/\S+)\s+\(0x/g)) {
    const lib = m[1];
    if (!existsSync(join(layer, lib))) {
      mkdirSync(dirname(join(layer, lib)), { recursive: true });
      copyFileSync(lib, join(layer, lib));
    }
  }
}

function busyboxBinary(programs: Programs): string {
  if (programs.busybox) return programs.busybox;
  for (const p of ['/bin/busybox', '/usr/bin/busybox']) if (existsSync(p)) return p;
  throw new Error('busybox not found: scripts/pod-runner/build-busybox.sh builds one (--busybox PATH)');
}

function buildBusybox(layer: string, programs: Programs): void {
  const busybox = busyboxBinary(programs);
  mkdirSync(join(layer, 'bin'), { recursive: true });
  copyFileSync(busybox, join(layer, 'bin/busybox'));
  chmodSync(join(layer, 'bin/busybox'), 0o755);
  const applets = execFileSync(busybox, ['--list-full'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  for (const applet of applets) {
    const target = join(layer, applet);
    if (existsSync(target)) continue;
    mkdirSync(dirname(target), { recursive: true });
    symlinkSync('/bin/busybox', target);
  }
  for (const d of ['etc', 'proc', 'sys', 'dev', 'root', 'home', 'var/spool/mail', 'var/www', 'usr/local/bin']) mkdirSync(join(layer, d), { recursive: true });
  mkdirSync(join(layer, 'tmp'), { recursive: true });
  chmodSync(join(layer, 'tmp'), 0o1777);
  chmodSync(join(layer, 'root'), 0o700);
  writeFileSync(join(layer, 'etc/passwd'), PASSWD.join('\n') + '\n');
  writeFileSync(join(layer, 'etc/group'), GROUP.join('\n') + '\n');
}

function buildAgnhost(layer: string, programs: Programs): void {
  nativeBinary(layer, programs.agnhost, '/agnhost');
  // The image's curl and OpenBSD nc (kube's tests call them in exec hooks, probes and exec; busybox's
  // nc has no UDP): the host's (Debian's curl and netcat-openbsd), with their libraries.
  for (const [path, candidates] of [
    ['/usr/bin/curl', ['/usr/bin/curl']],
    ['/usr/bin/nc', ['/usr/bin/nc.openbsd', '/bin/nc.openbsd']],
  ] as const) {
    const found = candidates.find((c) => existsSync(c));
    if (found !== undefined) nativeBinary(layer, realpathSync(found), path);
  }
  symlinkSync('agnhost', join(layer, 'agnhost-2'));
  // scripts/pod-runner/build-agnhost.sh keeps the files of the image's root (porter's TLS pair) beside the binary.
  const files = `${programs.agnhost}-files`;
  if (existsSync(files)) for (const name of readdirSync(files)) copyFileSync(join(files, name), join(layer, name));
  mkdirSync(join(layer, 'uploads'));
  mkdirSync(join(layer, 'etc'));
  mkdirSync(join(layer, 'home/user-defined-in-image'), { recursive: true });
  writeFileSync(join(layer, 'etc/passwd'), [...PASSWD, 'user-defined-in-image:x:1000:1000:Linux User,,,:/home/user-defined-in-image:/bin/sh'].join('\n') + '\n');
  writeFileSync(
    join(layer, 'etc/group'),
    [...GROUP, 'user-defined-in-image:x:1000:', 'group-defined-in-image:x:50000:user-defined-in-image'].join('\n') + '\n',
  );
}

/** The layers of each image, topmost first, by the name of their directory under WORKDIR/images. */
const LAYERS: Record<ImageKind, string[]> = {
  busybox: ['busybox'],
  agnhost: ['agnhost', 'busybox'],
  pause: ['pause'],
  'sample-apiserver': ['sample-apiserver', 'busybox'],
  etcd: ['etcd', 'busybox'],
};

/** Builds (once) and returns an image's read-only layers, topmost first, for an overlay's lowerdir. */
export class ImageLayers {
  constructor(
    private readonly dir: string,
    private readonly programs: Programs,
  ) {}

  layers(kind: ImageKind): string[] {
    return LAYERS[kind].map((name) => this.layer(name));
  }

  private layer(name: string): string {
    const dir = join(this.dir, name);
    if (existsSync(dir)) return dir;
    const tmp = `${dir}.tmp`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    if (name === 'busybox') buildBusybox(tmp, this.programs);
    else if (name === 'agnhost') buildAgnhost(tmp, this.programs);
    else if (name === 'pause') {
      nativeBinary(tmp, this.programs.agnhost, '/pause');
      for (const d of ['proc', 'sys', 'dev', 'etc', 'tmp']) mkdirSync(join(tmp, d));
    } else if (name === 'sample-apiserver') nativeBinary(tmp, this.programs.sampleApiserver!, '/sample-apiserver');
    else if (name === 'etcd') nativeBinary(tmp, this.programs.etcd!, '/usr/local/bin/etcd');
    renameSync(tmp, dir);
    return dir;
  }
}
