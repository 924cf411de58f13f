/**
 * Keeping one client's HTTP/2 connections on one worker: the client key read from the user agent,
 * the primary's record (ClientAffinity) and the groups a busy worker moves together (clientGroups).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClientAffinity, SETTLE_MS } from '../../src/cluster/client-affinity.js';
import { clientKey, userAgentProgram } from '../../src/server/client-connections.js';
import { clientGroups } from '../../src/server/secure-server.js';

const KCM = 'kube-controller-manager/v1.36.4 (linux/amd64) kubernetes/0123abc';

test('the program is the user agent without the name client-go appends', () => {
  assert.equal(userAgentProgram(`${KCM}/shared-informers`), KCM);
  assert.equal(userAgentProgram(`${KCM}/system:serviceaccount:kube-system:deployment-controller`), KCM);
  assert.equal(userAgentProgram(KCM), KCM);
  // e2e.test puts the test's name after the program: every test of one binary is one program.
  assert.equal(
    userAgentProgram('e2e.test/v1.36.4 (linux/amd64) kubernetes/0123abc -- [sig-apps] Deployment should'),
    'e2e.test/v1.36.4 (linux/amd64) kubernetes/0123abc',
  );
  assert.equal(userAgentProgram('kubectl/v1.33.1'), 'kubectl/v1.33.1');
  assert.equal(userAgentProgram('OpenAPI-Generator/31.0.0/python'), 'OpenAPI-Generator/31.0.0');
  assert.equal(userAgentProgram(''), undefined);
  assert.equal(userAgentProgram(undefined), undefined);
});

test('a client is its address and program; nothing without either', () => {
  assert.equal(clientKey('10.0.0.7', `${KCM}/shared-informers`), `10.0.0.7 ${KCM}`);
  assert.equal(clientKey('10.0.0.7', `${KCM}/x`), clientKey('10.0.0.7', `${KCM}/y`));
  assert.notEqual(clientKey('10.0.0.7', `${KCM}/x`), clientKey('10.0.0.8', `${KCM}/x`));
  assert.equal(clientKey(undefined, KCM), undefined);
  assert.equal(clientKey('10.0.0.7', undefined), undefined);
  // A long user agent is read only so far.
  assert.ok((clientKey('10.0.0.7', 'x'.repeat(10_000)) ?? '').length < 300);
});

const client = `127.0.0.1 ${KCM}`;
const cert = { client, address: '127.0.0.1', credential: 'AB:CD' };
const token = { client, address: '127.0.0.1', credential: '' };

test("a connection of another credential on another worker moves to the client's worker, and the next connection from its address follows", () => {
  const affinity = new ClientAffinity<string>();
  assert.deepEqual(affinity.opened('w0', { ...cert, session: 1 }), []);
  assert.deepEqual(affinity.opened('w1', { ...token, session: 1 }), [{ worker: 'w1', session: 1, to: 'w0' }], 'one each: the oldest worker is home');
  assert.equal(
    affinity.pinned('127.0.0.2', () => true),
    undefined,
    'another address is not pinned',
  );
  assert.equal(
    affinity.pinned('127.0.0.1', (w) => w !== 'w0'),
    undefined,
    'a pin to a worker that cannot take connections is not used',
  );
  assert.equal(
    affinity.pinned('127.0.0.1', () => true),
    'w0',
  );
  assert.equal(
    affinity.pinned('127.0.0.1', () => true),
    undefined,
    'a pin is used once',
  );
  // The reconnection reports from w0: it stays.
  assert.deepEqual(affinity.opened('w0', { ...token, session: 2 }), []);
});

test("a client's connections of one credential are left where they are", () => {
  const affinity = new ClientAffinity<string>();
  assert.deepEqual(affinity.opened('w0', { ...token, session: 1 }), []);
  assert.deepEqual(affinity.opened('w1', { ...token, session: 1 }), [], 'same credential: maybe another process');
  assert.equal(
    affinity.pinned('127.0.0.1', () => true),
    undefined,
  );
});

test('once a client shows two credentials, all its connections go to the worker serving most of them', () => {
  // kube-controller-manager: an early connection of its certificate (delegated authentication) on
  // w0, its informers' (the same certificate) on w1, then its controllers' (tokens) on w0.
  const affinity = new ClientAffinity<string>();
  assert.deepEqual(affinity.opened('w0', { ...cert, session: 1 }), []);
  assert.deepEqual(affinity.opened('w1', { ...cert, session: 7 }), []);
  assert.deepEqual(affinity.opened('w0', { ...token, session: 2 }), [{ worker: 'w1', session: 7, to: 'w0' }], 'the informers join the controllers');
  assert.equal(
    affinity.pinned('127.0.0.1', () => true),
    'w0',
  );
  // The informers reconnect beside them; nothing more moves.
  assert.deepEqual(affinity.opened('w0', { ...cert, session: 3 }), []);
});

test('a connection reported gone, or a lost worker, no longer draws others', () => {
  const affinity = new ClientAffinity<string>();
  affinity.opened('w0', { ...cert, session: 1 });
  affinity.gone('w0', 1);
  assert.deepEqual(affinity.opened('w1', { ...token, session: 1 }), []);
  affinity.lost('w1');
  assert.deepEqual(affinity.opened('w2', { ...cert, session: 5 }), [], "a lost worker's connections no longer draw others");
  assert.deepEqual(affinity.opened('w0', { ...token, session: 9 }), [{ worker: 'w0', session: 9, to: 'w2' }]);
  affinity.lost('w2');
  assert.equal(
    affinity.pinned('127.0.0.1', () => true),
    undefined,
    "a lost worker's pins go with it",
  );
  assert.deepEqual(affinity.opened('w0', { ...token, session: 10 }), []);
});

test('a pin expires, and a client has at most eight connections moved a minute', () => {
  let now = 1_000_000;
  const affinity = new ClientAffinity<string>(() => now);
  affinity.opened('w0', { ...cert, session: 1 });
  affinity.opened('w0', { ...cert, session: 2 });
  assert.deepEqual(affinity.opened('w1', { ...token, session: 1 }), [{ worker: 'w1', session: 1, to: 'w0' }]);
  now += 2_500;
  assert.equal(
    affinity.pinned('127.0.0.1', () => true),
    undefined,
    'expired',
  );
  for (let i = 2; i <= 8; i++) assert.equal(affinity.opened('w1', { ...token, session: i }).length, 1, `move ${i}`);
  assert.deepEqual(affinity.opened('w1', { ...token, session: 9 }), [], 'the ninth within a minute stays');
  now += 61_000;
  // w1 now serves the ninth: w0 still serves more of the client's connections.
  assert.deepEqual(affinity.opened('w1', { ...token, session: 10 }), [
    { worker: 'w1', session: 9, to: 'w0' },
    { worker: 'w1', session: 10, to: 'w0' },
  ]);
});

test("a busy worker moves one client's connections of different credentials together", () => {
  const groups = clientGroups([
    { client: 'a', credential: 'cert' },
    { client: 'b', credential: '' },
    { client: 'a', credential: '' },
    {},
    { client: 'b', credential: '' },
  ]);
  assert.deepEqual(
    groups.map((g) => [...g].sort()).sort((x, y) => x[0] - y[0]),
    [[0, 2], [1], [3], [4]],
  );
});

test('a client a busy worker shed settles for a while: shed requests name it until SETTLE_MS has passed', () => {
  let now = 1_000_000;
  const affinity = new ClientAffinity<string>(() => now);
  const kwok = { client: '127.0.0.1 kwok/v0.8.0', address: '127.0.0.1', credential: 'EF:01' };
  affinity.opened('w0', { ...kwok, session: 1 });
  affinity.opened('w0', { ...cert, session: 2 });
  assert.deepEqual(affinity.settling(), []);
  affinity.gone('w0', 2);
  assert.deepEqual(affinity.settling(), [], 'a connection that closed of itself was not shed');
  affinity.gone('w0', 1, true);
  assert.deepEqual(affinity.settling(), [kwok.client]);
  affinity.gone('w0', 1, true);
  assert.deepEqual(affinity.settling(), [kwok.client], 'a second report of a forgotten connection changes nothing');
  affinity.opened('w1', { ...kwok, session: 1 });
  now += SETTLE_MS - 1;
  assert.deepEqual(affinity.settling(), [kwok.client], 'still settling where it reconnected');
  now += 1;
  assert.deepEqual(affinity.settling(), []);
});
