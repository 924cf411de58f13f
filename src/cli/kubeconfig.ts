/** A kubeconfig (YAML) that kubectl and client libraries can use as is to reach the server at `url`. */
export function kubeconfigFor(url: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: capstan',
    '  cluster:',
    `    server: ${url}`,
    // client-node refuses plain http unless TLS verification is explicitly off; kubectl ignores it for http.
    '    insecure-skip-tls-verify: true',
    'contexts:',
    '- name: capstan',
    '  context:',
    '    cluster: capstan',
    '    user: capstan',
    '    namespace: default',
    'current-context: capstan',
    'users:',
    '- name: capstan',
    '  user: {}',
    'preferences: {}',
    '',
  ].join('\n');
}
