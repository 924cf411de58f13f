/**
 * `node dist/bench/rbac-cost.js [seconds]`: the cost of RBAC authorization per request. Starts an
 * in-process server (memory store) per mode and measures, as a user outside system:masters (bound
 * to the bootstrap `edit` role in the RBAC run), GETs/s of one ConfigMap and creates/s of
 * ConfigMaps with 8 requests in flight, plus the time of one authorizer decision. Prints a table.
 */
import type { IncomingMessage } from 'node:http';
import { Agent, request } from 'node:http';
import type { Authenticator } from '../src/auth/authenticator.js';
import { defaultConfig } from '../src/cli/flags.js';
import { logger } from '../src/logging/logger.js';
import { startServer } from '../src/server/app.js';
import { MemoryStorage } from '../src/storage/memory-storage.js';

const seconds = Number(process.argv[2] ?? '3');
const USER = { name: 'bench-user', uid: '', groups: ['system:authenticated'], extra: {} };
const ADMIN = { name: 'system:admin', uid: '', groups: ['system:masters', 'system:authenticated'], extra: {} };
const byHeader: Authenticator = {
  async authenticate(req: IncomingMessage) {
    return req.headers['x-bench-user'] === 'user' ? USER : ADMIN;
  },
};

const agent = new Agent({ keepAlive: true, maxSockets: 8 });

function call(url: string, method: string, path: string, body?: unknown, user = 'user'): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, agent, headers: { 'content-type': 'application/json', 'x-bench-user': user } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** Requests per second of `one` with 8 in flight for `seconds`. */
async function rate(one: (i: number) => Promise<number>, expect: number): Promise<number> {
  const end = Date.now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (Date.now() < end) {
        const status = await one(n++);
        if (status !== expect) throw new Error(`status ${status}, expected ${expect}`);
      }
    }),
  );
  return n / seconds;
}

async function measure(mode: string): Promise<string[]> {
  logger.setLevel('error');
  const storage = new MemoryStorage({ historyMs: 300_000 });
  const srv = await startServer({ ...defaultConfig(), port: 0, logLevel: 'error', authorizationMode: mode }, storage, { authenticator: byHeader });
  const url = srv.url;
  await call(url, 'POST', '/api/v1/namespaces', { metadata: { name: 'bench' } }, 'admin');
  await call(
    url,
    'POST',
    '/apis/rbac.authorization.k8s.io/v1/namespaces/bench/rolebindings',
    {
      metadata: { name: 'bench-edit' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: USER.name }],
    },
    'admin',
  );
  await call(url, 'POST', '/api/v1/namespaces/bench/configmaps', { metadata: { name: 'one' }, data: { a: 'b' } }, 'admin');
  const attrs = {
    user: USER,
    verb: 'get',
    resourceRequest: true,
    apiGroup: '',
    apiVersion: 'v1',
    namespace: 'bench',
    resource: 'configmaps',
    subresource: '',
    name: 'one',
    path: '',
  };
  while (!(await srv.context.authorizer.authorize(attrs)).allowed) await new Promise((r) => setImmediate(r));
  const started = performance.now();
  for (let i = 0; i < 20_000; i++) await srv.context.authorizer.authorize(attrs);
  const decisionUs = ((performance.now() - started) * 1000) / 20_000;
  const gets = await rate(() => call(url, 'GET', '/api/v1/namespaces/bench/configmaps/one'), 200);
  const creates = await rate((i) => call(url, 'POST', '/api/v1/namespaces/bench/configmaps', { metadata: { name: `c-${i}` } }), 201);
  await srv.close();
  return [mode, gets.toFixed(0), creates.toFixed(0), decisionUs.toFixed(1)];
}

const rows = [['mode', 'GETs/s', 'creates/s', 'µs/decision']];
for (const mode of ['AlwaysAllow', 'RBAC']) rows.push(await measure(mode));
for (const r of rows) console.log(r.map((c, i) => (i === 0 ? c.padEnd(12) : c.padStart(12))).join(''));
agent.destroy();
