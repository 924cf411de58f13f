/**
 * What the pod runner executes for a container: only kube's e2e test images it can run natively.
 * An agnhost image runs the agnhost binary with the container's command/args (the image's
 * entrypoint is /agnhost, its default arguments `pause`); a pause image runs `agnhost pause`.
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
const PAUSE_IMAGE = /^(registry\.k8s\.io|k8s\.gcr\.io)\/pause(:|@|$)/;

/**
 * The agnhost arguments that run the container, or a reason it cannot run here (another image, or
 * a command other than the image's entrypoint).
 */
export function agnhostArguments(container: ContainerSpec): { args: string[] } | { unsupported: string } {
  const command = container.command ?? [];
  const args = container.args ?? [];
  if (AGNHOST_IMAGE.test(container.image)) {
    if (command.length === 0) return { args: args.length > 0 ? args : ['pause'] };
    if (command[0] === '/agnhost' || command[0] === 'agnhost') return { args: [...command.slice(1), ...args] };
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
