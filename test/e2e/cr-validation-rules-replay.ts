/**
 * Replays the CRD cases of test/fixtures/cr-validation-rules/crd-cases.json (CRDs whose
 * x-kubernetes-validations rules kube-apiserver checks at creation: compile errors, cost limits,
 * messageExpression, reason, fieldPath, optionalOldSelf) against an API server. Shared by
 * test/e2e/cr-validation-rules.test.ts and scripts/capture-cr-validation-rules-goldens.mjs.
 */
import { crdObject, normalize, type CaseResult, type Send } from './cr-schema-replay.js';

export interface CrdCase {
  name: string;
  schema: Record<string, unknown>;
}

export interface CrdCases {
  plural: string;
  kind: string;
  cases: CrdCase[];
}

/** Creates each case's CRD in a group of its own (GROUPPREFIX-N.example.com) and records the answer; created CRDs are deleted. */
export async function replayCrdCases(send: Send, fixture: CrdCases, groupPrefix: string): Promise<CaseResult[]> {
  const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  const out: CaseResult[] = [];
  for (const [i, c] of fixture.cases.entries()) {
    const group = `${groupPrefix}-${i}.example.com`;
    const body = crdObject({ plural: fixture.plural, kind: fixture.kind, schema: c.schema }, group);
    const res = await send('POST', crdPath, { 'content-type': 'application/json' }, JSON.stringify(body));
    out.push({ name: c.name, status: res.status, warnings: res.warnings, body: res.status === 201 ? 'created' : normalize(res.text, group) });
    if (res.status === 201) await send('DELETE', `${crdPath}/${fixture.plural}.${group}`, {});
  }
  return out;
}
