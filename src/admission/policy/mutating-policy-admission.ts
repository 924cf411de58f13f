import jsonPatch from 'fast-json-patch';
import { ApiError, internalError } from '../../api/errors.js';
import { isObject, type Obj } from '../../api/object-util.js';
import { typeFor } from '../../fieldmanager/track-write.js';
import { mergeValues } from '../../fieldmanager/typed-value.js';
import type { ResourceCatalog } from '../../catalog/resource-catalog.js';
import type { CustomResourceFacts } from '../../catalog/custom-resource-facts.js';
import type { ResourceInfo } from '../../api/resource-info.js';
import type { Authorizer } from '../../auth/authorizer.js';
import type { Storage } from '../../storage/storage.js';
import { applyDefaults } from '../../strategy/resource-strategy.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../admission.js';
import { MAX_AUTHORIZATION_ROUNDS, PolicyAuthorizer } from './policy-authorizer.js';
import { PolicyCache } from './policy-cache.js';
import {
  CostBudget,
  compileExpression,
  compileNamed,
  evaluate,
  evaluateMatchConditions,
  withVariables,
  type CompiledExpression,
  type NamedExpression,
} from './policy-expressions.js';
import { isConfigurationFailure, matchingPolicies } from './policy-bindings.js';
import { admissionRequestOf, namespaceObjectOf, objectsOf } from './policy-inputs.js';
import { convertBetween, NamespaceLookup, selectorNamespaceOf, type MatchedAs } from './policy-matching.js';

export const MUTATING_POLICIES = 'mutatingadmissionpolicies.admissionregistration.k8s.io';
export const MUTATING_POLICY_BINDINGS = 'mutatingadmissionpolicybindings.admissionregistration.k8s.io';

interface CompiledMutation {
  patchType: string;
  expression: CompiledExpression;
}

/** A MutatingAdmissionPolicy's expressions, compiled once per generation. */
export interface CompiledMutatingPolicy {
  failurePolicy: string;
  reinvocationPolicy: string;
  matchConditions: NamedExpression[];
  variables: NamedExpression[];
  mutations: CompiledMutation[];
}

/** Compiles every expression of a MutatingAdmissionPolicy's spec. */
export function compileMutatingPolicy(policy: Obj): CompiledMutatingPolicy {
  const spec = isObject(policy.spec) ? policy.spec : {};
  const mutations = Array.isArray(spec.mutations) ? spec.mutations.filter(isObject) : [];
  return {
    failurePolicy: spec.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
    reinvocationPolicy: spec.reinvocationPolicy === 'IfNeeded' ? 'IfNeeded' : 'Never',
    matchConditions: compileNamed(spec.matchConditions),
    variables: compileNamed(spec.variables),
    mutations: mutations.map((m) => {
      const patchType = typeof m.patchType === 'string' ? m.patchType : '';
      const body = patchType === 'JSONPatch' ? m.jsonPatch : m.applyConfiguration;
      return { patchType, expression: compileExpression(isObject(body) ? body.expression : undefined) };
    }),
  };
}

interface PolicyError {
  policy: string;
  binding: string | undefined;
  message: string;
  reason: string | undefined;
}

function nameOf(o: Obj): string {
  const meta = isObject(o.metadata) ? o.metadata : {};
  return typeof meta.name === 'string' ? meta.name : '';
}

function policyErrorText(e: PolicyError): string {
  return e.binding === undefined
    ? `policy "${e.policy}" denied request: ${e.message}`
    : `policy '${e.policy}' with binding '${e.binding}' denied request: ${e.message}`;
}

function admissionName(a: AdmissionAttributes): string {
  if (a.name !== '') return a.name;
  const meta = isObject(a.object?.metadata) ? a.object.metadata : {};
  if (typeof meta.name === 'string' && meta.name !== '') return meta.name;
  if (typeof meta.generateName === 'string' && meta.generateName !== '') return meta.generateName;
  return 'Unknown';
}

/** kube's policy-dispatcher error: 403 whose message is the first error's and whose causes list them all. */
function policyErrorsStatus(a: AdmissionAttributes, errors: PolicyError[]): ApiError {
  const first = errors[0];
  return new ApiError(403, first?.reason ?? 'Forbidden', first === undefined ? '' : policyErrorText(first), {
    name: admissionName(a),
    group: a.info.group || undefined,
    kind: a.info.resource,
    causes: errors.map((e) => ({ message: policyErrorText(e) })),
  });
}

/** kube's policy reinvocation context of one request. */
interface ReinvocationContext {
  /** The object as the plugin's last pass left it. */
  lastOutput: string | undefined;
  /** IfNeeded invocations (policy, binding, param) that ran since the object last changed. */
  previouslyInvoked: Set<string>;
  /** Invocations the reinvocation pass runs again. */
  reinvoke: Set<string>;
  isReinvoke: boolean;
}

function requireReinvoking(ctx: ReinvocationContext): void {
  for (const key of ctx.previouslyInvoked) ctx.reinvoke.add(key);
  ctx.previouslyInvoked.clear();
}

