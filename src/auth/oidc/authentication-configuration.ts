import { load as loadYaml } from 'js-yaml';
import { asString } from '../../api/values.js';

/**
 * `AuthenticationConfiguration` (apiserver.config.k8s.io v1, also v1beta1 and v1alpha1), the file of
 * `--authentication-config`, decoded as kube-apiserver decodes it: strictly (unknown and duplicate
 * fields refused), with kube's error messages for every way the file can be wrong before validation.
 */

/** issuer: where tokens come from and whom they are for. */
export interface IssuerSpec {
  url: string;
  /** Overrides `{url}/.well-known/openid-configuration`. */
  discoveryURL?: string;
  /** PEM CA certificates trusted for the issuer's HTTPS (default: the host's roots). */
  certificateAuthority: string;
  audiences: string[];
  audienceMatchPolicy: string;
  egressSelectorType: string;
}

/** `claim` + `requiredValue`, or a CEL `expression` over `claims` with a `message`. */
export interface ClaimValidationRuleSpec {
  claim: string;
  requiredValue: string;
  expression: string;
  message: string;
}

/** A claim with a prefix (`prefix` undefined when absent: required with a claim), or an expression. */
export interface PrefixedClaimOrExpression {
  claim: string;
  prefix?: string;
  expression: string;
}

export interface ClaimOrExpression {
  claim: string;
  expression: string;
}

export interface ExtraMappingSpec {
  key: string;
  valueExpression: string;
}

export interface ClaimMappingsSpec {
  username: PrefixedClaimOrExpression;
  groups: PrefixedClaimOrExpression;
  uid: ClaimOrExpression;
  extra: ExtraMappingSpec[];
}

export interface UserValidationRuleSpec {
  expression: string;
  message: string;
}

/** One JWT authenticator: an issuer, how its claims are checked, and how they make a user. */
export interface JwtAuthenticatorSpec {
  issuer: IssuerSpec;
  claimValidationRules: ClaimValidationRuleSpec[];
  claimMappings: ClaimMappingsSpec;
  userValidationRules: UserValidationRuleSpec[];
}

/** The anonymous authenticator: on or off, and (when listed) only for these request paths. */
export interface AnonymousSpec {
  enabled: boolean;
  conditions: { path: string }[];
}

export interface AuthenticationConfiguration {
  jwt: JwtAuthenticatorSpec[];
  anonymous?: AnonymousSpec;
}

/** The versions of apiserver.config.k8s.io that have the kind (kube 1.36 serves all three). */
const VERSIONS = ['v1', 'v1beta1', 'v1alpha1'];
const GROUP = 'apiserver.config.k8s.io';

/** How a field decodes, and its Go type for messages (`v1.Issuer`, `[]string`, ...). */
type Shape =
  | { kind: 'string'; goType: string }
  | { kind: 'optional-string' }
  | { kind: 'bool' }
  | { kind: 'list'; elem: Shape }
  | { kind: 'struct'; name: string; fields: Record<string, Shape> };

const str: Shape = { kind: 'string', goType: 'string' };
const struct = (name: string, fields: Record<string, Shape>): Shape => ({ kind: 'struct', name, fields });
const list = (elem: Shape): Shape => ({ kind: 'list', elem });

const PREFIXED = struct('PrefixedClaimOrExpression', { claim: str, prefix: { kind: 'optional-string' }, expression: str });

const ROOT = struct('AuthenticationConfiguration', {
  apiVersion: str,
  kind: str,
  jwt: list(
    struct('JWTAuthenticator', {
      issuer: struct('Issuer', {
        url: str,
        discoveryURL: { kind: 'optional-string' },
        certificateAuthority: str,
        audiences: list(str),
        audienceMatchPolicy: { kind: 'string', goType: 'AudienceMatchPolicyType' },
        egressSelectorType: { kind: 'string', goType: 'EgressSelectorType' },
      }),
      claimValidationRules: list(struct('ClaimValidationRule', { claim: str, requiredValue: str, expression: str, message: str })),
      claimMappings: struct('ClaimMappings', {
        username: PREFIXED,
        groups: PREFIXED,
        uid: struct('ClaimOrExpression', { claim: str, expression: str }),
        extra: list(struct('ExtraMapping', { key: str, valueExpression: str })),
      }),
      userValidationRules: list(struct('UserValidationRule', { expression: str, message: str })),
    }),
  ),
  anonymous: struct('AnonymousAuthConfig', { enabled: { kind: 'bool' }, conditions: list(struct('AnonymousAuthCondition', { path: str })) }),
});

