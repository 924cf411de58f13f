/**
 * A container's root file system and the command that starts it there. Each container (each
 * restart too) gets an overlay root: its image's layers (container-image.ts) below, a writable
 * directory of its own above. In a mount namespace of its own (private propagation, so nothing
 * leaks to the host) and the pod's network namespace, a Perl helper mounts onto that root /proc, a
 * /dev of its own (tmpfs with null, zero, full, random, urandom and tty bound from the host's, and
 * /dev/shm), a read-only /sys, the kubelet-managed /etc/hosts, /etc/hostname and /etc/resolv.conf,
 * each volume bind-mounted at its mountPath (read-only when asked) and the termination-message file
 * at its path; with readOnlyRootFilesystem the root is remounted read-only. It then sets the pod's
 * hostname (own UTS namespace), chroots, enters workingDir (made when missing, as runc does), takes
 * the container's user, group and supplementary groups, keeps only its capabilities (containerd's
 * defaults unless privileged, with securityContext.capabilities) and executes argv with exactly the
 * container's environment (PATH looked up in it). A start that fails exits 128 after one line on
 * stderr, as a container runtime's StartError. A pipe given as fd 3 is closed by the exec itself
 * (close-on-exec): the start signal. execInContainer runs another command in a running
 * container (its namespaces, root, working directory, user and environment), as exec probes do;
 * spawnInContainer starts one with pipes, for the kubelet API's exec.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** One mount onto the container's root; `target` is a path inside the container. */
export interface Mount {
  target: string;
  /** A host path to bind-mount. */
  source?: string;
  /** A file system type to mount instead (proc, tmpfs, sysfs). */
  type?: string;
  options?: string;
  readOnly?: boolean;
  /** The source is a file: the mount point is made as an empty file. */
  file?: boolean;
}

/** Everything the helper needs to start a container. */
export interface LaunchPlan {
  hostname: string;
  root: string;
  lower: string[];
  upper: string;
  work: string;
  readOnlyRoot: boolean;
  mounts: Mount[];
  symlinks: Array<[string, string]>;
  uid: number;
  gid: number;
  groups: number[];
  workingDir: string;
  /** The capabilities the process keeps (its bounding set): numbers, or 'all' for a privileged container. */
  capabilities: number[] | 'all';
  /** Sets no_new_privs (allowPrivilegeEscalation: false). */
  noNewPrivileges: boolean;
  env: Record<string, string>;
  argv: string[];
}

/** Linux capability numbers by name (without CAP_), as securityContext.capabilities names them. */
export const CAPABILITIES: Record<string, number> = Object.fromEntries(
  [
    'CHOWN', 'DAC_OVERRIDE', 'DAC_READ_SEARCH', 'FOWNER', 'FSETID', 'KILL', 'SETGID', 'SETUID', 'SETPCAP', 'LINUX_IMMUTABLE',
    'NET_BIND_SERVICE', 'NET_BROADCAST', 'NET_ADMIN', 'NET_RAW', 'IPC_LOCK', 'IPC_OWNER', 'SYS_MODULE', 'SYS_RAWIO', 'SYS_CHROOT',
    'SYS_PTRACE', 'SYS_PACCT', 'SYS_ADMIN', 'SYS_BOOT', 'SYS_NICE', 'SYS_RESOURCE', 'SYS_TIME', 'SYS_TTY_CONFIG', 'MKNOD', 'LEASE',
    'AUDIT_WRITE', 'AUDIT_CONTROL', 'SETFCAP', 'MAC_OVERRIDE', 'MAC_ADMIN', 'SYSLOG', 'WAKE_ALARM', 'BLOCK_SUSPEND', 'AUDIT_READ',
    'PERFMON', 'BPF', 'CHECKPOINT_RESTORE',
  ].map((name, i) => [name, i]),
);

/** The capabilities containerd gives a container that is not privileged. */
export const DEFAULT_CAPABILITIES = ['CHOWN', 'DAC_OVERRIDE', 'FSETID', 'FOWNER', 'MKNOD', 'NET_RAW', 'SETGID', 'SETUID', 'SETFCAP', 'SETPCAP', 'NET_BIND_SERVICE', 'SYS_CHROOT', 'KILL', 'AUDIT_WRITE'];

