/**
 * Replays the cases of test/fixtures/crd-structural/cases.json (CustomResourceDefinitions whose
 * schemas kube's CRD validation accepts or rejects: structural schemas, forbidden fields,
 * x-kubernetes-* extensions, defaults, patterns) against an API server over HTTP, each as a dry-run
 * create. Shared by test/e2e/crd-structural.test.ts (against Capstan) and
 * scripts/capture-crd-structural-goldens.mjs (against kube-apiserver 1.36, whose answers are the goldens).
 */
import { normalize, type CaseResult, type Send } from './cr-schema-replay.js';

/**
 * One case: the schema of the CRD's one version, or the schemas of several versions; optionally
 * fields merged into every version (`version`), into each version (`perVersion`), or into the spec.
 */
export interface StructuralCase {
  name: string;
  schema?: Record<string, unknown>;
  versions?: Record<string, unknown>[];
  subresources?: Record<string, unknown>;
  version?: Record<string, unknown>;
  perVersion?: Record<string, unknown>[];
  spec?: Record<string, unknown>;
}

/** The fixture file: the CRD's names and the cases. */
export interface StructuralFixture {
  plural: string;
  kind: string;
  cases: StructuralCase[];
}

/** The CRD of case C in GROUP: versions v1 (storage), v2, ... each served, with the case's schema. */
export function structuralCrd(fixture: StructuralFixture, c: StructuralCase, group: string): Record<string, unknown> {
  const schemas = c.versions ?? [c.schema ?? {}];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${fixture.plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: fixture.plural, singular: fixture.kind.toLowerCase(), kind: fixture.kind },
      versions: schemas.map((s, i) => ({
        name: `v${i + 1}`,
        served: true,
        storage: i === 0,
        schema: { openAPIV3Schema: s },
        ...(c.subresources !== undefined ? { subresources: c.subresources } : {}),
        ...c.version,
        ...c.perVersion?.[i],
      })),
      ...c.spec,
    },
  };
}

/** Sends every case as a dry-run create (nothing is stored) and records the answers, GROUP replaced. */
export async function replayStructural(send: Send, fixture: StructuralFixture, group: string): Promise<CaseResult[]> {
  const out: CaseResult[] = [];
  for (const c of fixture.cases) {
    const res = await send(
      'POST',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions?dryRun=All',
      { 'content-type': 'application/json' },
      JSON.stringify(structuralCrd(fixture, c, group)),
    );
    const body = normalize(res.text, group);
    // A created CRD is recorded by its status code only: the object is the request echoed with defaults.
    out.push({ name: c.name, status: res.status, warnings: res.warnings, body: res.status === 201 ? {} : body });
  }
  return out;
}
