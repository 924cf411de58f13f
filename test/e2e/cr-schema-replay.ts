/**
 * Replays the cases of test/fixtures/crd-schema/cases.json (custom resources validated, pruned and
 * defaulted by their CRD's schema) against an API server over HTTP. Shared by
 * test/e2e/cr-schema.test.ts (against Capstan) and scripts/capture-cr-schema-goldens.mjs (against
 * kube-apiserver 1.36, whose answers are the goldens).
 */

/** An HTTP client: method, path (with query), headers, body text; answers status, Warning headers and body text. */
export type Send = (
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
) => Promise<{ status: number; warnings: string[]; text: string }>;

/** A second request on the created object. */
export interface FollowUp {
  method: 'PUT' | 'PATCH' | 'GET';
  subresource?: string;
  query?: string;
  contentType?: string;
  body?: unknown;
}

/** One case: a create, and optionally a request on the created object; the last answer is recorded. */
export interface Case {
  name: string;
  body: Record<string, unknown>;
  query?: string;
  metadataName?: string;
  then?: FollowUp;
}

/** The CRD the cases run against: names and the one version's schema. */
export interface CrdFixture {
  plural: string;
  kind: string;
  schema: Record<string, unknown>;
}

/** What a case's last request answered, with the volatile parts of objects removed. */
export interface CaseResult {
  name: string;
  status: number;
  warnings: string[];
  body: unknown;
}

/** The placeholder recorded answers carry for the group, which differs per run. */
export const GROUP_TOKEN = 'GROUP.example.com';

/** The CRD object of FIXTURE in GROUP (cluster-scoped, one version `v1` with a status subresource). */
export function crdObject(fixture: CrdFixture, group: string): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${fixture.plural}.${group}` },
    spec: {
      group,
      scope: 'Cluster',
      names: { plural: fixture.plural, singular: fixture.kind.toLowerCase(), kind: fixture.kind },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: fixture.schema }, subresources: { status: {} } }],
    },
  };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The answer with what differs run to run removed: uid, times, resourceVersion, managedFields; GROUP replaced. */
export function normalize(text: string, group: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text.split(group).join(GROUP_TOKEN));
  } catch {
    return text;
  }
  if (isRecord(value) && isRecord(value.metadata)) {
    const meta = value.metadata;
    for (const k of ['uid', 'creationTimestamp', 'resourceVersion', 'managedFields']) delete meta[k];
  }
  return value;
}

/** Runs every case against the server behind SEND, with the CRD of FIXTURE already established in GROUP. */
export async function replay(send: Send, fixture: CrdFixture, group: string, cases: Case[]): Promise<CaseResult[]> {
  const base = `/apis/${group}/v1/${fixture.plural}`;
  const json = { 'content-type': 'application/json' };
  const out: CaseResult[] = [];
  let n = 0;
  for (const c of cases) {
    n++;
    const name = c.metadataName ?? `case-${n}`;
    const body = { apiVersion: `${group}/v1`, kind: fixture.kind, ...c.body, metadata: { ...(isRecord(c.body.metadata) ? c.body.metadata : {}), name } };
    let res = await send('POST', `${base}${c.query ? `?${c.query}` : ''}`, json, JSON.stringify(body));
    if (c.then !== undefined && res.status === 201) {
      const created: unknown = JSON.parse(res.text);
      const rv = isRecord(created) && isRecord(created.metadata) ? created.metadata.resourceVersion : undefined;
      const t = c.then;
      const path = `${base}/${name}${t.subresource ? `/${t.subresource}` : ''}${t.query ? `?${t.query}` : ''}`;
      let text: string | undefined;
      if (t.method === 'PUT') {
        const b = isRecord(t.body) ? t.body : {};
        text = JSON.stringify({ apiVersion: `${group}/v1`, kind: fixture.kind, ...b, metadata: { name, resourceVersion: rv } });
      } else if (t.method === 'PATCH') text = JSON.stringify(t.body);
      res = await send(t.method, path, t.method === 'GET' ? {} : { 'content-type': t.contentType ?? 'application/json' }, text);
    }
    out.push({ name: c.name, status: res.status, warnings: res.warnings, body: normalize(res.text, group) });
    await send('DELETE', `${base}/${name}`, {});
  }
  return out;
}

/** A `Warning` header's value (`299 - "a", 299 - "b"`) split into its warnings, each as sent. */
export function splitWarnings(value: string | null): string[] {
  return value === null ? [] : [...value.matchAll(/299 - "((?:[^"\\]|\\.)*)"/g)].map((m) => m[0]);
}
