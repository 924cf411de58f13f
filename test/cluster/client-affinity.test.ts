/**
 * `--storage=redis --workers 2`: one program's HTTP/2 connections of different credentials are
 * served by one worker, as kube-controller-manager's are (its informers authenticate with its
 * client certificate, its controllers with service account tokens, over two connections). A
 * connection handed to the other worker gets GOAWAY after its first request, and the client's
 * next connection goes to the worker serving the other one. Needs `redis-server`
 * (scripts/ensure-test-deps.sh installs it).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type ClientHttp2Session, type SecureClientSessionOptions } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCA, generateLeaf, type CertificateAndKey } from '../../src/tls/certificates.js';
import { eventually, startRedisWorkers, workersThatServed, type RedisWorkers } from '../helpers/redis-workers.js';

const TOKEN = 'affinity-controller-token';
const PROGRAM = 'test-controller-manager/v1.36.4 (linux/amd64) kubernetes/0123abc';
const LIST = '/api/v1/namespaces/default/configmaps';

/** GET `path` on `session` with `userAgent`, as the token's user when `token` is set; the status. */
function getOn(session: ClientHttp2Session, path: string, userAgent: string, token?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ':path': path, 'user-agent': userAgent };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    const stream = session.request(headers);
    let status = 0;
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.on('data', () => undefined);
    stream.on('end', () => resolve(status));
    stream.on('error', reject);
    stream.end();
  });
}

