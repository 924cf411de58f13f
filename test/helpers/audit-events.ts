/** Reading an audit log file in tests: its events, and waiting until they are complete. */
import { existsSync, readFileSync } from 'node:fs';

export type AuditEvent = Record<string, any>;

/** The events of the log at `path` (none while it does not exist), one JSON object per line. */
export function readAuditEvents(path: string): AuditEvent[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as AuditEvent);
}

/** Waits until `done` holds for the log's events (a request's last stage is written once its response ends). */
export async function waitForAuditEvents(path: string, done: (events: AuditEvent[]) => boolean, timeoutMs = 10_000): Promise<AuditEvent[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = readAuditEvents(path);
    if (done(events)) return events;
    if (Date.now() > deadline) throw new Error(`audit events not complete after ${timeoutMs} ms: ${events.length} events`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
