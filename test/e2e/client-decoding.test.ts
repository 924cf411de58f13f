/**
 * Whatever is sent, client-go and the Python client never meet an object they cannot decode. The test
 * sends the invalid corpus into one namespace: every case of test/fixtures/validation/ whose kind is
 * one of ten namespaced kinds (Deployments, ReplicaSets, StatefulSets, DaemonSets, Pods, Services,
 * Jobs, CronJobs, ConfigMaps, Secrets), created for real, plus the hand-written hostile bodies of
 * ./hostile-bodies.ts. Every answer must be 201 or a 4xx Status, never a 5xx. Then two real clients
 * list and watch (from resourceVersion "0", which replays the stored objects as ADDED events) every
 * kind in that namespace with their typed APIs:
 *
 * - test/clients/go-decode: client-go v0.36's typed clientset, once in JSON and once in protobuf
 *   (built by scripts/build-go-decode.sh, cached by source hash);
 * - test/clients/python-decode: the official `kubernetes` Python client's typed list_namespaced_*
 *   calls and kubernetes.watch.Watch (a venv from scripts/ensure-python-client.sh).
 *
 * Each must report no error for any kind and encoding, and list and watch exactly the objects the
 * server accepted (the namespace's objects before the writes, plus one per 201). The whole runs on
 * the embedded store and on Redis.
 */
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { allBackends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { KINDS, NAME_PLACEHOLDER, hostileBodies, type KindInfo } from './hostile-bodies.js';
import { restFor, type Rest } from './rest.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CORPUS = join(ROOT, 'test', 'fixtures', 'validation');
const PYTHON_CHECK = join(ROOT, 'test', 'clients', 'python-decode', 'decode_check.py');
/** Building client-go from an empty module cache, or installing the Python client, takes minutes. */
const SETUP_TIMEOUT_MS = 9 * 60_000;
const CHECK_TIMEOUT_MS = 60_000;

type Obj = Record<string, unknown>;

/** One line of either checker. */
interface CheckLine {
  resource: string;
  encoding: string;
  listed: number;
  watched: number;
  error: string;
}

/** What the server answered for one kind. */
interface Tally {
  sent: number;
  accepted: number;
  refused: number;
  byCode: Map<number, number>;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program to its end (killed after `timeoutMs`), collecting its output. */
function run(command: string, args: string[], timeoutMs: number): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => {
      stderr += `\n(killed after ${timeoutMs} ms)`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (e) => {
      stderr += String(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs a setup script that prints a path as its last stdout line, and returns the path. */
async function setupPath(script: string): Promise<string> {
  const r = await run('bash', [join(ROOT, 'scripts', script)], SETUP_TIMEOUT_MS);
  const path = r.stdout.trim().split('\n').pop() ?? '';
  if (r.code !== 0 || path === '' || !existsSync(path)) throw new Error(`scripts/${script} failed (exit ${String(r.code)}):\n${r.stderr}`);
  return path;
}

function parseLines(what: string, r: Run): CheckLine[] {
  assert.equal(r.code, 0, `${what} exited with ${String(r.code)}:\n${r.stderr.slice(-4000)}`);
  return r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as CheckLine);
}

function collectionPath(info: KindInfo, ns: string): string {
  return `${info.apiVersion === 'v1' ? '/api/v1' : `/apis/${info.apiVersion}`}/namespaces/${ns}/${info.resource}`;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/**
 * A corpus object made to create in `ns` under a unique name. A name that is not a valid object name
 * is kept as it is (so its case stays invalid; duplicates are refused as invalid, not as conflicts),
 * and an object with only generateName gets its name from the server.
 */
function corpusBody(object: Obj, ns: string, unique: string): string {
  const metadata = { ...(object.metadata as Obj | undefined) };
  if (typeof metadata.name === 'string' && DNS_SUBDOMAIN.test(metadata.name) && metadata.name.length < 40) metadata.name = `${metadata.name}-${unique}`;
  if (metadata.namespace !== undefined) metadata.namespace = ns;
  return JSON.stringify({ ...object, metadata });
}

let goDecode: string;
let python: string;

before(
  async () => {
    [goDecode, python] = await Promise.all([setupPath('build-go-decode.sh'), setupPath('ensure-python-client.sh')]);
  },
  { timeout: SETUP_TIMEOUT_MS + 30_000 },
);

for (const backend of allBackends())
  describe(`client decoding (${backend.name})`, () => {
    let srv: TestServer;
    before(async () => {
      srv = await startTestServer({}, await backend.open());
    });
    after(async () => {
      await srv?.stop();
      await backend.stop();
    });
    test('client-go (JSON and protobuf) and the Python client decode every object stored from the invalid corpus', { timeout: 120_000 }, (t) =>
      sendThenList(t, srv),
    );
  });

async function sendThenList(t: TestContext, srv: TestServer): Promise<void> {
  const started = Date.now();
  const rest: Rest = restFor(srv.url);
  const ns = await rest.namespace('decode');
  const byKind = new Map(KINDS.map((k) => [k.kind, k]));
  const tallies = new Map<string, Tally>(KINDS.map((k) => [k.resource, { sent: 0, accepted: 0, refused: 0, byCode: new Map() }]));

  // Objects a namespace may start with (none today): the clients list those too.
  const baseline = new Map<string, number>();
  for (const info of KINDS) {
    const r = await rest.get(collectionPath(info, ns));
    assert.equal(r.status, 200, r.text);
    baseline.set(info.resource, (r.body.items as unknown[]).length);
  }

  let n = 0;
  const send = async (kind: string, label: string, body: string): Promise<void> => {
    const info = byKind.get(kind);
    if (info === undefined) return;
    const r = await rest.post(collectionPath(info, ns), body);
    const tally = tallies.get(info.resource) as Tally;
    tally.sent++;
    tally.byCode.set(r.status, (tally.byCode.get(r.status) ?? 0) + 1);
    if (r.status === 201) {
      tally.accepted++;
      return;
    }
    tally.refused++;
    assert.ok(r.status >= 400 && r.status < 500, `${kind} "${label}": ${r.status} ${r.text.slice(0, 500)}\nbody: ${body.slice(0, 500)}`);
    assert.equal(r.body?.kind, 'Status', `${kind} "${label}": a ${r.status} without a Status: ${r.text.slice(0, 300)}`);
    assert.equal(r.body.code, r.status, `${kind} "${label}": Status code`);
  };

  let corpusCases = 0;
  for (const file of readdirSync(CORPUS)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const corpus = JSON.parse(readFileSync(join(CORPUS, file), 'utf8')) as { cases: Array<{ name: string; object: Obj }> };
    for (const c of corpus.cases) {
      if (!byKind.has(c.object.kind as string)) continue;
      corpusCases++;
      await send(c.object.kind as string, `${file}: ${c.name}`, corpusBody(c.object, ns, `c${++n}`));
    }
  }
  const hostile = hostileBodies();
  for (const h of hostile) await send(h.kind, h.label, h.body.replaceAll(NAME_PLACEHOLDER, `h${++n}`));
  const sentMs = Date.now() - started;

  const kubeArgs = ['--kubeconfig', srv.kubeconfig, '--namespace', ns];
  const [goRun, pyRun] = await Promise.all([
    run(goDecode, [...kubeArgs, '--watch-timeout', '10s'], CHECK_TIMEOUT_MS),
    run(python, [PYTHON_CHECK, ...kubeArgs, '--watch-timeout', '10'], CHECK_TIMEOUT_MS),
  ]);
  const goLines = parseLines('go-decode', goRun);
  const pyLines = parseLines('python-decode', pyRun);

  t.diagnostic(`sent ${corpusCases} corpus cases and ${hostile.length} hostile bodies in ${sentMs} ms; clients done after ${Date.now() - started} ms`);
  t.diagnostic('resource       sent  accepted  refused  answers          listed/watched: go-json  go-protobuf  python');
  for (const info of KINDS) {
    const tally = tallies.get(info.resource) as Tally;
    const seen = (got: CheckLine[], encoding: string): string => {
      const l = got.find((x) => x.resource === info.resource && x.encoding === encoding);
      return l === undefined ? '-' : `${l.listed}/${l.watched}${l.error === '' ? '' : '!'}`;
    };
    const codes = [...tally.byCode]
      .sort((a, b) => a[0] - b[0])
      .map(([c, k]) => `${c}x${k}`)
      .join(' ');
    t.diagnostic(
      `${info.resource.padEnd(13)} ${String(tally.sent).padStart(5)} ${String(tally.accepted).padStart(9)} ${String(tally.refused).padStart(8)}  ${codes.padEnd(16)} ` +
        `${seen(goLines, 'json').padStart(7)} ${seen(goLines, 'protobuf').padStart(12)} ${seen(pyLines, 'json').padStart(7)}`,
    );
  }

  const expectLines = (what: string, got: CheckLine[], encodings: string[]): void => {
    assert.deepEqual(
      got.map((l) => `${l.resource}/${l.encoding}`),
      encodings.flatMap((e) => KINDS.map((k) => `${k.resource}/${e}`)),
      `${what}: one line per resource and encoding`,
    );
    // Every failing line is reported at once: one bad object usually breaks one list per client.
    const failures: string[] = [];
    for (const l of got) {
      const tally = tallies.get(l.resource) as Tally;
      const expected = (baseline.get(l.resource) ?? 0) + tally.accepted;
      if (l.error !== '') failures.push(`${what} ${l.resource} (${l.encoding}): ${l.error}`);
      else if (l.listed !== expected || l.watched !== expected) {
        failures.push(`${what} ${l.resource} (${l.encoding}): listed ${l.listed}, watched ${l.watched}; the server holds ${expected}`);
      }
    }
    assert.deepEqual(failures, [], failures.join('\n'));
  };
  expectLines('client-go', goLines, ['json', 'protobuf']);
  expectLines('python', pyLines, ['json']);

  // The corpus really is mixed: something of every kind stored, and refusals for most of them.
  for (const info of KINDS) assert.ok((tallies.get(info.resource) as Tally).accepted > 0, `no ${info.kind} was accepted: the check would list nothing`);
  const refused = [...tallies.values()].reduce((s, x) => s + x.refused, 0);
  assert.ok(refused > 100, `only ${refused} bodies refused`);
}
