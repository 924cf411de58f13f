/**
 * What the pod runner executes for a container: only kube's e2e test images it can run natively.
 * An agnhost image runs the agnhost binary with the container's command/args (the image's
 * entrypoint is /agnhost, its default arguments `pause`), under the name the image gives it
 * (`argv0`: what the program sees as its own path); a pause image runs `agnhost pause`; the
 * sample-apiserver image (entrypoint /sample-apiserver) runs a natively built k8s.io/sample-apiserver
 * and the etcd image's `/usr/local/bin/etcd` runs an etcd binary, when the runner has them.
 * Paths under a volume's mountPath, in arguments and environment values, are rewritten to the
 * directory the runner materialised the volume in (the process runs in the host's file system).
 */

/** A container as the pod spec gives it (the fields the runner reads). */
export interface ContainerSpec {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
}

/** A volume mount: the container's path and the host directory (or file) standing in for it. */
export interface MountMapping {
  mountPath: string;
  hostPath: string;
}

const AGNHOST_IMAGE = /^(registry\.k8s\.io|k8s\.gcr\.io|gcr\.io\/k8s-staging-e2e-test-images)\/e2e-test-images\/agnhost(:|@|$)/;
/** The commands of the agnhost image that run agnhost. */
const AGNHOST_ENTRYPOINTS = ['/agnhost', 'agnhost', '/agnhost-2', 'agnhost-2'];
const PAUSE_IMAGE = /^(registry\.k8s\.io|k8s\.gcr\.io)\/pause(:|@|$)/;
const SAMPLE_APISERVER_IMAGE = /^(registry\.k8s\.io|k8s\.gcr\.io|gcr\.io\/k8s-staging-e2e-test-images)\/e2e-test-images\/sample-apiserver(:|@|$)/;
const ETCD_IMAGE = /^(registry\.k8s\.io|k8s\.gcr\.io|gcr\.io\/etcd-development)\/etcd(:|@|$)/;

/** The native binaries standing in for images (agnhost always; the others when built). */
export interface Programs {
  agnhost: string;
  sampleApiserver?: string;
  etcd?: string;
}

/** The binary and arguments that run a container, or why the runner cannot run it. */
export type Program = { binary: string; args: string[]; image: 'agnhost' | 'sample-apiserver' | 'etcd'; argv0?: string } | { unsupported: string };

/** A container's program: its image's entrypoint `entrypoint` (the command's first word may name it) run natively. */
function nativeProgram(container: ContainerSpec, binary: string | undefined, entrypoint: string, image: 'sample-apiserver' | 'etcd'): Program {
  if (binary === undefined) return { unsupported: `container ${container.name}: image ${container.image} needs a ${image} binary (pod runner flag --${image})` };
  const command = container.command ?? [];
  const args = container.args ?? [];
  if (command.length === 0) return { binary, args, image };
  if (command[0] === entrypoint || command[0] === entrypoint.slice(entrypoint.lastIndexOf('/') + 1)) return { binary, args: [...command.slice(1), ...args], image };
  return { unsupported: `container ${container.name}: command ${JSON.stringify(command[0])} is not ${entrypoint}` };
}

/** What runs a container: agnhost and pause images (see agnhostArguments), the sample API server and etcd. */
export function containerProgram(container: ContainerSpec, programs: Programs): Program {
  if (SAMPLE_APISERVER_IMAGE.test(container.image)) return nativeProgram(container, programs.sampleApiserver, '/sample-apiserver', 'sample-apiserver');
  if (ETCD_IMAGE.test(container.image)) return nativeProgram(container, programs.etcd, '/usr/local/bin/etcd', 'etcd');
  const a = agnhostArguments(container);
  return 'unsupported' in a
    ? { unsupported: a.unsupported.replace('is not agnhost or pause', 'is not agnhost, pause, sample-apiserver or etcd') }
    : { binary: programs.agnhost, args: a.args, image: 'agnhost', argv0: a.argv0 };
}

/**
 * The agnhost arguments that run the container, or a reason it cannot run here (another image, or
 * a command other than the image's entrypoint).
 */
export function agnhostArguments(container: ContainerSpec): { args: string[]; argv0?: string } | { unsupported: string } {
  const command = container.command ?? [];
  const args = container.args ?? [];
  if (AGNHOST_IMAGE.test(container.image)) {
    if (command.length === 0) return { args: args.length > 0 ? args : ['pause'], argv0: '/agnhost' };
    // The image holds the binary twice, as /agnhost and /agnhost-2 (kube's entrypoint tests run the second).
    if (AGNHOST_ENTRYPOINTS.includes(command[0])) return { args: [...command.slice(1), ...args], argv0: command[0] };
    return { unsupported: `container ${container.name}: command ${JSON.stringify(command[0])} is not agnhost` };
  }
  if (PAUSE_IMAGE.test(container.image)) {
    if (command.length === 0 || command[0] === '/pause') return { args: ['pause'] };
    return { unsupported: `container ${container.name}: command ${JSON.stringify(command[0])} is not /pause` };
  }
  return { unsupported: `container ${container.name}: image ${container.image} is not agnhost or pause` };
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Rewrites every occurrence of a mount path that starts the string or follows `=`, `:` or `,` and
 * ends it or is followed by `/`, `:` or `,` (so `--cert=/certs/tls.crt` becomes
 * `--cert=HOSTDIR/tls.crt`, while `/certsX` is left alone). Longer mount paths win.
 */
export function rewriteMountPaths(value: string, mounts: MountMapping[]): string {
  const sorted = [...mounts].sort((a, b) => b.mountPath.length - a.mountPath.length);
  let out = value;
  const placeholders: string[] = [];
  for (const m of sorted) {
    const path = m.mountPath.replace(/\/+$/, '') || '/';
    const re = new RegExp(`(^|[=:,])${escapeRegExp(path)}(?=$|[/:,])`, 'g');
    out = out.replace(re, (_all, lead: string) => {
      placeholders.push(m.hostPath);
      return `${lead}\u0000${placeholders.length - 1}\u0000`;
    });
  }
  return out.replace(/\u0000(\d+)\u0000/g, (_all, i: string) => placeholders[Number(i)]);
}
