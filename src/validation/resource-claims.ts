/**
 * kube 1.36's validation of a pod's dynamic resource claims: `spec.resourceClaims`
 * (validatePodResourceClaims: unique DNS-label names, exactly one of `resourceClaimName` and
 * `resourceClaimTemplateName`, each a DNS subdomain; none on a static (mirror) pod) and the
 * `resources.claims` of containers and of the pod (validateResourceClaimNames: each names a pod claim,
 * once, or distinct requests of it).
 */
import type { StatusCause } from '../api/errors.js';
import { duplicateField, forbiddenField, goJson, invalidField, notFoundField, requiredField } from './field-errors.js';
import { isDNS1123Label, isDNS1123Subdomain } from './string-formats.js';
import { asObject, asString, type Obj } from '../api/values.js';
import { objects } from './value-access.js';

const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** gatherPodResourceClaimNames: the non-empty names of `spec.resourceClaims`. */
export function podClaimNames(spec: Obj): Set<string> {
  return new Set(
    objects(spec.resourceClaims)
      .map((c) => asString(c.name))
      .filter((n) => n !== ''),
  );
}

function claimCauses(claim: Obj, seen: Set<string>, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const name = asString(claim.name);
  if (name === '') causes.push(requiredField(`${at}.name`));
  else if (seen.has(name)) causes.push(duplicateField(`${at}.name`, name));
  else {
    causes.push(...isDNS1123Label(name).map((msg) => invalidField(`${at}.name`, name, msg)));
    seen.add(name);
  }
  const claimName = claim.resourceClaimName;
  const templateName = claim.resourceClaimTemplateName;
  const hasClaim = typeof claimName === 'string';
  const hasTemplate = typeof templateName === 'string';
  if (hasClaim === hasTemplate) {
    // kube prints its internal PodResourceClaim struct (Go field names, nil pointers as null).
    const printed = goJson({ Name: name, ResourceClaimName: hasClaim ? claimName : null, ResourceClaimTemplateName: hasTemplate ? templateName : null });
    const detail = hasClaim
      ? 'at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified'
      : 'must specify one of: `resourceClaimName`, `resourceClaimTemplateName`';
    causes.push(invalidField(at, printed, detail));
  }
  if (hasClaim) causes.push(...isDNS1123Subdomain(claimName).map((msg) => invalidField(`${at}.resourceClaimName`, claimName, msg)));
  if (hasTemplate) causes.push(...isDNS1123Subdomain(templateName).map((msg) => invalidField(`${at}.resourceClaimTemplateName`, templateName, msg)));
  return causes;
}

/**
 * validatePodResourceClaims: `spec.resourceClaims` at `field`. `podMeta` is the Pod's metadata (a
 * template has none): a static pod may not have claims at all, which kube reports at the empty path.
 */
export function validatePodResourceClaims(spec: Obj, podMeta: Obj | undefined, field: string): StatusCause[] {
  const claims = objects(spec.resourceClaims);
  if (podMeta !== undefined && Object.hasOwn(asObject(podMeta.annotations), MIRROR_POD_ANNOTATION)) {
    return claims.map(() => forbiddenField('[]', 'static pods do not support resource claims'));
  }
  const seen = new Set<string>();
  return claims.flatMap((claim, i) => claimCauses(claim, seen, `${field}[${i}]`));
}

/** validateResourceClaimNames: the `claims` of a ResourceRequirements at `field`, against the pod's claim names. */
export function validateClaimReferences(claims: unknown, podClaims: ReadonlySet<string>, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  objects(claims).forEach((claim, i) => {
    const at = `${field}[${i}]`;
    const name = asString(claim.name);
    if (name === '') {
      causes.push(requiredField(at));
      return;
    }
    if (seen.has(name)) causes.push(duplicateField(at, name));
    else {
      const request = asString(claim.request);
      let key = name;
      if (request !== '') {
        causes.push(...isDNS1123Label(request).map((msg) => invalidField(`${at}.request`, request, msg)));
        key += `/${request}`;
      }
      if (seen.has(key)) causes.push(duplicateField(at, key));
      else if (request === '') {
        // A whole claim overlaps every request of it referenced before.
        for (const earlier of seen) if (earlier.startsWith(`${name}/`)) causes.push(duplicateField(at, name));
      }
      seen.add(key);
    }
    if (!podClaims.has(name)) {
      // field.NotFound takes no detail; kube sets one on the error for a friendlier message.
      const names = [...podClaims].sort();
      const detail = `must be one of the names in pod.spec.resourceClaims${names.length === 0 ? ' which is empty' : `: ${names.join(', ')}`}`;
      const notFound = notFoundField(at, name);
      causes.push({ ...notFound, message: `${notFound.message ?? ''}: ${detail}` });
    }
  });
  return causes;
}
