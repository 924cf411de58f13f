import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { certificateKubeconfigFor } from './kubeconfig.js';

/**
 * `capstan client-kubeconfig`: issues a client certificate for a user (CN) and its groups (O) from a
 * CA, by default the one Capstan generated in `--cert-dir`, and writes a kubeconfig that uses it.
 * This is how kube-controller-manager, kube-scheduler and other components get their own identity
 * (`system:kube-controller-manager`, `system:kube-scheduler`), which kube's bootstrap RBAC binds.
 */

export const CLIENT_KUBECONFIG_USAGE = `Usage: capstan client-kubeconfig --server URL --user NAME [--group GROUP]... [flags]

Issues a client certificate (CN NAME, O GROUP...) signed by a CA and writes a kubeconfig using it.

  --server URL        the server's address, e.g. https://127.0.0.1:6443 (required)
  --user NAME         the user the certificate authenticates as (required)
  --group GROUP       a group of the user (repeatable)
  --cert-dir DIR      Capstan's --cert-dir: its ca.crt and ca.key sign, its ca.crt is trusted (default .capstan/pki)
  --ca-cert FILE      sign with this CA certificate instead (PEM; ECDSA P-256 key, as Capstan generates)
  --ca-key FILE       ... and this key
  --server-ca FILE    CA bundle to trust for the server (default: the signing CA)
  --days N            certificate lifetime in days (default 365)
  --out FILE          write here (mode 0600) instead of standard output
`;

/** What the command was asked for. */
export interface ClientKubeconfigRequest {
  server: string;
  user: string;
  groups: string[];
  caCertFile: string;
  caKeyFile: string;
  serverCaFile: string;
  days: number;
  out: string | undefined;
}

/** Parses the command's arguments; throws with a one-line message on a bad or missing one. */
export function parseClientKubeconfigArgs(argv: string[]): ClientKubeconfigRequest {
  const values = new Map<string, string[]>();
  const known = ['--server', '--user', '--group', '--cert-dir', '--ca-cert', '--ca-key', '--server-ca', '--days', '--out'];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (!known.includes(name)) throw new Error(`unknown flag: ${arg}`);
    let value: string;
    if (eq > 0) value = arg.slice(eq + 1);
    else {
      const next = argv[i + 1];
      if (next === undefined) throw new Error(`flag needs an argument: ${name}`);
      value = next;
      i++;
    }
    values.set(name, [...(values.get(name) ?? []), value]);
  }
  const one = (name: string): string | undefined => {
    const v = values.get(name);
    if (v !== undefined && v.length > 1 && name !== '--group') throw new Error(`${name} given more than once`);
    return v?.[0];
  };
  const server = one('--server');
  const user = one('--user');
  if (server === undefined || !/^https:\/\/\S+$/.test(server)) throw new Error('--server must be an https:// URL');
  if (user === undefined || user === '') throw new Error('--user is required');
  const certDir = one('--cert-dir') ?? '.capstan/pki';
  const caCert = one('--ca-cert');
  const caKey = one('--ca-key');
  if ((caCert === undefined) !== (caKey === undefined)) throw new Error('--ca-cert and --ca-key go together');
  const daysText = one('--days') ?? '365';
  const days = Number(daysText);
  if (!Number.isInteger(days) || days < 1 || days > 3650)
    throw new Error(`--days must be a whole number of days from 1 to 3650, got ${JSON.stringify(daysText)}`);
  const caCertFile = caCert ?? join(certDir, 'ca.crt');
  return {
    server,
    user,
    groups: values.get('--group') ?? [],
    caCertFile,
    caKeyFile: caKey ?? join(certDir, 'ca.key'),
    serverCaFile: one('--server-ca') ?? caCertFile,
    days,
    out: one('--out'),
  };
}

function readPem(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

/** Issues the certificate and returns the kubeconfig text. */
export async function clientKubeconfig(request: ClientKubeconfigRequest): Promise<string> {
  const ca = { cert: readPem(request.caCertFile, 'CA certificate'), key: readPem(request.caKeyFile, 'CA key') };
  const serverCa = readPem(request.serverCaFile, 'server CA');
  // Loaded only here: @peculiar/x509 is not needed to serve.
  const { generateLeaf } = await import('../tls/certificates.js');
  const leaf = await generateLeaf(ca, { usage: 'client', user: request.user, groups: request.groups }, request.days);
  return certificateKubeconfigFor(request.server, serverCa, leaf.cert, leaf.key, request.user);
}

/** The command: returns the process exit code. */
export async function clientKubeconfigCommand(argv: string[]): Promise<number> {
  if (argv[0] === '--help' || argv[0] === '-h') {
    process.stdout.write(CLIENT_KUBECONFIG_USAGE);
    return 0;
  }
  try {
    const request = parseClientKubeconfigArgs(argv);
    const text = await clientKubeconfig(request);
    if (request.out === undefined) process.stdout.write(text);
    else writeFileSync(request.out, text, { mode: 0o600 });
    return 0;
  } catch (err) {
    process.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n${argv.length === 0 ? CLIENT_KUBECONFIG_USAGE : ''}`);
    return 2;
  }
}
