import { badRequest, conflict, internalError, invalid, notFound, type StatusCause } from '../api/errors.js';
import { isObject, metadataOf, objectKey, stringField, type Obj } from '../api/object-util.js';
import type { ResourceTarget } from './server-context.js';
import type { KubernetesClaims, ObjectRef } from '../auth/service-account-tokens.js';

/** kube's shortest token lifetime (ten minutes), longest (2^32 s), and default (one hour). */
const MIN_SECONDS = 600;
const MAX_SECONDS = 2 ** 32;
const DEFAULT_SECONDS = 3600;
/** The lifetime the ServiceAccount admission plugin asks for projected tokens (kube's WarnOnlyBoundTokenExpirationSeconds). */
const PROJECTED_TOKEN_SECONDS = 3607;
/** How long an extended projected token is valid (kube's ExpirationExtensionSeconds: a year). */
const EXTENDED_SECONDS = 365 * 24 * 60 * 60;

/** Storage type and kube's resource name of each kind a token may be bound to. */
const BINDABLE: Record<string, { type: string; namespaced: boolean }> = {
  Pod: { type: 'pods', namespaced: true },
  Secret: { type: 'secrets', namespaced: true },
  Node: { type: 'nodes', namespaced: false },
};

async function getObject(r: ResourceTarget, type: string, key: string): Promise<Obj | undefined> {
  const stored = await r.server.storage.get(type, key);
  return stored === undefined ? undefined : (JSON.parse(stored.json) as Obj);
}

function refOf(obj: Obj): ObjectRef {
  const meta = metadataOf(obj);
  return { name: stringField(meta, 'name'), uid: stringField(meta, 'uid') };
}

/**
 * `POST serviceaccounts/NAME/token` as kube answers it: the body's name and namespace must match
 * the URL; audiences default to the API server's; `expirationSeconds` defaults to an hour and must
 * lie between ten minutes and 2^32 seconds (422 `TokenRequest.authentication.k8s.io ""`); a
 * `boundObjectRef` names an existing Pod (running as this account), Secret or Node, whose uid, when
 * given, must match (409). Answers the TokenRequest with a signed JWT and its expiry.
 */