/** Go's name of a shape's type in package `pkg` (`[]v1.JWTAuthenticator`, `string`, `bool`). */
function goTypeName(shape: Shape, pkg: string): string {
  switch (shape.kind) {
    case 'string':
      return shape.goType === 'string' ? 'string' : `${pkg}.${shape.goType}`;
    case 'optional-string':
      return 'string';
    case 'bool':
      return 'bool';
    case 'list':
      return `[]${goTypeName(shape.elem, pkg)}`;
    case 'struct':
      return `${pkg}.${shape.name}`;
  }
}

/** encoding/json's name of a JSON value's kind in its type errors. */
function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'string') return 'string';
  return 'object';
}

class DecodeTypeError extends Error {}

interface DecodeState {
  pkg: string;
  /** Whether object keys are visited sorted (YAML converted to JSON has sorted keys). */
  sortKeys: boolean;
  unknown: string[];
}

/**
 * Decodes `value` of `shape`; `path` is the JSON path (with indexes, for unknown fields), `goPath`
 * the struct field path Go's type errors print (without indexes), `owner` the enclosing struct.
 */
function decode(value: unknown, shape: Shape, state: DecodeState, path: string, goPath: string, owner: string): unknown {
  const typeError = (): never => {
    throw new DecodeTypeError(`json: cannot unmarshal ${jsonKind(value)} into Go struct field ${owner}.${goPath} of type ${goTypeName(shape, state.pkg)}`);
  };
  if (value === null || value === undefined) return undefined;
  switch (shape.kind) {
    case 'string':
    case 'optional-string':
      return typeof value === 'string' ? value : typeError();
    case 'bool':
      return typeof value === 'boolean' ? value : typeError();
    case 'list':
      if (!Array.isArray(value)) return typeError();
      return value.map((item, i) => decode(item, shape.elem, state, `${path}[${i}]`, goPath, owner));
    case 'struct': {
      if (typeof value !== 'object' || Array.isArray(value)) return typeError();
      const out: Record<string, unknown> = {};
      const keys = Object.keys(value);
      for (const key of state.sortKeys ? keys.sort() : keys) {
        const field = shape.fields[key];
        const fieldPath = path === '' ? key : `${path}.${key}`;
        if (field === undefined) {
          state.unknown.push(fieldPath);
          continue;
        }
        out[key] = decode((value as Record<string, unknown>)[key], field, state, fieldPath, goPath === '' ? key : `${goPath}.${key}`, shape.name);
      }
      return out;
    }
  }
}

/** The first duplicate key of a JSON text's objects, if any (JSON.parse keeps the last silently). */
function duplicateJsonKey(text: string): string | undefined {
  const stack: Set<string>[] = [];
  const re = /"(?:[^"\\]|\\.)*"\s*:|[{}]|"(?:[^"\\]|\\.)*"/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const token = m[0];
    if (token === '{') stack.push(new Set());
    else if (token === '}') stack.pop();
    else if (token.endsWith(':')) {
      const key = JSON.parse(token.slice(0, -1).trim()) as string;
      const seen = stack[stack.length - 1];
      if (seen === undefined) continue;
      if (seen.has(key)) return key;
      seen.add(key);
    }
  }
  return undefined;
}

function normalizePrefixed(v: unknown): PrefixedClaimOrExpression {
  const o = (v ?? {}) as Record<string, unknown>;
  const out: PrefixedClaimOrExpression = { claim: asString(o.claim), expression: asString(o.expression) };
  if (typeof o.prefix === 'string') out.prefix = o.prefix;
  return out;
}

function items(v: unknown): Record<string, unknown>[] {
  return Array.isArray(v) ? v.map((i) => (i ?? {}) as Record<string, unknown>) : [];
}

