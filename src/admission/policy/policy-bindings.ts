import { isObject, type Obj } from '../../api/object-util.js';
import type { ResourceCatalog } from '../../catalog/resource-catalog.js';
import type { Storage } from '../../storage/storage.js';
import type { AdmissionAttributes } from '../admission.js';
import type { PolicyEntry } from './policy-cache.js';
import { collectParams } from './policy-inputs.js';
import { matchResources, type MatchedAs, type NamespaceLookup } from './policy-matching.js';

/**
 * A policy or binding that cannot be applied to the request: kube's `failed to configure policy: ...`
 * or `failed to configure binding: ...`. Only yielded when the policy's failurePolicy is Fail.
 */
export interface ConfigurationFailure {
  policy: string;
  binding: string | undefined;
  message: string;
  reason: undefined;
}

/** A binding whose policy and matchResources match the request, with the param objects to evaluate it with. */
export interface MatchingBinding {
  binding: string;
  /** The binding's spec (validationActions and the like). */
  spec: Obj;
  /** `[null]` when the policy takes no params; empty when none were found and the binding allows that. */
  params: (Obj | null)[];
}

/** A policy whose matchConstraints match the request: its bindings are walked on demand, in name order. */
export interface MatchingPolicy<C> {
  policy: string;
  compiled: C;
  matched: MatchedAs;
  bindings(): AsyncGenerator<MatchingBinding | ConfigurationFailure>;
}

function nameOf(o: Obj): string {
  const meta = isObject(o.metadata) ? o.metadata : {};
  return typeof meta.name === 'string' ? meta.name : '';
}

/**
 * kube's policy dispatcher walk, shared by the validating and mutating policy plugins: for each cached
 * policy (in name order) whose matchConstraints match the request, the bindings whose own
 * matchResources match and whose params can be collected. A policy without matchConstraints, a match
 * that cannot be evaluated, or params that cannot be collected is a configuration failure, dropped
 * when the policy's failurePolicy is Ignore.
 */
export async function* matchingPolicies<C extends { failurePolicy: string }>(
  catalog: ResourceCatalog,
  storage: Storage,
  namespaces: NamespaceLookup,
  entries: PolicyEntry<C>[],
  a: AdmissionAttributes,
): AsyncGenerator<MatchingPolicy<C> | ConfigurationFailure> {
  for (const { policy, compiled, bindings } of entries) {
    const policyName = nameOf(policy);
    const spec = isObject(policy.spec) ? policy.spec : {};
    const reported = compiled.failurePolicy !== 'Ignore';
    const failure = (message: string, binding?: string): ConfigurationFailure => ({
      policy: policyName,
      binding,
      message: binding === undefined ? `failed to configure policy: ${message}` : `failed to configure binding: ${message}`,
      reason: undefined,
    });
    if (!isObject(spec.matchConstraints)) {
      if (reported) yield failure('policy contained no match constraints, a required field');
      continue;
    }
    const matched = await matchResources(catalog, namespaces, spec.matchConstraints, a);
    if ('error' in matched) {
      if (reported) yield failure(matched.error);
      continue;
    }
    if (!matched.matches) continue;
    async function* bindingsOf(): AsyncGenerator<MatchingBinding | ConfigurationFailure> {
      for (const binding of bindings) {
        const bindingName = nameOf(binding);
        const bspec = isObject(binding.spec) ? binding.spec : {};
        if (isObject(bspec.matchResources)) {
          const bm = await matchResources(catalog, namespaces, bspec.matchResources, a);
          if ('error' in bm) {
            if (reported) yield failure(bm.error, bindingName);
            continue;
          }
          if (!bm.matches) continue;
        }
        const params = await collectParams(catalog, storage, spec.paramKind, bspec.paramRef, a.namespace);
        if (!params.ok) {
          if (reported) yield failure(params.error, bindingName);
          continue;
        }
        yield { binding: bindingName, spec: bspec, params: params.params };
      }
    }
    yield { policy: policyName, compiled, matched: matched.as, bindings: bindingsOf };
  }
}

/** True for the walk's configuration failures (as opposed to matches). */
export function isConfigurationFailure(step: object): step is ConfigurationFailure {
  return 'message' in step;
}
