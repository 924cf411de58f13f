/**
 * A minimal informer for the benchmark: LIST, then WATCH from the list's resourceVersion (with
 * bookmarks), keeping a summary of every object by name and calling back on each change; a watch
 * that ends is resumed from the last resourceVersion seen, and one answered 410 Gone lists again.
 * It speaks JSON over the same kind of connection the HTTP client uses.
 */
import { request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { ServerAccess } from '../http-client.js';
import { asObject, asString, type Obj } from '../../src/api/values.js';

export interface InformerOptions<S> {
  server: string;
  access: ServerAccess;
  /** Collection path, e.g. /api/v1/namespaces/scale/pods. */
  path: string;
  /** What is kept per object. */
  summarize: (obj: Obj) => S;
  /** Called after each change is applied (the summary is undefined for a deletion). */
  onChange?: (name: string, summary: S | undefined, now: number) => void;
}

/** A running informer; `stop` closes its watch. */
export class Informer<S> {
  readonly items = new Map<string, S>();
  private rv = '';
  private stopped = false;
  private readonly agent: HttpsAgent | undefined;
  private current: { destroy(): void } | undefined;
  private synced!: () => void;
  /** Resolves once the first LIST has been applied. */
  readonly ready = new Promise<void>((resolve) => (this.synced = resolve));

  constructor(private readonly options: InformerOptions<S>) {
    const a = options.access;
    this.agent = options.server.startsWith('https:')
      ? new HttpsAgent({
          keepAlive: true,
          rejectUnauthorized: a.insecureTls !== true,
          ...(a.ca !== undefined ? { ca: a.ca } : {}),
          ...(a.cert !== undefined && a.key !== undefined ? { cert: a.cert, key: a.key } : {}),
        })
      : undefined;
    void this.run();
  }

  stop(): void {
    this.stopped = true;
    this.current?.destroy();
    this.agent?.destroy();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        if (this.rv === '') await this.list();
        this.synced();
        const gone = await this.watch();
        if (gone) this.rv = '';
      } catch {
        if (this.stopped) return;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  private stream(path: string, onLine: (line: string) => void): Promise<number> {
    const u = new URL(this.options.server);
    const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.options.access.token !== undefined) headers.authorization = `Bearer ${this.options.access.token}`;
    return new Promise((resolve, reject) => {
      const req = send({ host: u.hostname, port: u.port, path, headers, ...(this.agent !== undefined ? { agent: this.agent } : {}) }, (res) => {
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            if (line.trim() !== '') onLine(line);
          }
        });
        res.once('end', () => {
          if (buf.trim() !== '') onLine(buf);
          resolve(res.statusCode ?? 0);
        });
        res.once('error', reject);
      });
      req.once('error', reject);
      this.current = req;
      req.end();
    });
  }

  private async list(): Promise<void> {
    let body = '';
    const status = await this.stream(this.options.path, (line) => (body += line));
    if (status !== 200) throw new Error(`LIST ${this.options.path}: ${status}`);
    const list = asObject(JSON.parse(body));
    const seen = new Set<string>();
    const now = performance.now();
    for (const item of Array.isArray(list.items) ? list.items : []) {
      const obj = asObject(item);
      const name = asString(asObject(obj.metadata).name);
      seen.add(name);
      const s = this.options.summarize(obj);
      this.items.set(name, s);
      this.options.onChange?.(name, s, now);
    }
    for (const name of [...this.items.keys()]) {
      if (seen.has(name)) continue;
      this.items.delete(name);
      this.options.onChange?.(name, undefined, now);
    }
    this.rv = asString(asObject(list.metadata).resourceVersion);
  }

  /** Watches until the stream ends; true when the server answered 410 Gone (list again). */
  private async watch(): Promise<boolean> {
    let gone = false;
    const sep = this.options.path.includes('?') ? '&' : '?';
    const path = `${this.options.path}${sep}watch=1&allowWatchBookmarks=true&timeoutSeconds=600&resourceVersion=${encodeURIComponent(this.rv)}`;
    const status = await this.stream(path, (line) => {
      const event = asObject(JSON.parse(line));
      const obj = asObject(event.object);
      if (event.type === 'ERROR') {
        if (obj.code === 410) gone = true;
        return;
      }
      const meta = asObject(obj.metadata);
      if (typeof meta.resourceVersion === 'string') this.rv = meta.resourceVersion;
      if (event.type === 'BOOKMARK') return;
      const name = asString(meta.name);
      const now = performance.now();
      if (event.type === 'DELETED') {
        this.items.delete(name);
        this.options.onChange?.(name, undefined, now);
      } else {
        const s = this.options.summarize(obj);
        this.items.set(name, s);
        this.options.onChange?.(name, s, now);
      }
    });
    return gone || status === 410;
  }
}
