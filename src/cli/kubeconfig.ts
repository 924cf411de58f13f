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

/**
 * The admin kubeconfig of an HTTPS server: the CA to trust and a client certificate in
 * `system:masters` (all PEM). A wildcard bind address is replaced by loopback, which the generated
 * serving certificate names.
 */
export function adminKubeconfigFor(url: string, caPem: string, certPem: string, keyPem: string): string {
  return certificateKubeconfigFor(url, caPem, certPem, keyPem, 'capstan-admin');
}

/**
 * A kubeconfig that trusts `caPem` for the server at `url` and authenticates with the client
 * certificate `certPem` (user entry named `userName`). A wildcard bind address becomes loopback.
 */
export function certificateKubeconfigFor(url: string, caPem: string, certPem: string, keyPem: string, userName: string): string {
  const server = url.replace('://0.0.0.0:', '://127.0.0.1:').replace('://[::]:', '://[::1]:');
  const b64 = (pem: string): string => Buffer.from(pem).toString('base64');
  // A plain YAML scalar where one is safe (user names such as system:kube-scheduler are), else JSON's quoting.
  const name = /^[A-Za-z0-9][A-Za-z0-9:._-]*$/.test(userName) ? userName : JSON.stringify(userName);
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: capstan',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${b64(caPem)}`,
    'contexts:',
    '- name: capstan',
    '  context:',
    '    cluster: capstan',
    `    user: ${name}`,
    '    namespace: default',
    'current-context: capstan',
    'users:',
    `- name: ${name}`,
    '  user:',
    `    client-certificate-data: ${b64(certPem)}`,
    `    client-key-data: ${b64(keyPem)}`,
    'preferences: {}',
    '',
  ].join('\n');
}
