/**
 * The built entry: after `npm run build`, dist/src/main.js runs the esbuild bundle with V8's code
 * cache (scripts/bundle.mjs), and that process serves: readiness, writes and reads, a fresh
 * --cert-dir (certificate generation, loaded on first use) and protobuf (protobufjs, required from
 * node_modules at run time, outside the bundle).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { api, CAPSTAN_MAIN, spawnCapstan, uniqueName, type CapstanProcess } from '../helpers/capstan.js';
import { SERVER_NODE_FLAGS } from '../../src/cluster/node-flags.js';

const distSrc = dirname(CAPSTAN_MAIN);

describe('the bundled entry (dist/src/main.js)', () => {
  let server: CapstanProcess;
  let certDir: string;
  before(async () => {
    certDir = mkdtempSync(join(tmpdir(), 'capstan-bundled-'));
    server = await spawnCapstan(['--port=0', '--cert-dir', certDir], { CAPSTAN_DEBUG_CODE_CACHE: '1' });
  });
  after(async () => {
    await server.stop();
    rmSync(certDir, { recursive: true, force: true });
  });

  test('is the bundle loader, next to the bundle and its code cache (run `npm run build`, not tsc alone)', () => {
    assert.match(readFileSync(CAPSTAN_MAIN, 'utf8'), /capstan-bundle\.cjs/);
    assert.ok(existsSync(join(distSrc, 'capstan-bundle.cjs')));
    assert.deepEqual(
      readdirSync(distSrc)
        .filter((f) => f.endsWith('.v8cache'))
        .map((f) => f.replace(/^capstan-bundle\.[0-9a-f]+\./, ''))
        .sort(),
      ['plain.v8cache', 'server.v8cache'],
    );
  });

  test('compiles from the code cache made at build time', () => {
    assert.match(server.stderr(), /^code cache: accepted$/m);
  });

  test('compiles from the code cache made for them under the flags npm start, the image and workers use', () => {
    const run = spawnSync(process.execPath, [...SERVER_NODE_FLAGS, CAPSTAN_MAIN, '--help'], {
      env: { ...process.env, CAPSTAN_DEBUG_CODE_CACHE: '1' },
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stderr, /^code cache: accepted$/m);
  });

  test('is ready, generated its certificates and serves writes and reads', async () => {
    assert.equal((await api(server.url, '/readyz')).status, 200);
    assert.ok(existsSync(join(certDir, 'ca.crt')));
    const name = uniqueName('bundled');
    const created = await api(server.url, '/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } }),
    });
    assert.equal(created.status, 201, created.text);
    const read = await api(server.url, `/api/v1/namespaces/default/configmaps/${name}`);
    assert.equal(read.status, 200);
    assert.deepEqual(read.body.data, { k: 'v' });
    const proto = await fetch(`${server.url}/api/v1/namespaces/default/configmaps/${name}`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    assert.equal(proto.status, 200);
    assert.equal(proto.headers.get('content-type'), 'application/vnd.kubernetes.protobuf');
    const bytes = Buffer.from(await proto.arrayBuffer());
    // kube's protobuf envelope: the magic "k8s\0", then the Unknown message holding the object.
    assert.deepEqual([...bytes.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00]);
    assert.ok(bytes.includes(Buffer.from(name)));
  });
});
