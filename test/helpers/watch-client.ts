/** A raw HTTP watch client for tests: collects the JSON events of one watch stream, line by line. */
import { request, type IncomingMessage } from 'node:http';

export interface WatchEvent {
  type: string;
  object: any;
}

export interface WatchStream {
  status: number;
  headers: IncomingMessage['headers'];
  events: WatchEvent[];
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  /** Waits until `predicate` holds for the events received so far (or rejects after `timeoutMs`). */
  waitFor(predicate: (events: WatchEvent[]) => boolean, timeoutMs?: number): Promise<WatchEvent[]>;
  /** Pauses reading (the server's writes back up), then resumes. */
  pause(): void;
  resume(): void;
  close(): void;
}

/** Opens `url + path` as a watch; resolves once response headers arrived. */
export function openWatch(url: string, path: string, headers: Record<string, string> = {}): Promise<WatchStream> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { headers }, (res) => {
      const events: WatchEvent[] = [];
      let buffer = '';
      const waiters = new Set<() => void>();
      const notify = (): void => {
        for (const w of [...waiters]) w();
      };
      let endedResolve: () => void = () => undefined;
      const ended = new Promise<void>((r) => {
        endedResolve = r;
      });
      let done = false;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl).trim();
          buffer = buffer.slice(nl + 1);
          if (line !== '') events.push(JSON.parse(line) as WatchEvent);
        }
        notify();
      });
      const finish = (): void => {
        if (done) return;
        done = true;
        if (buffer.trim() !== '' && res.statusCode === 200) {
          try {
            events.push(JSON.parse(buffer) as WatchEvent);
          } catch {
            /* partial line at close */
          }
        }
        endedResolve();
        notify();
      };
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        events,
        ended,
        waitFor: (predicate, timeoutMs = 5000) =>
          new Promise((ok, fail) => {
            const check = (): void => {
              if (predicate(events)) {
                waiters.delete(check);
                clearTimeout(timer);
                ok(events);
              } else if (done) {
                waiters.delete(check);
                clearTimeout(timer);
                fail(
                  new Error(
                    `watch ended before the condition held; events: ${JSON.stringify(events.map((e) => [e.type, e.object?.metadata?.name, e.object?.metadata?.resourceVersion]))}`,
                  ),
                );
              }
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(
                new Error(
                  `timed out; events so far: ${JSON.stringify(events.map((e) => [e.type, e.object?.metadata?.name, e.object?.metadata?.resourceVersion]))}`,
                ),
              );
            }, timeoutMs);
            waiters.add(check);
            check();
          }),
        pause: () => res.pause(),
        resume: () => res.resume(),
        close: () => {
          req.destroy();
        },
      });
    });
    req.on('error', reject);
    req.end();
  });
}
