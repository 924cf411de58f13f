/**
 * One sequence of kubectl commands around server-side apply, run against Capstan by
 * test/e2e/kubectl-server-side-apply.test.ts and against kube-apiserver 1.36 by
 * scripts/capture-kubectl-apply-goldens.mjs (test/golden/kubectl-apply/server-side.json): client-side
 * `kubectl apply`, then `--server-side` (kubectl's migration of the client-side manager), field
 * removal, `--field-manager` with a conflict and `--force-conflicts`, `--dry-run=server` on an
 * existing and a new object, and client-side apply again. Output is normalized: the namespace,
 * uids, resourceVersions and times become placeholders.
 */
import type { Kubectl } from './kubectl.js';

/** What one command printed, normalized, line by line. */
export interface StepTranscript {
  args: string[];
  code: number | null;
  stdout: string[];
  stderr: string[];
}

const cm = (data: Record<string, string>, labels?: Record<string, string>): string =>
  [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    '  name: kapply',
    ...(labels ? ['  labels:', ...Object.entries(labels).map(([k, v]) => `    ${k}: "${v}"`)] : []),
    'data:',
    ...Object.entries(data).map(([k, v]) => `  ${k}: "${v}"`),
    '',
  ].join('\n');

/** The commands: arguments (the namespace added) and the manifest on stdin, if any. */
export const STEPS: { args: string[]; input?: string }[] = [
  { args: ['apply', '-f', '-'], input: cm({ a: '1', b: '2' }, { tier: 'one' }) },
  { args: ['apply', '--server-side', '-f', '-'], input: cm({ a: '1', b: '2' }, { tier: 'one' }) },
  { args: ['get', 'configmap', 'kapply', '-o', 'yaml', '--show-managed-fields'] },
  { args: ['apply', '--server-side', '-f', '-'], input: cm({ a: '1', c: '3' }) },
  { args: ['get', 'configmap', 'kapply', '-o', 'yaml', '--show-managed-fields'] },
  { args: ['apply', '--server-side', '--field-manager=other', '-f', '-'], input: cm({ a: 'other' }) },
  { args: ['apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', '-'], input: cm({ a: 'other' }) },
  { args: ['apply', '--server-side', '--dry-run=server', '-f', '-'], input: cm({ a: '1', d: '4' }) },
  { args: ['apply', '--server-side', '--dry-run=server', '-f', '-'], input: cm({ a: 'other', c: '3', d: '4' }) },
  { args: ['get', 'configmap', 'kapply', '-o', 'yaml', '--show-managed-fields'] },
  { args: ['apply', '--server-side', '--dry-run=server', '-o', 'yaml', '-f', '-'], input: cm({ z: '1' }).replace('name: kapply', 'name: kapply-new') },
  { args: ['get', 'configmap', 'kapply-new'] },
  { args: ['apply', '--server-side', '-f', '-'], input: cm({ c: '3', e: '5' }) },
  { args: ['apply', '-f', '-'], input: cm({ c: '3', f: '6' }) },
  { args: ['get', 'configmap', 'kapply', '-o', 'yaml', '--show-managed-fields'] },
];

/**
 * The entries of each `managedFields:` block of YAML output sorted by their text: kube sorts
 * entries by time in seconds, so the order of entries stamped in the same or in different
 * seconds depends on the run's timing.
 */
function sortManagedFields(lines: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    out.push(line);
    if (line !== '  managedFields:') continue;
    const items: string[][] = [];
    while (i + 1 < lines.length && (lines[i + 1] ?? '').startsWith('  - ')) {
      const item = [lines[++i] ?? ''];
      while (i + 1 < lines.length && (lines[i + 1] ?? '').startsWith('    ')) item.push(lines[++i] ?? '');
      items.push(item);
    }
    items.sort((a, b) => (a.join('\n') < b.join('\n') ? -1 : a.join('\n') > b.join('\n') ? 1 : 0));
    for (const item of items) out.push(...item);
  }
  return out;
}

/**
 * Replaces what differs from run to run (namespace, uids, versions, times) with placeholders and
 * sorts managedFields entries (sortManagedFields).
 */
export function normalize(text: string, ns: string): string[] {
  const lines = text
    .split(ns)
    .join('NAMESPACE')
    .replace(/uid: [0-9a-f-]+/g, 'uid: UID')
    .replace(/resourceVersion: "\d+"/g, 'resourceVersion: "RV"')
    .replace(/(creationTimestamp|time): "?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"?/g, '$1: TIME')
    .split('\n')
    .filter((l, i, all) => !(i === all.length - 1 && l === ''));
  return sortManagedFields(lines);
}

/** Runs STEPS with `k` in namespace `ns`. */
export async function runSequence(k: Kubectl, ns: string): Promise<StepTranscript[]> {
  const out: StepTranscript[] = [];
  for (const step of STEPS) {
    const r = await k.run([...step.args, '-n', ns], { input: step.input });
    out.push({ args: step.args, code: r.code, stdout: normalize(r.stdout, ns), stderr: normalize(r.stderr, ns) });
  }
  return out;
}