describe("one client's connections of different credentials share a worker", () => {
  let env: RedisWorkers;
  let dir: string;
  let clientCert: CertificateAndKey;
  let secureUrl: string;
  const sessions: ClientHttp2Session[] = [];

  const open = (options: SecureClientSessionOptions = {}): ClientHttp2Session => {
    const session = connect(secureUrl, { rejectUnauthorized: false, ...options });
    session.on('error', () => undefined);
    sessions.push(session);
    return session;
  };

  /** The worker that logged the request whose path holds `marker`. */
  const workerOf = async (marker: string): Promise<number> => {
    await eventually(() => workersThatServed(env.cap.stderr(), marker).length > 0, `the request log line of ${marker}`);
    const workers = workersThatServed(env.cap.stderr(), marker);
    assert.equal(workers.length, 1, `one worker served ${marker}: ${JSON.stringify(workers)}`);
    return workers[0];
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-affinity-'));
    const ca = await generateCA('affinity-test-ca');
    clientCert = await generateLeaf(ca, { usage: 'client', user: 'system:kube-controller-manager', groups: ['system:masters'] });
    writeFileSync(join(dir, 'client-ca.crt'), ca.cert);
    writeFileSync(join(dir, 'tokens.csv'), `${TOKEN},system:serviceaccount:kube-system:test-controller,uid-1,"system:masters"\n`);
    env = await startRedisWorkers({ args: [`--token-auth-file=${join(dir, 'tokens.csv')}`, `--client-ca-file=${join(dir, 'client-ca.crt')}`] });
    secureUrl = /"secureUrl":"(https:[^"]+)"/.exec(env.cap.stderr())?.[1] ?? '';
    assert.ok(secureUrl !== '', 'the cluster serves HTTPS');
  });
  after(async () => {
    for (const s of sessions) s.destroy();
    await env?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  test("a token connection handed to the other worker is moved to the certificate connection's worker", async () => {
    // The "informers": the program's certificate, on whichever worker the primary picks.
    const informers = open({ cert: clientCert.cert, key: clientCert.key });
    assert.equal(await getOn(informers, `${LIST}?limit=1&affinity=informers`, `${PROGRAM}/shared-informers`), 200);
    const home = await workerOf('affinity=informers');

    // The "controllers": a token, another TLS configuration. The primary hands a new connection to
    // the worker with fewer, so one lands on the other worker within a few tries (each one that
    // lands beside the informers stays open and counts).
    let parted: ClientHttp2Session | undefined;
    for (let i = 0; i < 6 && parted === undefined; i++) {
      const controllers = open();
      const goaway = new Promise<void>((resolve) => controllers.once('goaway', () => resolve()));
      assert.equal(
        await getOn(controllers, `${LIST}?limit=1&affinity=controllers-${i}`, `${PROGRAM}/system:serviceaccount:kube-system:test-controller`, TOKEN),
        200,
      );
      if ((await workerOf(`affinity=controllers-${i}`)) !== home) {
        // Its first request was answered; then the worker sends GOAWAY, on the primary's word.
        await goaway;
        parted = controllers;
      }
    }
    assert.ok(parted !== undefined, 'a controllers connection landed on the other worker');
    await eventually(() => parted?.closed === true || parted?.destroyed === true, 'the parted connection closes');
    assert.match(env.cap.stderr(), /"msg":"moving a connection to the worker serving its client's other connections"/);

    // Its client reconnects, as client-go does after GOAWAY: the primary hands the new connection
    // to the informers' worker, whatever the count of connections says.
    const reconnected = open();
    assert.equal(await getOn(reconnected, `${LIST}?limit=1&affinity=reconnected`, `${PROGRAM}/system:serviceaccount:kube-system:test-controller`, TOKEN), 200);
    assert.equal(await workerOf('affinity=reconnected'), home, "the reconnected controllers are served beside the program's informers");
    // The informers' connection was never asked to move.
    assert.equal(informers.closed || informers.destroyed, false);
    assert.equal(await getOn(informers, `${LIST}?limit=1&affinity=informers-after`, `${PROGRAM}/shared-informers`), 200);
    assert.equal(await workerOf('affinity=informers-after'), home);
  });

  test('once a program shows a second credential, its older connection on the other worker moves', async () => {
    // kube-controller-manager's way: connections of its certificate on both workers (its delegated
    // authentication client's, then its informers'), then its controllers' token connection.
    const program = 'another-controller-manager/v1.36.4 (linux/amd64) kubernetes/0123abc';
    const first = open({ cert: clientCert.cert, key: clientCert.key });
    assert.equal(await getOn(first, `${LIST}?limit=1&older=first`, `${program}/authentication`), 200);
    const firstWorker = await workerOf('older=first');
    let second: ClientHttp2Session | undefined;
    for (let i = 0; i < 6 && second === undefined; i++) {
      const candidate = open({ cert: clientCert.cert, key: clientCert.key });
      assert.equal(await getOn(candidate, `${LIST}?limit=1&older=second-${i}`, `${program}/shared-informers`), 200);
      if ((await workerOf(`older=second-${i}`)) !== firstWorker) second = candidate;
    }
    assert.ok(second !== undefined, 'a connection of the certificate landed on each worker');
    // One credential so far: nothing moved.
    assert.equal(first.closed || second.closed, false);
    const goaways = [first, second].map((s) => new Promise<ClientHttp2Session>((resolve) => s.once('goaway', () => resolve(s))));

    const controllers = open();
    assert.equal(await getOn(controllers, `${LIST}?limit=1&older=controllers`, `${program}/system:serviceaccount:kube-system:test-controller`, TOKEN), 200);
    const home = await workerOf('older=controllers');
    // The certificate connection on the other worker is asked to reconnect, the other stays.
    const moved = await Promise.race(goaways);
    const apart = firstWorker === home ? second : first;
    assert.equal(moved, apart, 'the connection on the worker without the controllers got GOAWAY');
    const stayed = moved === first ? second : first;
    assert.equal(stayed.closed, false, 'the connection beside the controllers stays');
    assert.equal(controllers.closed, false, 'the newest connection, beside most of its program, stays');
    assert.equal(
      await getOn(controllers, `${LIST}?limit=1&older=controllers-after`, `${program}/system:serviceaccount:kube-system:test-controller`, TOKEN),
      200,
    );
    assert.equal(await workerOf('older=controllers-after'), home);
  });
});
