/**
 * The server URL and credentials of a kubeconfig's current context, as the benchmark's HTTP client
 * takes them: a client certificate (Capstan's admin kubeconfig) or a bearer token (the reference's),
 * the CA it names, or no verification where the kubeconfig says `insecure-skip-tls-verify`.
 */
import { readFileSync } from 'node:fs';
import { load } from 'js-yaml';
import type { ServerAccess } from '../http-client.js';
import { asObject, objectElements, type Obj } from '../../src/api/values.js';

export interface KubeconfigAccess {
  server: string;
  access: ServerAccess;
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function named(list: unknown, name: string, field: string): Obj {
  const entry = objectElements(list).find((e) => e.name === name);
  return asObject(entry?.[field]);
}

const decode = (b64: string | undefined): string | undefined => (b64 === undefined ? undefined : Buffer.from(b64, 'base64').toString('utf8'));

/** Reads PATH; throws when its current context names no server. */
export function readKubeconfig(path: string): KubeconfigAccess {
  const config = asObject(load(readFileSync(path, 'utf8')));
  const context = named(config.contexts, text(config['current-context']) ?? '', 'context');
  const cluster = named(config.clusters, text(context.cluster) ?? '', 'cluster');
  const user = named(config.users, text(context.user) ?? '', 'user');
  const server = text(cluster.server);
  if (server === undefined) throw new Error(`${path}: the current context names no server`);
  const access: ServerAccess = {};
  const token = text(user.token);
  if (token !== undefined) access.token = token;
  const cert = decode(text(user['client-certificate-data']));
  const key = decode(text(user['client-key-data']));
  if (cert !== undefined && key !== undefined) {
    access.cert = cert;
    access.key = key;
  }
  const ca = decode(text(cluster['certificate-authority-data']));
  if (cluster['insecure-skip-tls-verify'] === true) access.insecureTls = true;
  else if (ca !== undefined) access.ca = ca;
  return { server, access };
}
