/**
 * Start-up refusals of the OIDC, structured authentication and token webhook flags, with the
 * messages kube-apiserver 1.36.4 stops with for the same flags and files (captured from the
 * reference: `kube-apiserver ... --authentication-config=FILE`). The checks run as the cluster
 * primary runs them before forking workers; one case goes through the `capstan` command itself.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from '../../src/cli/flags.js';
import { checkAuthenticationFlags } from '../../src/auth/authentication-setup.js';
import { CAPSTAN_MAIN, withFreeSecurePort } from '../helpers/capstan.js';

const HEAD = 'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n';

describe('authentication flags and files kube-apiserver refuses at start', () => {
  let dir: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-authn-errors-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function file(name: string, text: string): string {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  }

  /** The start-up error for `args`, or undefined when they are accepted. */
  function startError(args: string[]): string | undefined {
    const parsed = parseArgs(args);
    assert.ok(!parsed.help);
    try {
      checkAuthenticationFlags(parsed.config);
      return undefined;
    } catch (err) {
      assert.equal((err as Error).name, 'StartupError');
      return (err as Error).message;
    }
  }

  test('the file and the --oidc-* flags, and --anonymous-auth beside an anonymous section, exclude each other', () => {
    const jwt = file(
      'ok.yaml',
      `${HEAD}jwt:\n- issuer: {url: https://issuer.example, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ""}}\n`,
    );
    assert.equal(startError([`--authentication-config=${jwt}`, '--oidc-client-id=x']), 'authentication-config file and oidc-* flags are mutually exclusive');
    assert.equal(startError(['--oidc-issuer-url=https://x']), 'oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set');
    assert.equal(startError([`--authentication-config=${jwt}`]), undefined);
    const anonymous = file('anonymous.yaml', `${HEAD}anonymous:\n  enabled: true\n  conditions: [{path: /livez}]\n`);
    assert.equal(startError([`--authentication-config=${anonymous}`]), undefined);
    assert.equal(
      startError([`--authentication-config=${anonymous}`, '--anonymous-auth=true']),
      'anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file',
    );
  });

  test("files that cannot be loaded: kube's decoding errors", () => {
    const cases: [string, string][] = [
      ['', 'empty config data'],
      [`${HEAD}jwt:\n- issuer:\n    url: https://e\n    foo: 1\n`, 'strict decoding error: unknown field "jwt[0].issuer.foo"'],
      [
        `${HEAD}JWT: []\nfoo: 1\nanonymous: {bar: 1, enabled: true}\n`,
        'strict decoding error: unknown field "JWT", unknown field "anonymous.bar", unknown field "foo"',
      ],
      [`${HEAD}jwt: 3\n`, 'json: cannot unmarshal number into Go struct field AuthenticationConfiguration.jwt of type []v1.JWTAuthenticator'],
      [`${HEAD}jwt: [1, 2]\n`, 'json: cannot unmarshal number into Go struct field AuthenticationConfiguration.jwt of type v1.JWTAuthenticator'],
      [
        `${HEAD}jwt:\n- issuer:\n    url: 5\n    audiences: [1]\n  claimMappings:\n    username: {prefix: true}\n`,
        'json: cannot unmarshal bool into Go struct field PrefixedClaimOrExpression.jwt.claimMappings.username.prefix of type string',
      ],
      [
        '{"apiVersion": "apiserver.config.k8s.io/v1", "kind": "AuthenticationConfiguration", "jwt": [{"issuer": {"url": 5}, "claimMappings": {"username": {"prefix": true}}}]}',
        'json: cannot unmarshal number into Go struct field Issuer.jwt.issuer.url of type string',
      ],
      ['{"apiVersion":"apiserver.config.k8s.io/v1","kind":"AuthenticationConfiguration","jwt":[],"jwt":[]}', 'strict decoding error: duplicate field "jwt"'],
      [
        'apiVersion: v1\nkind: AuthenticationConfiguration\n',
        'no kind "AuthenticationConfiguration" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111"',
      ],
      [
        'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n',
        'expected AuthenticationConfiguration, got *apiserver.AuthorizationConfiguration',
      ],
    ];
    cases.forEach(([text, error], i) => {
      const path = file(`load-${i}.yaml`, text);
      assert.equal(startError([`--authentication-config=${path}`]), `failed to load authentication configuration from file "${path}": ${error}`);
    });
    const missing = join(dir, 'missing.yaml');
    assert.equal(
      startError([`--authentication-config=${missing}`]),
      `failed to load authentication configuration from file "${missing}": open ${missing}: no such file or directory`,
    );
  });

  test("invalid configurations: kube's field errors, CEL compilation included", () => {
    const many = file(
      'invalid.yaml',
      `${HEAD}jwt:
- issuer:
    url: https://example.com
    audiences: [a, b]
    audienceMatchPolicy: Foo
    egressSelectorType: controlplane
  claimValidationRules:
  - expression: 'claims.x'
  - claim: c
    message: m
  claimMappings:
    username:
      expression: 'claims.email'
    groups:
      claim: g
    uid:
      claim: u
      expression: 'x'
    extra:
    - key: Example.org/foo
      valueExpression: '1 +'
    - key: kubernetes.io/x
      valueExpression: 'claims.y'
  userValidationRules:
  - expression: 'user.username'
anonymous:
  enabled: false
  conditions: [{path: /x}]
`,
    );
    const expected = [
      'jwt[0].issuer.audienceMatchPolicy: Invalid value: "Foo": audienceMatchPolicy must be MatchAny for multiple audiences',
      'jwt[0].claimValidationRules[0].expression: Invalid value: "claims.x": must evaluate to bool',
      'jwt[0].claimValidationRules[1].message: Invalid value: "m": may not be specified when claim is set',
      'jwt[0].claimMappings.groups.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing',
      'jwt[0].claimMappings.uid: Invalid value: "": claim and expression can\'t both be set',
      "jwt[0].claimMappings.extra[0].key: Invalid value: \"Example.org\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      'jwt[0].claimMappings.extra[0].key: Invalid value: "Example.org/foo": must be lowercase',
      "jwt[0].claimMappings.extra[0].valueExpression: Invalid value: \"1 +\": compilation failed: ERROR: <input>:1:4: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | 1 +\n | ...^",
      'jwt[0].claimMappings.extra[1].key: Invalid value: "kubernetes.io/x": k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use',
      'jwt[0].claimMappings.username.expression: Invalid value: "claims.email": claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression',
      'jwt[0].userValidationRules[0].expression: Invalid value: "user.username": must evaluate to bool',
      'anonymous.conditions: Invalid value: [{"Path":"/x"}]: enabled should be set to true when conditions are defined',
    ];
    assert.equal(startError([`--authentication-config=${many}`]), `invalid authentication configuration: [${expected.join(', ')}]`);
    const urls = file(
      'urls.yaml',
      `${HEAD}jwt:\n- issuer:\n    url: http://example.com\n    audiences: []\n  claimMappings:\n    username:\n      claim: sub\n`,
    );
    assert.equal(
      startError([`--authentication-config=${urls}`]),
      'invalid authentication configuration: [jwt[0].issuer.url: Invalid value: "http://example.com": URL scheme must be https, jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required, jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing]',
    );
    assert.equal(
      startError(['--oidc-issuer-url=http://x', '--oidc-client-id=c']),
      'invalid authentication configuration: jwt[0].issuer.url: Invalid value: "http://x": URL scheme must be https',
    );
  });

  test('per-issuer refusals: service account issuers, signing algorithms, egress selectors', () => {
    const saIssuer = file(
      'sa.yaml',
      `${HEAD}jwt:\n- issuer: {url: https://kubernetes.default.svc, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ""}}\n`,
    );
    assert.equal(
      startError([`--authentication-config=${saIssuer}`, '--service-account-issuer=https://kubernetes.default.svc']),
      'issuer.url: Invalid value: "https://kubernetes.default.svc": URL must not overlap with disallowed issuers: [https://kubernetes.default.svc]',
    );
    assert.equal(startError(['--oidc-issuer-url=https://x', '--oidc-client-id=c', '--oidc-signing-algs=HS256']), 'oidc: unsupported signing alg: "HS256"');
    const egress = file(
      'egress.yaml',
      `${HEAD}jwt:\n- issuer: {url: https://example.com, audiences: [a], egressSelectorType: cluster}\n  claimMappings: {username: {claim: sub, prefix: ""}}\n`,
    );
    assert.equal(startError([`--authentication-config=${egress}`]), 'oidc: egress lookup required with egress selector type "cluster"');
  });

  test('the token webhook: a missing kubeconfig, an unknown TokenReview version', () => {
    assert.equal(
      startError([`--authentication-token-webhook-config-file=${join(dir, 'nope.kubeconfig')}`]),
      `stat ${join(dir, 'nope.kubeconfig')}: no such file or directory`,
    );
    const kubeconfig = file(
      'webhook.kubeconfig',
      'apiVersion: v1\nkind: Config\nclusters: [{name: w, cluster: {server: "https://127.0.0.1:1"}}]\ncontexts: [{name: w, context: {cluster: w, user: w}}]\ncurrent-context: w\nusers: [{name: w, user: {}}]\n',
    );
    assert.equal(startError([`--authentication-token-webhook-config-file=${kubeconfig}`]), undefined);
    assert.equal(
      startError([`--authentication-token-webhook-config-file=${kubeconfig}`, '--authentication-token-webhook-version=v2']),
      'unsupported authentication webhook version "v2", supported versions are "v1", "v1beta1"',
    );
  });

  test('the capstan command stops with the error and exit code 1', async () => {
    const path = file('cli.yaml', `${HEAD}jwt:\n- issuer: {url: http://x, audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ""}}\n`);
    const child = spawn(
      process.execPath,
      [CAPSTAN_MAIN, ...withFreeSecurePort(['--port=0', `--cert-dir=${join(dir, 'pki')}`, `--authentication-config=${path}`])],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(code, 1);
    assert.match(stderr, /Error: invalid authentication configuration: jwt\[0\]\.issuer\.url: Invalid value: "http:\/\/x": URL scheme must be https\n$/);
  });
});
