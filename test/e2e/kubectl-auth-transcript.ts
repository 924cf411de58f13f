/**
 * A kubectl session about identity and access, run as an administrator who impersonates: `kubectl
 * auth can-i` (one verb, `--list`, `--as`, `--as-group`, subresources, non-resource URLs) and `kubectl
 * auth whoami`, for a user whose only permissions come from a Role in one namespace and the
 * bootstrap policy. scripts/capture-kubectl-auth-goldens.mjs records the reference's transcript;
 * test/e2e/kubectl-auth.test.ts compares Capstan's with it line by line.
 */
import type { KubectlResult } from './kubectl.js';

export const NAMESPACE = 'kauth-demo';

/** The objects the session needs, as one manifest for `kubectl apply -f -`. */
export const SETUP = `apiVersion: v1
kind: Namespace
metadata:
  name: ${NAMESPACE}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: pod-reader
  namespace: ${NAMESPACE}
rules:
- apiGroups: [""]
  resources: ["pods", "pods/log"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["apps"]
  resources: ["deployments/scale"]
  verbs: ["update"]
- apiGroups: [""]
  resources: ["configmaps"]
  resourceNames: ["settings"]
  verbs: ["get", "update"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: alice-reads-pods
  namespace: ${NAMESPACE}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: pod-reader
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: Group
  name: readers
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: alice
`;

const N = ['-n', NAMESPACE];

/** The commands of the session, in order. */
export const COMMANDS: string[][] = [
  ['auth', 'can-i', 'get', 'pods', ...N, '--as=alice'],
  ['auth', 'can-i', 'delete', 'pods', ...N, '--as=alice'],
  ['auth', 'can-i', 'get', 'pods', '-n', 'default', '--as=alice'],
  ['auth', 'can-i', 'list', 'pods', '--all-namespaces', '--as=alice'],
  ['auth', 'can-i', 'get', 'pods', '--subresource=log', ...N, '--as=alice'],
  ['auth', 'can-i', 'update', 'deployments.apps', '--subresource=scale', ...N, '--as=alice'],
  ['auth', 'can-i', 'update', 'deployments.apps', ...N, '--as=alice'],
  ['auth', 'can-i', 'get', 'configmaps/settings', ...N, '--as=alice'],
  ['auth', 'can-i', 'get', 'configmaps/other', ...N, '--as=alice'],
  ['auth', 'can-i', 'get', '/healthz', '--as=alice'],
  ['auth', 'can-i', 'get', '/metrics', '--as=alice'],
  ['auth', 'can-i', 'get', 'pods', ...N, '--as=bob', '--as-group=readers'],
  ['auth', 'can-i', 'get', 'pods', ...N, '--as=bob'],
  ['auth', 'can-i', 'create', 'selfsubjectaccessreviews.authorization.k8s.io', '--as=bob'],
  ['auth', 'can-i', '--list', ...N, '--as=alice'],
  ['auth', 'can-i', '--list', ...N, '--as=bob', '--as-group=readers'],
  ['auth', 'can-i', '--list', '-n', 'default', '--as=alice', '--no-headers'],
  ['auth', 'can-i', 'get', 'pods', ...N],
  ['auth', 'whoami', '--as=alice'],
  ['auth', 'whoami', '--as=bob', '--as-group=readers', '--as-group=team'],
  ['auth', 'whoami', '--as=system:serviceaccount:kauth-demo:robot'],
];

/** What the transcript keeps of a command: its exit code and output (kubectl's own words). */
export interface TranscriptLine {
  args: string[];
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs every command with `run` and keeps the results in order. */
export async function runTranscript(run: (args: string[]) => Promise<KubectlResult>): Promise<TranscriptLine[]> {
  const out: TranscriptLine[] = [];
  for (const args of COMMANDS) {
    const r = await run(args);
    out.push({ args, code: r.code, stdout: r.stdout, stderr: r.stderr });
  }
  return out;
}