export async function createTokenRequest(r: ResourceTarget, account: Obj, body: Obj): Promise<Obj> {
  const tokens = r.server.authentication?.tokens;
  if (tokens === undefined) throw internalError(new Error('service account tokens are not configured'));
  const name = r.ri.name;
  const namespace = r.ri.namespace;
  const meta = isObject(body.metadata) ? body.metadata : {};
  const bodyName = stringField(meta, 'name');
  const bodyNamespace = stringField(meta, 'namespace');
  if (bodyName !== '' && bodyName !== name) {
    throw invalid('TokenRequest', 'authentication.k8s.io', name, [
      { reason: 'FieldValueInvalid', message: `Invalid value: "${bodyName}": must match the service account name if specified`, field: 'metadata.name' },
    ]);
  }
  if (bodyNamespace !== '' && bodyNamespace !== namespace) {
    throw invalid('TokenRequest', 'authentication.k8s.io', name, [
      {
        reason: 'FieldValueInvalid',
        message: `Invalid value: "${bodyNamespace}": must match the service account namespace if specified`,
        field: 'metadata.namespace',
      },
    ]);
  }
  const sa = refOf(account);
  const bodyUid = stringField(meta, 'uid');
  if (bodyUid !== '' && bodyUid !== sa.uid) {
    throw conflict(
      { group: 'authentication.k8s.io', resource: 'TokenRequest' },
      name,
      `the UID in the token request (${bodyUid}) does not match the UID of the service account (${sa.uid})`,
    );
  }
  const spec = isObject(body.spec) ? { ...body.spec } : {};
  const audiences =
    Array.isArray(spec.audiences) && spec.audiences.length > 0 ? spec.audiences.filter((a): a is string => typeof a === 'string') : tokens.apiAudiences;
  const seconds = typeof spec.expirationSeconds === 'number' ? spec.expirationSeconds : DEFAULT_SECONDS;
  const causes: StatusCause[] = [];
  if (seconds < MIN_SECONDS)
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${seconds}: may not specify a duration less than 10 minutes`,
      field: 'spec.expirationSeconds',
    });
  if (seconds > MAX_SECONDS)
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${seconds}: may not specify a duration larger than 2^32 seconds`,
      field: 'spec.expirationSeconds',
    });
  if (causes.length > 0) throw invalid('TokenRequest', 'authentication.k8s.io', '', causes);

  const claims: KubernetesClaims = { namespace, serviceaccount: sa };
  const ref = isObject(spec.boundObjectRef) ? spec.boundObjectRef : undefined;
  if (ref !== undefined) {
    const kind = stringField(ref, 'kind');
    const apiVersion = stringField(ref, 'apiVersion');
    const refName = stringField(ref, 'name');
    const bindable = apiVersion === 'v1' ? BINDABLE[kind] : undefined;
    if (bindable === undefined) {
      const slash = apiVersion.indexOf('/');
      const gv = slash < 0 ? `/${apiVersion}` : apiVersion;
      throw badRequest(`cannot bind token to object of type ${gv}, Kind=${kind}`);
    }
    const bound = await getObject(r, bindable.type, objectKey(bindable.namespaced ? namespace : '', refName));
    if (bound === undefined) throw notFound({ group: '', resource: bindable.type }, refName);
    const boundRef = refOf(bound);
    if (kind === 'Pod') {
      const podSpec = isObject(bound.spec) ? bound.spec : {};
      if (stringField(podSpec, 'serviceAccountName') !== name) {
        throw badRequest(`cannot bind token for serviceaccount "${name}" to pod running with different serviceaccount name.`);
      }
      claims.pod = boundRef;
      const nodeName = stringField(podSpec, 'nodeName');
      if (nodeName !== '') {
        const node = await getObject(r, 'nodes', nodeName);
        claims.node = node === undefined ? { name: nodeName, uid: '' } : refOf(node);
      }
    } else if (kind === 'Secret') claims.secret = boundRef;
    else claims.node = boundRef;
    const wantUid = stringField(ref, 'uid');
    if (wantUid !== '' && wantUid !== boundRef.uid) {
      throw conflict(
        { group: '', resource: kind },
        refName,
        `the UID in the bound object reference (${wantUid}) does not match the UID in record. The object might have been deleted and then recreated`,
      );
    }
  }
  const nowSeconds = Math.floor(Date.now() / 1000);
  const lifetimes = r.server.authentication?.lifetimes;
  let granted = seconds;
  if (lifetimes !== undefined && lifetimes.maxSeconds > 0 && granted > lifetimes.maxSeconds) {
    r.scope.warn(`requested expiration of ${granted} seconds shortened to ${lifetimes.maxSeconds} seconds`);
    granted = lifetimes.maxSeconds;
  }
  // kube's safe transition to bound tokens: a pod's projected token (the plugin's 3607 s, for the API
  // audiences) is valid for a year; its warnafter claim marks when the requested lifetime ended.
  let lifetime = granted;
  if (
    lifetimes?.extend === true &&
    claims.pod !== undefined &&
    granted === PROJECTED_TOKEN_SECONDS &&
    audiences.every((a) => tokens.apiAudiences.includes(a))
  ) {
    claims.warnafter = nowSeconds + granted;
    lifetime = EXTENDED_SECONDS;
  }
  const token = tokens.issue(`system:serviceaccount:${namespace}:${name}`, audiences, claims, nowSeconds, lifetime);
  const stamp = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const outSpec: Obj = { audiences, expirationSeconds: granted, boundObjectRef: ref ?? null };
  return {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name, namespace, uid: sa.uid, creationTimestamp: stamp(nowSeconds * 1000) },
    spec: outSpec,
    status: { token, expirationTimestamp: stamp((nowSeconds + granted) * 1000) },
  };
}