function normalizeJwt(v: Record<string, unknown>): JwtAuthenticatorSpec {
  const issuer = (v.issuer ?? {}) as Record<string, unknown>;
  const mappings = (v.claimMappings ?? {}) as Record<string, unknown>;
  const uid = (mappings.uid ?? {}) as Record<string, unknown>;
  const spec: JwtAuthenticatorSpec = {
    issuer: {
      url: asString(issuer.url),
      certificateAuthority: asString(issuer.certificateAuthority),
      audiences: Array.isArray(issuer.audiences) ? issuer.audiences.map(asString) : [],
      audienceMatchPolicy: asString(issuer.audienceMatchPolicy),
      egressSelectorType: asString(issuer.egressSelectorType),
    },
    claimValidationRules: items(v.claimValidationRules).map((r) => ({
      claim: asString(r.claim),
      requiredValue: asString(r.requiredValue),
      expression: asString(r.expression),
      message: asString(r.message),
    })),
    claimMappings: {
      username: normalizePrefixed(mappings.username),
      groups: normalizePrefixed(mappings.groups),
      uid: { claim: asString(uid.claim), expression: asString(uid.expression) },
      extra: items(mappings.extra).map((e) => ({ key: asString(e.key), valueExpression: asString(e.valueExpression) })),
    },
    userValidationRules: items(v.userValidationRules).map((r) => ({ expression: asString(r.expression), message: asString(r.message) })),
  };
  if (typeof issuer.discoveryURL === 'string') spec.issuer.discoveryURL = issuer.discoveryURL;
  return spec;
}

/**
 * Parses the file's text (YAML or JSON). Throws an Error with kube's message (`empty config data`,
 * `strict decoding error: unknown field "jwt[0].issuer.foo"`, `json: cannot unmarshal ...`,
 * `no kind "X" is registered for version "Y" ...`, YAML syntax errors) for a file kube cannot load.
 */
export function parseAuthenticationConfiguration(text: string): AuthenticationConfiguration {
  if (text.length === 0) throw new Error('empty config data');
  const isJson = text.trimStart().startsWith('{');
  let doc: unknown;
  try {
    doc = isJson ? (JSON.parse(text) as unknown) : loadYaml(text);
  } catch (err) {
    const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new Error(isJson ? why : `yaml: ${why}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new Error(`couldn't get version/kind; json parse error: ${jsonKind(doc)} is not an object`);
  const head = doc as Record<string, unknown>;
  const apiVersion = asString(head.apiVersion);
  const kind = asString(head.kind);
  if (apiVersion === '') throw new Error(`Object 'apiVersion' is missing in '${text}'`);
  if (kind === '') throw new Error(`Object 'Kind' is missing in '${text}'`);
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  if (group !== GROUP || !VERSIONS.includes(version) || (kind !== 'AuthenticationConfiguration' && kind !== 'AuthorizationConfiguration')) {
    throw new Error(`no kind "${kind}" is registered for version "${apiVersion}" in scheme "pkg/runtime/scheme.go:111"`);
  }
  if (kind !== 'AuthenticationConfiguration') throw new Error(`expected AuthenticationConfiguration, got *apiserver.${kind}`);
  const state: DecodeState = { pkg: version, sortKeys: !isJson, unknown: [] };
  let decoded: Record<string, unknown>;
  try {
    decoded = decode(doc, ROOT, state, '', '', 'AuthenticationConfiguration') as Record<string, unknown>;
  } catch (err) {
    if (err instanceof DecodeTypeError) throw new Error(err.message);
    throw err;
  }
  const strict: string[] = [];
  const duplicate = isJson ? duplicateJsonKey(text) : undefined;
  if (duplicate !== undefined) strict.push(`duplicate field "${duplicate}"`);
  strict.push(...state.unknown.map((f) => `unknown field "${f}"`));
  if (strict.length > 0) throw new Error(`strict decoding error: ${strict.join(', ')}`);
  const config: AuthenticationConfiguration = { jwt: items(decoded.jwt).map(normalizeJwt) };
  if (decoded.anonymous !== undefined) {
    const anonymous = decoded.anonymous as Record<string, unknown>;
    config.anonymous = { enabled: anonymous.enabled === true, conditions: items(anonymous.conditions).map((c) => ({ path: asString(c.path) })) };
  }
  return config;
}
