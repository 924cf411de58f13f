/**
 * The floor stand-in (bench/floor-server.ts) is the measuring stick of `--only floor`: these tests
 * drive it over HTTPS as the bench does, so a stand-in that skipped work would fail here rather than
 * report a floor that is too low.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect as http2Connect } from 'node:http2';
import type { Readable } from 'node:stream';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateCA, generateLeaf } from '../../src/tls/certificates.js';

const FLOOR_SERVER = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'floor-server.js');
const PATH = '/api/v1/namespaces/floor/configmaps';

/**
 * Runs the stand-in with `extra` flags for the enclosing describe: before its tests, a CA and a
 * serving pair for 127.0.0.1 in a temporary directory and the stand-in listening on them; after,
 * the stand-in stopped and the directory removed. The returned object holds its port and the CA.
 */
function useStandIn(extra: string[]): { port: number; ca: string } {
  const standIn = { port: 0, ca: '' };
  let dir = '';
  let child: ChildProcess | undefined;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'floor-server-'));
    const authority = await generateCA('floor-test-ca');
    const leaf = await generateLeaf(authority, { usage: 'server', commonName: 'floor', dnsNames: ['localhost'], ips: ['127.0.0.1'] });
    standIn.ca = authority.cert;
    writeFileSync(join(dir, 'tls.crt'), leaf.cert);
    writeFileSync(join(dir, 'tls.key'), leaf.key);
    const spawned = spawn(process.execPath, [FLOOR_SERVER, '--cert', join(dir, 'tls.crt'), '--key', join(dir, 'tls.key'), ...extra], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child = spawned;
    standIn.port = await new Promise<number>((resolve, reject) => {
      let out = '';
      spawned.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /listening (\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      spawned.once('exit', (code) => reject(new Error(`floor-server exited ${String(code)}`)));
    });
  });
  after(async () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });
  return standIn;
}

/** Collects the lines of a watch body into `lines`; resolves once there are two, rejects if the body ends first. */
function twoLines(body: Readable, lines: string[]): Promise<void> {
  let buffered = '';
  return new Promise<void>((resolve, reject) => {
    body.on('data', (d: Buffer) => {
      buffered += d.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        lines.push(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
      }
      if (lines.length >= 2) resolve();
    });
    body.on('end', () => reject(new Error(`the watch ended after ${lines.length} events`)));
  });
}

describe('bench floor server', () => {
  const standIn = useStandIn([]);

  const call = (method: string, path: string, body?: string): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: standIn.port, method, path, ca: standIn.ca, servername: 'localhost' }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', reject);
      req.end(body);
    });

  test('a watch gets every create as an ADDED line, in order, with the resourceVersion its 201 carried', async () => {
    const list = await call('GET', `${PATH}?limit=1`);
    assert.equal(list.status, 200);
    const startVersion = Number(JSON.parse(list.body).metadata.resourceVersion);
    assert.ok(startVersion > 0);

    const lines: string[] = [];
    let watchStatus = 0;
    let gotTwo!: Promise<void>;
    const watchReq = request({
      host: '127.0.0.1',
      port: standIn.port,
      method: 'GET',
      path: `${PATH}?watch=1&resourceVersion=${startVersion}`,
      ca: standIn.ca,
      servername: 'localhost',
    });
    const opened = new Promise<void>((resolveOpened, rejectOpened) => {
      watchReq.on('error', rejectOpened);
      watchReq.on('response', (res) => {
        watchStatus = res.statusCode ?? 0;
        gotTwo = twoLines(res, lines);
        resolveOpened();
      });
    });
    watchReq.end();
    await opened;
    assert.equal(watchStatus, 200);

    const created: Array<{ metadata: { name: string; resourceVersion: string; uid: string; managedFields: unknown[] } }> = [];
    for (const name of ['a', 'b']) {
      const res = await call('POST', PATH, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { payload: 'x' } }));
      assert.equal(res.status, 201);
      created.push(JSON.parse(res.body));
    }
    assert.ok(Number(created[0].metadata.resourceVersion) > startVersion);
    assert.ok(Number(created[1].metadata.resourceVersion) > Number(created[0].metadata.resourceVersion));
    assert.notEqual(created[0].metadata.uid, created[1].metadata.uid);
    assert.equal(created[0].metadata.managedFields.length, 1);

    await gotTwo;
    watchReq.destroy();
    const events = lines.map((l) => JSON.parse(l));
    assert.deepEqual(
      events.map((e) => [e.type, e.object.metadata.name, e.object.metadata.resourceVersion]),
      created.map((o) => ['ADDED', o.metadata.name, o.metadata.resourceVersion]),
    );
  });

  test('a GET of one object still answers the stored ConfigMap', async () => {
    const res = await call('GET', `${PATH}/floor`);
    assert.equal(res.status, 200);
    assert.equal(JSON.parse(res.body).kind, 'ConfigMap');
  });
});

describe('bench floor server over HTTP/2 (--http2)', () => {
  const standIn = useStandIn(['--http2']);

  test('watches sharing one connection each get every create as an ADDED line, in order', async () => {
    const session = http2Connect(`https://127.0.0.1:${standIn.port}`, { ca: standIn.ca, servername: 'localhost' });
    try {
      const call = (method: string, path: string, body?: string): Promise<{ status: number; body: string }> =>
        new Promise((resolve, reject) => {
          const stream = session.request({ ':method': method, ':path': path });
          let status = 0;
          let text = '';
          stream.on('response', (headers) => (status = Number(headers[':status'])));
          stream.on('data', (d: Buffer) => (text += d.toString()));
          stream.on('end', () => resolve({ status, body: text }));
          stream.on('error', reject);
          stream.end(body);
        });
      const list = await call('GET', `${PATH}?limit=1`);
      assert.equal(list.status, 200);
      const startVersion = JSON.parse(list.body).metadata.resourceVersion;

      const watches = [0, 1, 2].map(() => {
        const stream = session.request({ ':method': 'GET', ':path': `${PATH}?watch=1&resourceVersion=${startVersion}` });
        const lines: string[] = [];
        const status = new Promise<number>((resolve) => stream.on('response', (headers) => resolve(Number(headers[':status']))));
        const gotTwo = twoLines(stream, lines);
        return { stream, lines, status, gotTwo };
      });
      for (const w of watches) assert.equal(await w.status, 200);

      const created: Array<{ metadata: { name: string; resourceVersion: string } }> = [];
      for (const name of ['a', 'b']) {
        const res = await call('POST', PATH, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { payload: 'x' } }));
        assert.equal(res.status, 201);
        created.push(JSON.parse(res.body));
      }
      for (const w of watches) {
        await w.gotTwo;
        w.stream.close();
        assert.deepEqual(
          w.lines.map((l) => JSON.parse(l)).map((e) => [e.type, e.object.metadata.name, e.object.metadata.resourceVersion]),
          created.map((o) => ['ADDED', o.metadata.name, o.metadata.resourceVersion]),
        );
      }
    } finally {
      session.close();
    }
  });
});
