/**
 * Helpers for the flow-control tests: an in-process Capstan serving HTTPS with static tokens, a
 * keep-alive HTTPS client, an authorization webhook that holds chosen requests until the test lets
 * them go (a held request keeps its APF seats: authorization runs after flow control, as in kube),
 * and a Prometheus text reader.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Agent, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerConfig } from '../../src/config/server-config.js';
import { startTestServer, type TestServer } from '../helpers/capstan.js';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any;
}

/** HTTPS requests over kept-alive connections, each with a bearer token (or none). */
export class TokenClient {
  private readonly agent: Agent;

  constructor(
    readonly url: string,
    ca: string,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: Infinity, ca });
  }

  send(token: string | undefined, path: string, init: { method?: string; body?: unknown; contentType?: string } = {}): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const payload = init.body === undefined ? undefined : JSON.stringify(init.body);
      const headers: Record<string, string> = {};
      if (token !== undefined) headers.authorization = `Bearer ${token}`;
      if (payload !== undefined) {
        headers['content-type'] = init.contentType ?? 'application/json';
        // Node's client sends a DELETE body without a length unless told.
        headers['content-length'] = String(Buffer.byteLength(payload));
      }
      const req = request(`${this.url}${path}`, { method: init.method ?? (payload === undefined ? 'GET' : 'POST'), headers, agent: this.agent }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** A GET whose response is handed over as a stream once its headers arrive (a watch). */
  open(token: string, path: string): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = request(`${this.url}${path}`, { headers: { authorization: `Bearer ${token}` }, agent: this.agent }, resolve);
      req.on('error', reject);
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/**
 * An authorization webhook (SubjectAccessReview v1) allowing everything, but holding the answer for
 * any request whose object name starts with `hold-` until {@link release}.
 */
export class HoldingAuthorizer {
  private server: Server | undefined;
  private readonly held = new Map<string, ServerResponse>();
  private readonly waiters = new Map<string, () => void>();
  private readonly reviews = new Map<string, string>();
  configFile = '';

  async start(dir: string): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const review = JSON.parse(body);
        const name: string = review.spec?.resourceAttributes?.name ?? '';
        const answer = JSON.stringify({ ...review, status: { allowed: true } });
        if (!name.startsWith('hold-')) {
          res.setHeader('content-type', 'application/json');
          res.end(answer);
          return;
        }
        this.held.set(name, res);
        this.reviews.set(name, answer);
        this.waiters.get(name)?.();
      });
    });
    await new Promise<void>((r) => this.server?.listen(0, '127.0.0.1', r));
    const port = (this.server.address() as AddressInfo).port;
    this.configFile = join(dir, 'authz-webhook.kubeconfig');
    writeFileSync(
      this.configFile,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: hook\n  cluster:\n    server: http://127.0.0.1:${port}/authorize\nusers:\n- name: apiserver\n  user: {}\ncontexts:\n- name: hook\n  context: {cluster: hook, user: apiserver}\ncurrent-context: hook\n`,
    );
  }

  /** Resolves once the request for object `name` is being authorized (it got past flow control). */
  reached(name: string): Promise<void> {
    if (this.held.has(name)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.set(name, resolve));
  }

  /** Whether the request for object `name` has reached authorization. */
  has(name: string): boolean {
    return this.held.has(name);
  }

  /** Answers the held review for `name` (allowed). */
  release(name: string): void {
    const res = this.held.get(name);
    if (res === undefined) throw new Error(`${name} is not held`);
    this.held.delete(name);
    res.setHeader('content-type', 'application/json');
    res.end(this.reviews.get(name));
  }

  releaseAll(): void {
    for (const name of [...this.held.keys()]) this.release(name);
  }

  async stop(): Promise<void> {
    this.releaseAll();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

/** An in-process server with HTTPS and static tokens (`token,user,uid,"groups"` lines); its plain port is the administrator. */
export interface ApfServer {
  srv: TestServer;
  client: TokenClient;
  /** The plain-HTTP (administrator) URL. */
  adminUrl: string;
  stop(): Promise<void>;
}

export async function startApfServer(
  tokens: string[],
  config: Partial<ServerConfig> = {},
  dir = mkdtempSync(join(tmpdir(), 'capstan-apf-')),
): Promise<ApfServer> {
  const tokenFile = join(dir, 'tokens.csv');
  writeFileSync(tokenFile, `${tokens.join('\n')}\n`);
  const certDir = join(dir, 'pki');
  const srv = await startTestServer({ securePort: 0, certDir, tokenAuthFile: tokenFile, ...config });
  const secureUrl = srv.server.secureUrl;
  if (secureUrl === undefined) throw new Error('no HTTPS URL');
  const client = new TokenClient(secureUrl, readFileSync(join(certDir, 'ca.crt'), 'utf8'));
  return {
    srv,
    client,
    adminUrl: srv.url,
    stop: async () => {
      client.close();
      await srv.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** JSON request on the administrator's plain port. */
export async function admin(
  url: string,
  path: string,
  method = 'GET',
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': contentType },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body: parsed };
}

const FC = '/apis/flowcontrol.apiserver.k8s.io/v1';

/** Creates a PriorityLevelConfiguration and a FlowSchema sending `users` to it. */
export async function createLevel(
  url: string,
  name: string,
  limited: Record<string, unknown>,
  users: string[],
  precedence: number,
  distinguisher: 'ByUser' | 'ByNamespace' = 'ByUser',
): Promise<void> {
  const pl = await admin(url, `${FC}/prioritylevelconfigurations`, 'POST', { metadata: { name }, spec: { type: 'Limited', limited } });
  if (pl.status !== 201) throw new Error(`create level ${name}: ${pl.status} ${JSON.stringify(pl.body)}`);
  const fs = await admin(url, `${FC}/flowschemas`, 'POST', {
    metadata: { name },
    spec: {
      matchingPrecedence: precedence,
      priorityLevelConfiguration: { name },
      distinguisherMethod: { type: distinguisher },
      rules: [
        {
          subjects: users.map((u) => ({ kind: 'User', user: { name: u } })),
          resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }],
          nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
        },
      ],
    },
  });
  if (fs.status !== 201) throw new Error(`create flow schema ${name}: ${fs.status} ${JSON.stringify(fs.body)}`);
}

/** metadata.uid of every FlowSchema and PriorityLevelConfiguration, by name. */
export async function flowControlUids(url: string): Promise<{ schemas: Map<string, string>; levels: Map<string, string> }> {
  const uids = async (resource: string): Promise<Map<string, string>> => {
    const list = await admin(url, `${FC}/${resource}`);
    return new Map((list.body.items as any[]).map((o) => [o.metadata.name as string, o.metadata.uid as string]));
  };
  return { schemas: await uids('flowschemas'), levels: await uids('prioritylevelconfigurations') };
}

/** One sample of a Prometheus text exposition. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

/** The value of the sample `name` whose labels include `labels` (undefined when absent). */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

export async function scrape(url: string): Promise<Sample[]> {
  return parseMetrics(await (await fetch(`${url}/metrics`)).text());
}

/** Polls `check` until it returns a value other than undefined (or throws after `timeoutMs`, with `what`). */
export async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A server whose requests an authorization webhook can hold, with a one-seat level for some users. */
export interface HeldOneSeatServer {
  server: ApfServer;
  hook: HoldingAuthorizer;
  stop(): Promise<void>;
}

/**
 * Starts a server with TOKENS (kube's token CSV lines) whose authorization is HoldingAuthorizer's
 * webhook, so a test holds requests after flow control admitted them, and a level `one-seat` (one
 * seat, nothing lent or borrowed, QUEUES queues of hand size 1 and length 5) for USERS; resolves once
 * the level is in force.
 */
export async function startHeldOneSeatServer(
  tokens: string[],
  users: string[],
  queues: number,
  config: Partial<ServerConfig> = {},
): Promise<HeldOneSeatServer> {
  const dir = mkdtempSync(join(tmpdir(), 'capstan-apf-held-'));
  const hook = new HoldingAuthorizer();
  await hook.start(dir);
  const server = await startApfServer(
    tokens,
    {
      maxRequestsInflight: 50,
      maxMutatingRequestsInflight: 0,
      authorizationMode: 'Webhook',
      authorizationWebhook: { configFile: hook.configFile, version: 'v1', authorizedTtlMs: 0, unauthorizedTtlMs: 0 },
      ...config,
    },
    dir,
  );
  await createLevel(
    server.adminUrl,
    'one-seat',
    {
      nominalConcurrencyShares: 1,
      lendablePercent: 0,
      borrowingLimitPercent: 0,
      limitResponse: { type: 'Queue', queuing: { queues, handSize: 1, queueLengthLimit: 5 } },
    },
    users,
    60,
  );
  await until('the level in force', async () => {
    const m = await scrape(server.adminUrl);
    return sampleValue(m, 'apiserver_flowcontrol_current_limit_seats', { priority_level: 'one-seat' }) === 1 ? true : undefined;
  });
  return {
    server,
    hook,
    stop: async () => {
      await hook.stop();
      await server.stop();
    },
  };
}
