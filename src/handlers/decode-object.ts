import { badRequest } from '../api/errors.js';
import { decodeBody, readBody } from '../codec/request-body.js';
import { isObject, type Obj } from './object-util.js';
import type { ResourceRequest } from './context.js';

/**
 * Reads and decodes a create/update body for the request's type: it must be an object whose
 * `apiVersion` and `kind`, when present, name the served version and kind (400 otherwise, with
 * kube-apiserver's messages). Missing `apiVersion`/`kind` default to the path's.
 */
export async function decodeObject(r: ResourceRequest, expectedKind = r.info.kind, expectedApiVersion = r.apiVersion): Promise<Obj> {
  const body = await readBody(r.req);
  const value = decodeBody(r.req.headers['content-type'], body, expectedKind);
  if (!isObject(value)) {
    throw badRequest(`the object provided is unrecognized (must be of type ${expectedKind}): couldn't get version/kind; json parse error: json: cannot unmarshal ${Array.isArray(value) ? 'array' : typeof value} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`);
  }
  const kind = value.kind;
  const apiVersion = value.apiVersion;
  if (kind !== undefined && typeof kind !== 'string') throw badRequest(`the object provided is unrecognized (must be of type ${expectedKind}): kind must be a string`);
  if (apiVersion !== undefined && typeof apiVersion !== 'string') throw badRequest(`the object provided is unrecognized (must be of type ${expectedKind}): apiVersion must be a string`);
  if (apiVersion && apiVersion !== expectedApiVersion) {
    if (kind && kind !== expectedKind) {
      throw badRequest(`${kind} in version "${versionOf(apiVersion)}" cannot be handled as a ${expectedKind}: no kind "${kind}" is registered for version "${apiVersion}" in scheme "capstan"`);
    }
    throw badRequest(`the API version in the data (${apiVersion}) does not match the expected API version (${expectedApiVersion})`);
  }
  if (kind && kind !== expectedKind) {
    throw badRequest(`${kind} in version "${versionOf(expectedApiVersion)}" cannot be handled as a ${expectedKind}: converting (${kind}) to (${expectedKind}): unknown conversion`);
  }
  return value;
}

function versionOf(apiVersion: string): string {
  const i = apiVersion.lastIndexOf('/');
  return i < 0 ? apiVersion : apiVersion.slice(i + 1);
}
