#!/usr/bin/env node
import { createServer, type Server } from 'node:http';
import { ETCD_STAND_IN_USAGE } from './etcd-usage.js';

/**
 * The `etcd` of a Capstan envtest assets directory: envtest starts etcd before kube-apiserver and
 * waits until `GET <client URL>/health` answers 200, but Capstan keeps its objects in its embedded
 * store, so this stand-in only answers that check. It listens on every http URL of
 * `--listen-client-urls` (default http://127.0.0.1:2379), answers `/health` as etcd does
 * (`{"health":"true","reason":""}`) and 404 elsewhere, ignores every other flag, and exits 0 on
 * SIGTERM or SIGINT.
 */

/** The value of `--name=value` or `--name value` (last occurrence wins), or undefined. */
function flagValue(argv: string[], name: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === `--${name}` || arg === `-${name}`) value = argv[++i];
    else if (arg.startsWith(`--${name}=`) || arg.startsWith(`-${name}=`)) value = arg.slice(arg.indexOf('=') + 1);
  }
  return value;
}

function listen(server: Server, url: URL): Promise<void> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(url.port === '' ? 2379 : url.port), host === '' ? '127.0.0.1' : host, () => resolve());
  });
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(ETCD_STAND_IN_USAGE);
    return;
  }
  if (argv.includes('--version')) {
    process.stdout.write('etcd Version: capstan-stand-in\n');
    return;
  }
  const urls = (flagValue(argv, 'listen-client-urls') ?? 'http://127.0.0.1:2379')
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '')
    .map((u) => new URL(u));
  const servers: Server[] = [];
  for (const url of urls) {
    if (url.protocol !== 'http:') throw new Error(`--listen-client-urls: only http URLs are served by the stand-in, not ${url.href}`);
    const server = createServer((req, res) => {
      if (req.method === 'GET' && (req.url === '/health' || req.url?.startsWith('/health?') === true)) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('{"health":"true","reason":""}');
        return;
      }
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('404 page not found\n');
    });
    await listen(server, url);
    servers.push(server);
  }
  const stop = (): void => {
    for (const s of servers) s.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`etcd stand-in: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