/** A container's capabilities from its securityContext: all when privileged, else the defaults with `add` and without `drop` (either may say ALL). */
export function containerCapabilities(securityContext: any): number[] | 'all' {
  if (securityContext?.privileged === true) return 'all';
  const name = (c: string): string => c.toUpperCase().replace(/^CAP_/, '');
  const add: string[] = (securityContext?.capabilities?.add ?? []).map(name);
  const drop: string[] = (securityContext?.capabilities?.drop ?? []).map(name);
  if (add.includes('ALL')) return drop.length === 0 ? 'all' : Object.keys(CAPABILITIES).filter((c) => !drop.includes(c)).map((c) => CAPABILITIES[c]);
  const kept = new Set([...DEFAULT_CAPABILITIES, ...add]);
  return [...kept].filter((c) => !drop.includes('ALL') || add.includes(c)).filter((c) => !drop.includes(c) && c in CAPABILITIES).map((c) => CAPABILITIES[c]);
}

const DEVICES = ['null', 'zero', 'full', 'random', 'urandom', 'tty'];

/** The mounts every container has (before its volumes): /proc, /dev, /sys and the /etc files. */
export function systemMounts(etcFiles: { hosts: string; hostname: string; resolvConf: string }): Mount[] {
  return [
    { target: '/proc', type: 'proc' },
    { target: '/dev', type: 'tmpfs', options: 'mode=755,size=65536k' },
    ...DEVICES.map((d) => ({ target: `/dev/${d}`, source: `/dev/${d}`, file: true })),
    { target: '/dev/shm', type: 'tmpfs', options: 'mode=1777,size=65536k' },
    { target: '/sys', type: 'sysfs', readOnly: true },
    { target: '/etc/hosts', source: etcFiles.hosts, file: true },
    { target: '/etc/hostname', source: etcFiles.hostname, file: true },
    { target: '/etc/resolv.conf', source: etcFiles.resolvConf, file: true },
  ];
}

/** The symbolic links of /dev every container has. */
export const DEV_SYMLINKS: Array<[string, string]> = [
  ['/dev/fd', '/proc/self/fd'],
  ['/dev/stdin', '/proc/self/fd/0'],
  ['/dev/stdout', '/proc/self/fd/1'],
  ['/dev/stderr', '/proc/self/fd/2'],
  ['/dev/ptmx', 'pts/ptmx'],
];

/**
 * Mounts in the order to make them: a path after the mounts above it (shorter paths first, the
 * given order among equals), so a volume inside another volume's path lands inside it.
 */
export function orderMounts(mounts: Mount[]): Mount[] {
  const depth = (m: Mount): number => m.target.replace(/\/+$/, '').split('/').length;
  return mounts
    .map((m, i) => ({ m, i }))
    .sort((a, b) => depth(a.m) - depth(b.m) || a.i - b.i)
    .map(({ m }) => m);
}

