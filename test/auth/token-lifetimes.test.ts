/**
 * TokenRequest lifetimes as kube-apiserver 1.36 grants them: `--service-account-max-token-expiration`
 * shortens longer requests (with kube's warning), `--service-account-extend-token-expiration` (on by
 * default) makes a pod-bound token asked for the ServiceAccount plugin's 3607 s, for the API
 * audiences, valid for a year with a `warnafter` claim at the requested end (as the reference does:
 * exp - iat = 31536000, warnafter - iat = 3607, status and spec still say 3607 s), and the flags'
 * bounds are kube's.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs } from '../../src/cli/flags.js';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';

const YEAR = 365 * 24 * 60 * 60;
const ns = 'authz-tokens';

interface Issued {
  status: number;
  warning: string | null;
  spec: Record<string, unknown>;
  lifetime: number;
  warnafter: number | undefined;
  statusSeconds: number;
}

async function setUp(srv: TestServer): Promise<string> {
  const post = async (path: string, body: unknown): Promise<any> => {
    const r = await api(srv.url, path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(r.status, 201, r.text);
    return r.body;
  };
  await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await post(`/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } });
  const pod = await post(`/api/v1/namespaces/${ns}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p' },
    spec: { serviceAccountName: 'robot', containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
  });
  return pod.metadata.uid as string;
}

async function issue(srv: TestServer, spec: Record<string, unknown>): Promise<Issued> {
  const r = await api(srv.url, `/api/v1/namespaces/${ns}/serviceaccounts/robot/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec }),
  });
  assert.equal(r.status, 201, r.text);
  const claims = JSON.parse(Buffer.from(String(r.body.status.token).split('.')[1], 'base64url').toString('utf8'));
  const created = Date.parse(r.body.metadata.creationTimestamp) / 1000;
  return {
    status: r.status,
    warning: r.headers.get('warning'),
    spec: r.body.spec,
    lifetime: claims.exp - claims.iat,
    warnafter: claims['kubernetes.io'].warnafter === undefined ? undefined : claims['kubernetes.io'].warnafter - claims.iat,
    statusSeconds: Date.parse(r.body.status.expirationTimestamp) / 1000 - created,
  };
}

describe('default lifetimes (extension on, no maximum)', () => {
  let srv: TestServer;
  let podUid: string;
  before(async () => {
    srv = await startTestServer();
    podUid = await setUp(srv);
  });
  after(async () => srv?.stop());

  test('a pod-bound token of 3607 s for the API audiences is valid for a year, with warnafter at the requested end', async () => {
    const t = await issue(srv, { expirationSeconds: 3607, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: podUid } });
    assert.equal(t.lifetime, YEAR);
    assert.equal(t.warnafter, 3607);
    assert.equal(t.spec.expirationSeconds, 3607);
    assert.equal(t.statusSeconds, 3607);
    assert.equal(t.warning, null);
  });

  test('other audiences, other lifetimes and unbound tokens are not extended', async () => {
    const bound = { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: podUid };
    for (const spec of [
      { expirationSeconds: 3607, audiences: ['vault'], boundObjectRef: bound },
      { expirationSeconds: 3600, boundObjectRef: bound },
      { expirationSeconds: 3607 },
    ]) {
      const t = await issue(srv, spec);
      assert.equal(t.lifetime, spec.expirationSeconds, JSON.stringify(spec));
      assert.equal(t.warnafter, undefined);
    }
  });

  test('without a maximum, a long request is granted as asked', async () => {
    const t = await issue(srv, { expirationSeconds: 10 * YEAR });
    assert.equal(t.lifetime, 10 * YEAR);
    assert.equal(t.warning, null);
  });
});

describe('--service-account-max-token-expiration=2h', () => {
  let srv: TestServer;
  let podUid: string;
  before(async () => {
    srv = await startTestServer({ serviceAccountMaxTokenExpirationSeconds: 7200 });
    podUid = await setUp(srv);
  });
  after(async () => srv?.stop());

  test("a longer request is shortened to the maximum with kube's warning", async () => {
    const t = await issue(srv, { expirationSeconds: 10800 });
    assert.equal(t.lifetime, 7200);
    assert.equal(t.spec.expirationSeconds, 7200);
    assert.equal(t.statusSeconds, 7200);
    assert.equal(t.warning, '299 - "requested expiration of 10800 seconds shortened to 7200 seconds"');
  });

  test('the extension still applies: it ignores the maximum', async () => {
    const t = await issue(srv, { expirationSeconds: 3607, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: podUid } });
    assert.equal(t.lifetime, YEAR);
    assert.equal(t.warnafter, 3607);
  });
});

describe('--service-account-max-token-expiration=1h with extension off', () => {
  let srv: TestServer;
  let podUid: string;
  before(async () => {
    srv = await startTestServer({ serviceAccountMaxTokenExpirationSeconds: 3600, serviceAccountExtendTokenExpiration: false });
    podUid = await setUp(srv);
  });
  after(async () => srv?.stop());

  test('a projected-token request is shortened to the hour and not extended', async () => {
    const t = await issue(srv, { expirationSeconds: 3607, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: podUid } });
    assert.equal(t.lifetime, 3600);
    assert.equal(t.warnafter, undefined);
    assert.equal(t.warning, '299 - "requested expiration of 3607 seconds shortened to 3600 seconds"');
  });
});

test("the flags take kube's values and bounds", () => {
  const config = (args: string[]): any => {
    const parsed = parseArgs(args);
    assert.equal(parsed.help, false);
    return parsed.help ? undefined : parsed.config;
  };
  assert.equal(config([]).serviceAccountMaxTokenExpirationSeconds, 0);
  assert.equal(config([]).serviceAccountExtendTokenExpiration, true);
  assert.equal(config(['--service-account-max-token-expiration=48h']).serviceAccountMaxTokenExpirationSeconds, 172800);
  assert.equal(config(['--service-account-extend-token-expiration=false']).serviceAccountExtendTokenExpiration, false);
  for (const bad of ['30m', `${2 ** 32 + 1}s`]) {
    assert.throws(() => parseArgs([`--service-account-max-token-expiration=${bad}`]), {
      message: /the service-account-max-token-expiration must be between 1 hour and 2\^32 seconds/,
    });
  }
});
