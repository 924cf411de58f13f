/**
 * Replays the operation sequences of test/fixtures/managedfields/ against an API server over HTTP
 * and reads back the managedFields after each step. Shared by test/e2e/managed-fields.test.ts
 * (against Capstan) and scripts/capture-managedfields-goldens.mjs (against kube-apiserver 1.36,
 * whose answers are the goldens).
 */

/** One write of a sequence. `{ns}` in paths is the sequence's namespace. */
export interface Step {
  /** create: POST body; update: PUT body; update-live: GET, merge `merge` in (RFC 7386), PUT; patch: PATCH body. */
  verb: 'create' | 'update' | 'update-live' | 'patch';
  path: string;
  query: string;
  userAgent: string;
  patchType?: 'merge' | 'strategic' | 'json';
  body?: unknown;
  merge?: unknown;
}

/** A named list of steps on one object. */
export interface Sequence {
  name: string;
  steps: Step[];
  /** A known difference from kube-apiserver, outside the field manager: the case is reported, not failed. */
  todo?: string;
}

/** What one step left: its status code and the object's managedFields as a GET returns them. */
export interface StepResult {
  status: number;
  managedFields: Record<string, unknown>[];
}

/** An HTTP client: method, path (with query), headers, body text; answers status and body text. */
export type Send = (method: string, path: string, headers: Record<string, string>, body?: string) => Promise<{ status: number; text: string }>;

const PATCH_TYPES = { merge: 'application/merge-patch+json', strategic: 'application/strategic-merge-patch+json', json: 'application/json-patch+json' };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return patch;
  const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function objectPath(step: Step): string {
  if (step.verb === 'create') {
    const body = step.body as { metadata: { name: string } };
    return `${step.path}/${body.metadata.name}`;
  }
  return step.path.replace(/\/(status|scale)$/, '');
}

/**
 * Runs `seq` in namespace `ns`; calls `beforeStep` before each step (the capture waits there for
 * a new second, so that every step's entries carry their own time). Throws when a read fails.
 */
export async function replay(send: Send, ns: string, seq: Sequence, beforeStep?: (i: number) => Promise<void>): Promise<StepResult[]> {
  const results: StepResult[] = [];
  for (const [i, step] of seq.steps.entries()) {
    if (beforeStep) await beforeStep(i);
    const path = step.path.replaceAll('{ns}', ns) + (step.query === '' ? '' : `?${step.query}`);
    const headers: Record<string, string> = { 'user-agent': step.userAgent, accept: 'application/json' };
    let res: { status: number; text: string };
    if (step.verb === 'patch') {
      res = await send('PATCH', path, { ...headers, 'content-type': PATCH_TYPES[step.patchType ?? 'merge'] }, JSON.stringify(step.body));
    } else if (step.verb === 'update-live') {
      const current = await send('GET', step.path.replaceAll('{ns}', ns), headers);
      if (current.status !== 200) throw new Error(`${seq.name} step ${i}: GET ${current.status} ${current.text}`);
      const body = mergePatch(JSON.parse(current.text), step.merge);
      res = await send('PUT', path, { ...headers, 'content-type': 'application/json' }, JSON.stringify(body));
    } else {
      res = await send(step.verb === 'create' ? 'POST' : 'PUT', path, { ...headers, 'content-type': 'application/json' }, JSON.stringify(step.body));
    }
    const read = await send('GET', objectPath(step).replaceAll('{ns}', ns), headers);
    if (read.status !== 200) throw new Error(`${seq.name} step ${i}: GET ${read.status} ${read.text}`);
    const obj = JSON.parse(read.text) as { metadata?: { managedFields?: Record<string, unknown>[] } };
    results.push({ status: res.status, managedFields: obj.metadata?.managedFields ?? [] });
  }
  return results;
}

/** A golden step: the status and the entries, each `time` replaced by `step-N`, the step that last set it. */
export interface GoldenStep {
  status: number;
  managedFields: Record<string, unknown>[];
}

/** The identifier of an entry (manager, operation, apiVersion, subresource), for matching entries across steps. */
export function entryId(e: Record<string, unknown>): string {
  return JSON.stringify([e.manager, e.operation, e.apiVersion, e.subresource]);
}

/**
 * Replaces each entry's time by the step that set it, given that every step ran in its own second:
 * the step whose start second equals the time. Entries keep kube's order.
 */
export function labelTimes(results: StepResult[], stepSeconds: number[]): GoldenStep[] {
  return results.map((r) => ({
    status: r.status,
    managedFields: r.managedFields.map((e) => {
      if (typeof e.time !== 'string') return e;
      const sec = Math.floor(Date.parse(e.time) / 1000);
      const step = stepSeconds.lastIndexOf(sec);
      return { ...e, time: step >= 0 ? `step-${step}` : 'before' };
    }),
  }));
}