/** The helper (Perl: on every Debian host, and it can chroot, set groups and exec with an argv[0]). */
export const LAUNCH_HELPER = String.raw`
use strict; use warnings; use JSON::PP; use POSIX (); use Fcntl qw(F_SETFD FD_CLOEXEC); use File::Path qw(make_path); use File::Basename qw(dirname);
# fd 3, when given, closes at the exec: the runner's sign that the program runs.
our $started;
if (open($started, '>&=', 3)) { fcntl($started, F_SETFD, FD_CLOEXEC); }
my $p = JSON::PP->new->decode($ENV{CAPSTAN_CONTAINER});
sub fail { print STDERR "pod-runner: $_[0]\n"; exit 128; }
sub run { system(@_) == 0 or fail("@_ failed"); }
run('hostname', $p->{hostname});
my $r = $p->{root};
run('mount', '-t', 'overlay', 'overlay', '-o', 'lowerdir=' . join(':', @{$p->{lower}}) . ",upperdir=$p->{upper},workdir=$p->{work}", $r);
my $devDone = 0;
for my $m (@{$p->{mounts}}) {
  my $t = $r . $m->{target};
  if ($m->{file}) { make_path(dirname($t)); unless (-e $t) { open(my $fh, '>', $t) or fail("creating $m->{target}: $!"); close $fh; } }
  else { make_path($t) unless -d $t; }
  if (defined $m->{type}) {
    my $o = join(',', grep { defined } ($m->{options}, $m->{readOnly} ? 'ro' : undef));
    run('mount', '-t', $m->{type}, ($o ne '' ? ('-o', $o) : ()), $m->{type}, $t);
  } else {
    run('mount', '--bind', $m->{source}, $t);
    run('mount', '-o', 'remount,bind,ro', $t) if $m->{readOnly};
  }
  if ($m->{target} eq '/dev' && !$devDone) {
    $devDone = 1;
    for my $l (@{$p->{symlinks}}) { symlink($l->[1], $r . $l->[0]); }
    make_path("$r/dev/pts");
  }
}
run('mount', '-o', 'remount,bind,ro', $r) if $p->{readOnlyRoot};
chroot($r) or fail("chroot: $!");
chdir('/');
my $wd = $p->{workingDir};
if (!-d $wd) { make_path($wd) or fail("working directory $wd: $!"); chown($p->{uid}, $p->{gid}, $wd); }
chdir($wd) or fail("working directory $wd: $!");
# The bounding set (prctl PR_CAPBSET_DROP): what the program keeps once executed; no_new_privs (PR_SET_NO_NEW_PRIVS).
if (ref $p->{capabilities}) {
  my %keep = map { $_ => 1 } @{$p->{capabilities}};
  for my $c (0 .. 63) { syscall(157, 24, $c, 0, 0, 0) unless $keep{$c}; }
}
if ($p->{noNewPrivileges}) { syscall(157, 38, 1, 0, 0, 0) == 0 or fail("no_new_privs: $!"); }
$) = join(' ', $p->{gid}, $p->{gid}, @{$p->{groups}});
$( = $p->{gid};
POSIX::setgid($p->{gid}) or fail("setgid: $!");
POSIX::setuid($p->{uid}) or fail("setuid: $!") if $p->{uid} != 0;
%ENV = %{$p->{env}};
my @argv = @{$p->{argv}};
fail('no command') unless @argv;
exec { $argv[0] } @argv or fail("exec $argv[0]: $!");
`;

/** The command (and its environment) that starts a container in network namespace `netns` (the host's when undefined). */
export function launchCommand(netns: string | undefined, plan: LaunchPlan): { command: string; args: string[]; env: Record<string, string> } {
  const inNamespace = ['unshare', '--mount', '--uts', '--propagation', 'private', 'perl', '-e', LAUNCH_HELPER];
  return {
    command: netns === undefined ? inNamespace[0] : 'ip',
    args: netns === undefined ? inNamespace.slice(1) : ['netns', 'exec', netns, ...inNamespace],
    env: {
      PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      CAPSTAN_CONTAINER: JSON.stringify({ ...plan, mounts: orderMounts(plan.mounts) }),
    },
  };
}

/**
 * Runs `argv` in the running container whose main process is `pid` (started from `plan`), with
 * nsenter: its mount, UTS and network namespaces, root and working directory, uid and gid, and the
 * container's environment. Resolves with the exit code, or undefined when it did not end within
 * `timeoutMs` (it is then killed) or could not start; output is discarded.
 */
export function execInContainer(pid: number, plan: Pick<LaunchPlan, 'uid' | 'gid' | 'env'>, argv: string[], timeoutMs: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const child = spawnInContainer(pid, plan, argv, 'ignore');
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve(code ?? undefined);
    });
  });
}

/** Starts `argv` in the running container whose main process is `pid` (see execInContainer), with the given stdio. */
export function spawnInContainer(pid: number, plan: Pick<LaunchPlan, 'uid' | 'gid' | 'env'>, argv: string[], stdio: 'ignore' | 'pipe'): ChildProcess {
  const args = ['-t', String(pid), '-m', '-u', '-n', '-r', '-w', '-S', String(plan.uid), '-G', String(plan.gid), '--', ...argv];
  return spawn('nsenter', args, { env: plan.env, stdio });
}