/** Replaces `target`'s contents with `source`'s (the write path holds the object by reference). */
function replaceContents(target: Obj, source: Obj): void {
  for (const k of Object.keys(target)) delete target[k];
  Object.assign(target, source);
}

/**
 * A mutated object of the matched version back in the request's version (through the CRD's webhook
 * for custom resources converting by webhook); a failure is kube's 500 `failed to convert object`.
 */
async function backToRequestVersion(facts: CustomResourceFacts, object: Obj, as: MatchedAs, a: AdmissionAttributes): Promise<Obj> {
  try {
    return await convertBetween(facts, object, as.info, a.info);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    throw internalError(new Error(`failed to convert object: ${err.message}`));
  }
}

/** kube's JSON patch replaces a missing key of an existing object by adding it. */
function asKubePatchOperation(doc: unknown, op: jsonPatch.Operation): jsonPatch.Operation {
  if (op.op !== 'replace') return op;
  const slash = op.path.lastIndexOf('/');
  if (slash < 0) return op;
  const parent: unknown = slash === 0 ? doc : jsonPatch.getValueByPointer(doc, op.path.slice(0, slash));
  const key = op.path
    .slice(slash + 1)
    .replace(/~1/g, '/')
    .replace(/~0/g, '~');
  if (isObject(parent) && !Array.isArray(parent) && !(key in parent)) return { op: 'add', path: op.path, value: op.value as unknown };
  return op;
}

/** One mutation's result applied to `object`, or the error kube reports for it. */
function applyMutation(
  m: CompiledMutation,
  value: unknown,
  object: Obj,
  info: ResourceInfo,
  facts: CustomResourceFacts,
): { ok: true; object: Obj } | { ok: false; error: string } {
  if (m.patchType === 'JSONPatch') {
    if (!Array.isArray(value)) return { ok: false, error: 'type mismatch: JSONPatchType.expression should evaluate to array' };
    const ops: jsonPatch.Operation[] = [];
    for (const item of value) {
      if (!isObject(item)) return { ok: false, error: 'type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch' };
      ops.push(item as unknown as jsonPatch.Operation);
    }
    let doc: unknown = structuredClone(object);
    for (const op of ops) {
      try {
        doc = jsonPatch.applyOperation(doc, asKubePatchOperation(doc, op), true, true).newDocument;
      } catch (err) {
        const missing = err instanceof jsonPatch.JsonPatchError && err.name === 'OPERATION_PATH_UNRESOLVABLE';
        const detail = missing
          ? `${op.op} operation does not apply: doc is missing path: ${op.path}: missing value`
          : err instanceof Error
            ? err.message.split('\n')[0]
            : String(err);
        return { ok: false, error: `JSON Patch: ${detail}` };
      }
    }
    return isObject(doc) ? { ok: true, object: doc } : { ok: false, error: 'JSON Patch: the patched document is not an object' };
  }
  if (!isObject(value)) return { ok: false, error: `unsupported return type from ApplyConfiguration expression: ${typeof value}` };
  const merged = mergeValues(structuredClone(object), structuredClone(value), typeFor(info, facts));
  if (!isObject(merged)) return { ok: false, error: 'error applying patch: the merged object is not an object' };
  return { ok: true, object: merged };
}

/**
 * kube's MutatingAdmissionPolicy plugin: for every matching policy and binding, with each param
 * object, the policy's mutations (ApplyConfiguration merged as structured-merge-diff merges, or
 * JSONPatch) are applied in order to the object in the version the policy matched, then defaulted
 * and converted back. Errors follow the policy's failurePolicy; failures answer 403 with kube's
 * `policy 'p' with binding 'b' denied request: ...`.
 */
export class MutatingAdmissionPolicyPlugin implements AdmissionPlugin {
  readonly name = 'MutatingAdmissionPolicy';
  readonly cache: PolicyCache<CompiledMutatingPolicy>;

  constructor(
    private readonly catalog: ResourceCatalog,
    private readonly storage: Storage,
    private readonly authorizer: Authorizer,
    signal: AbortSignal,
    onError: (err: unknown) => void,
  ) {
    this.cache = new PolicyCache(storage, MUTATING_POLICIES, MUTATING_POLICY_BINDINGS, compileMutatingPolicy, signal, onError);
  }

  /** Lists and watches policies and bindings; requests wait for the first lists. */
  start(): Promise<void> {
    return this.cache.start();
  }

  /** Nothing to apply while no policy is bound. */
  idle(): boolean {
    return this.cache.idle();
  }

  /**
   * One mutating pass. On the chain's reinvocation pass, the policies with `reinvocationPolicy:
   * IfNeeded` that ran before the object was changed again (by a later policy or plugin) run once more.
   */
  async admit(a: AdmissionAttributes): Promise<void> {
    const fresh = (): ReinvocationContext => ({ lastOutput: undefined, previouslyInvoked: new Set(), reinvoke: new Set(), isReinvoke: false });
    const ctx = a.reinvocation?.value(this.name, fresh) ?? fresh();
    ctx.isReinvoke = a.reinvocation?.isReinvoke === true;
    if (ctx.isReinvoke && JSON.stringify(a.object) !== ctx.lastOutput) requireReinvoking(ctx);
    await this.run(a, ctx);
  }

