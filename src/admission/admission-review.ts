import { randomUUID } from 'node:crypto';
import type { Obj } from '../api/object-util.js';
import type { User } from '../api/user.js';
import type { ResourceInfo } from '../api/resource-info.js';
import { isObject } from '../api/values.js';

/**
 * AdmissionReview objects (admission.k8s.io/v1, or v1beta1 for webhooks that accept only it) as
 * kube-apiserver builds them for a webhook call, and the checks kube makes of the answer.
 */

/** What one webhook call is about. */
export interface ReviewSubject {
  operation: string;
  /** The resource the webhook matched (the request's own, or an equivalent one). */
  resource: ResourceInfo;
  /** The resource the request was made to. */
  requestResource: ResourceInfo;
  subresource: string;
  name: string;
  namespace: string;
  user: User;
  /** Both in the matched resource's version. */
  object: Obj | undefined;
  oldObject: Obj | undefined;
  dryRun: boolean;
  options: Obj | undefined;
}

/** The review versions Capstan speaks, in kube's preference order. */
const REVIEW_VERSIONS = ['v1', 'v1beta1'];

/** The AdmissionReview version to send (the webhook's first that kube speaks), or undefined. */
export function reviewVersionFor(admissionReviewVersions: string[]): string | undefined {
  return admissionReviewVersions.find((v) => REVIEW_VERSIONS.includes(v));
}

function kindOf(info: ResourceInfo, subresource: string): { group: string; version: string; kind: string } {
  const sub = subresource === '' ? undefined : info.subresources[subresource];
  if (sub !== undefined && sub.kind !== '') return { group: sub.group, version: sub.version, kind: sub.kind };
  return { group: info.group, version: info.version, kind: info.kind };
}

/** A request with a fresh uid, its fields in the order Go's encoder writes AdmissionRequest's. */
export function admissionReview(version: string, s: ReviewSubject): { uid: string; review: Obj } {
  const uid = randomUUID();
  const userInfo: Obj = {};
  if (s.user.name !== '') userInfo.username = s.user.name;
  if (s.user.uid !== '') userInfo.uid = s.user.uid;
  if (s.user.groups.length > 0) userInfo.groups = s.user.groups;
  if (Object.keys(s.user.extra).length > 0) userInfo.extra = s.user.extra;
  const request: Obj = {
    uid,
    kind: kindOf(s.resource, s.subresource),
    resource: { group: s.resource.group, version: s.resource.version, resource: s.resource.resource },
  };
  if (s.subresource !== '') request.subResource = s.subresource;
  request.requestKind = kindOf(s.requestResource, s.subresource);
  request.requestResource = { group: s.requestResource.group, version: s.requestResource.version, resource: s.requestResource.resource };
  if (s.subresource !== '') request.requestSubResource = s.subresource;
  if (s.name !== '') request.name = s.name;
  if (s.namespace !== '') request.namespace = s.namespace;
  request.operation = s.operation;
  request.userInfo = userInfo;
  request.object = s.object ?? null;
  request.oldObject = s.oldObject ?? null;
  request.dryRun = s.dryRun;
  request.options = s.options ?? null;
  return { uid, review: { kind: 'AdmissionReview', apiVersion: `admission.k8s.io/${version}`, request } };
}

/** A webhook's verified answer. */
export interface AdmissionResponse {
  allowed: boolean;
  /** JSON Patch operations (mutating webhooks), or undefined. */
  patch: unknown[] | undefined;
  /** A Status the webhook gave with a denial (`result`). */
  result: Obj | undefined;
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

/** A webhook answer kube refuses: "received invalid webhook response: MESSAGE". */
export class InvalidResponseError extends Error {}

/** A patch kube cannot decode: "received undecodable patch in webhook response: MESSAGE". */
export class UndecodablePatchError extends Error {}

/**
 * kube's VerifyAdmissionResponse: the answer must be an AdmissionReview of the version sent, with a
 * response for the request's uid; only a mutating webhook may return a patch, and then with a
 * patchType (JSONPatch, the only one kube applies).
 */
export function verifyAdmissionResponse(version: string, uid: string, mutating: boolean, answer: unknown): AdmissionResponse {
  if (!isObject(answer)) throw new InvalidResponseError('webhook response was absent');
  const response = answer.response;
  if (!isObject(response)) throw new InvalidResponseError('webhook response was absent');
  const patchText = typeof response.patch === 'string' ? response.patch : '';
  const patchType = response.patchType;
  if (version === 'v1') {
    if (response.uid !== uid)
      throw new InvalidResponseError(
        `expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(typeof response.uid === 'string' ? response.uid : '')}`,
      );
    if (answer.apiVersion !== 'admission.k8s.io/v1' || answer.kind !== 'AdmissionReview') {
      const apiVersion = typeof answer.apiVersion === 'string' ? answer.apiVersion : '';
      const got = `${apiVersion.includes('/') ? apiVersion : `/${apiVersion}`}, Kind=${typeof answer.kind === 'string' ? answer.kind : ''}`;
      throw new InvalidResponseError(`expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${got}`);
    }
    if (mutating) {
      if (patchText !== '' && patchType === undefined) throw new InvalidResponseError('webhook returned response.patch but not response.patchType');
      if (patchText === '' && patchType !== undefined && patchType !== null)
        throw new InvalidResponseError('webhook returned response.patchType but not response.patch');
      if (patchType === '') throw new InvalidResponseError('webhook returned invalid response.patchType of ""');
    } else {
      if (patchText !== '') throw new InvalidResponseError('validating webhook may not return response.patch');
      if (patchType !== undefined && patchType !== null) throw new InvalidResponseError('validating webhook may not return response.patchType');
    }
  }
  let patch: unknown[] | undefined;
  if (mutating && patchText !== '') {
    if (version === 'v1' && patchType !== 'JSONPatch') throw new UnsupportedPatchTypeError(String(patchType));
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(patchText, 'base64').toString('utf8'));
    } catch (err) {
      throw new UndecodablePatchError(err instanceof Error ? err.message : String(err));
    }
    if (!Array.isArray(decoded)) throw new UndecodablePatchError('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
    patch = decoded;
  }
  const warnings = Array.isArray(response.warnings) ? response.warnings.filter((w): w is string => typeof w === 'string') : [];
  const auditAnnotations: Record<string, string> = {};
  if (isObject(response.auditAnnotations)) for (const [k, v] of Object.entries(response.auditAnnotations)) if (typeof v === 'string') auditAnnotations[k] = v;
  return { allowed: response.allowed === true, patch, result: isObject(response.status) ? response.status : undefined, warnings, auditAnnotations };
}

/** A patch of a type kube does not apply: `unsupported patch type "X"`. */
export class UnsupportedPatchTypeError extends Error {}