  private async run(a: AdmissionAttributes, ctx: ReinvocationContext): Promise<void> {
    await this.cache.ready;
    const entries = this.cache.entries();
    if (entries.length === 0) return;
    const errors: PolicyError[] = [];
    const namespaces = new NamespaceLookup(this.storage);
    const isNamespace = a.info.group === '' && a.info.resource === 'namespaces';
    const nsName = isNamespace ? '' : selectorNamespaceOf(a);
    let namespaceObject: Obj | null = null;
    if (nsName !== '') {
      const ns = await namespaces.get(nsName);
      if (ns === undefined) throw new ApiError(404, 'NotFound', `namespaces "${nsName}" not found`, { name: nsName, kind: 'namespaces' });
      namespaceObject = namespaceObjectOf(ns);
    }
    for await (const step of matchingPolicies(this.catalog, this.storage, namespaces, entries, a)) {
      if (isConfigurationFailure(step)) {
        errors.push(step);
        continue;
      }
      const { policy: policyName, compiled, matched } = step;
      for await (const b of step.bindings()) {
        if (isConfigurationFailure(b)) {
          errors.push(b);
          continue;
        }
        const { binding: bindingName, params } = b;
        for (const param of params) {
          const key = JSON.stringify([
            policyName,
            bindingName,
            param === null ? '' : `${String((param.metadata as Obj | undefined)?.namespace)}/${nameOf(param)}`,
          ]);
          if (ctx.isReinvoke && !ctx.reinvoke.has(key)) continue;
          const before = JSON.stringify(a.object);
          let objects: { object: Obj | null; oldObject: Obj | null };
          try {
            objects = await objectsOf(this.catalog.customResources, a, matched);
          } catch (err) {
            // kube's versioned attributes for the matched kind: a failed conversion is the policy's configuration error.
            if (!(err instanceof ApiError)) throw err;
            if (compiled.failurePolicy !== 'Ignore')
              errors.push({ policy: policyName, binding: undefined, message: `failed to configure policy: ${err.message}`, reason: undefined });
            continue;
          }
          const authz = new PolicyAuthorizer(this.authorizer, a.request?.user);
          let outcome = this.mutate(a, objects, matched, compiled, param, namespaceObject, authz);
          for (let round = 1; authz.pending && round < MAX_AUTHORIZATION_ROUNDS; round++) {
            await authz.resolve();
            outcome = this.mutate(a, objects, matched, compiled, param, namespaceObject, authz);
          }
          if ('error' in outcome) {
            if (compiled.failurePolicy !== 'Ignore') errors.push({ policy: policyName, binding: bindingName, message: outcome.error, reason: 'Invalid' });
          } else if (outcome.object !== undefined && a.object !== undefined)
            replaceContents(a.object, await backToRequestVersion(this.catalog.customResources, outcome.object, matched, a));
          if (JSON.stringify(a.object) !== before) {
            requireReinvoking(ctx);
            if (a.reinvocation !== undefined) a.reinvocation.shouldReinvoke = true;
          }
          if (compiled.reinvocationPolicy === 'IfNeeded') ctx.previouslyInvoked.add(key);
        }
      }
    }
    ctx.lastOutput = JSON.stringify(a.object);
    if (errors.length > 0) throw policyErrorsStatus(a, errors);
  }

  /**
   * One invocation's match conditions and mutations on a copy of `objects.object` (the request's
   * object in the matched version): the mutated object in that version (undefined when nothing
   * applied), or the error. No side effects, so that it can run again once authorizer decisions are known.
   */
  private mutate(
    a: AdmissionAttributes,
    objects: { object: Obj | null; oldObject: Obj | null },
    as: MatchedAs,
    compiled: CompiledMutatingPolicy,
    param: Obj | null,
    namespaceObject: Obj | null,
    authz: PolicyAuthorizer,
  ): { object: Obj | undefined } | { error: string } {
    if (objects.object === null) return { object: undefined };
    let object = structuredClone(objects.object);
    const oldObject = objects.oldObject;
    const request = admissionRequestOf(a, as);
    const authorizer = authz.variables(a);
    const inputs = (): Obj => ({ object, oldObject, request, params: param, namespaceObject, ...authorizer });
    const conditions = evaluateMatchConditions(compiled.matchConditions, inputs(), compiled.failurePolicy);
    if ('error' in conditions) return { error: conditions.error };
    if (!conditions.matches || compiled.mutations.length === 0) return { object: undefined };
    for (const m of compiled.mutations) {
      // Each mutation has kube's runtime cost budget, shared with the variables it reads.
      const budget = new CostBudget();
      const { vars, explain } = withVariables(inputs(), compiled.variables, budget);
      const out = evaluate(m.expression, vars, budget);
      if (!out.ok) return { error: explain(out.error) };
      const applied = applyMutation(m, out.value, object, as.info, this.catalog.customResources);
      if (!applied.ok) return { error: applied.error };
      object = applied.object;
      applyDefaults(as.info, object, this.catalog.customResources);
    }
    return { object };
  }
}
