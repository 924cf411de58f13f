import { ApiError } from '../../api/errors.js';
import { isObject, type Obj } from '../../api/object-util.js';
import type { ResourceCatalog } from '../../catalog/resource-catalog.js';
import type { Authorizer } from '../../auth/authorizer.js';
import type { Storage } from '../../storage/storage.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../admission.js';
import { MAX_AUTHORIZATION_ROUNDS, PolicyAuthorizer } from './policy-authorizer.js';
import { PolicyCache } from './policy-cache.js';
import {
  CostBudget,
  OUT_OF_BUDGET,
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
import { NamespaceLookup, selectorNamespaceOf } from './policy-matching.js';

export const VALIDATING_POLICIES = 'validatingadmissionpolicies.admissionregistration.k8s.io';
export const VALIDATING_POLICY_BINDINGS = 'validatingadmissionpolicybindings.admissionregistration.k8s.io';

const MAX_MESSAGE_BYTES = 5 * 1024;
const MAX_AUDIT_VALUE = 10 * 1024;

interface CompiledValidation {
  expression: CompiledExpression;
  message: string;
  messageExpression: CompiledExpression | undefined;
  reason: string | undefined;
}

/** A ValidatingAdmissionPolicy's expressions, compiled once per generation. */
export interface CompiledValidatingPolicy {
  failurePolicy: string;
  matchConditions: NamedExpression[];
  variables: NamedExpression[];
  validations: CompiledValidation[];
  auditAnnotations: { key: string; valueExpression: CompiledExpression }[];
}

/** Compiles every expression of a ValidatingAdmissionPolicy's spec. */
export function compileValidatingPolicy(policy: Obj): CompiledValidatingPolicy {
  const spec = isObject(policy.spec) ? policy.spec : {};
  const validations = Array.isArray(spec.validations) ? spec.validations.filter(isObject) : [];
  const audit = Array.isArray(spec.auditAnnotations) ? spec.auditAnnotations.filter(isObject) : [];
  return {
    failurePolicy: spec.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
    matchConditions: compileNamed(spec.matchConditions),
    variables: compileNamed(spec.variables),
    validations: validations.map((v) => ({
      expression: compileExpression(v.expression),
      message: typeof v.message === 'string' ? v.message : '',
      messageExpression: typeof v.messageExpression === 'string' && v.messageExpression !== '' ? compileExpression(v.messageExpression) : undefined,
      reason: typeof v.reason === 'string' && v.reason !== '' ? v.reason : undefined,
    })),
    auditAnnotations: audit.map((x) => ({ key: typeof x.key === 'string' ? x.key : '', valueExpression: compileExpression(x.valueExpression) })),
  };
}

const VALIDATION_FAILURE = 'validation.policy.admission.k8s.io/validation_failure';

/** What one invocation decided: denials, warnings, and audit annotations (key, value). */
interface Invocation {
  denials: Denial[];
  warnings: string[];
  audit: [string, string][];
}

interface Denial {
  policy: string;
  binding: string | undefined;
  message: string;
  reason: string | undefined;
}

/** kube's mapping of a validation's reason to the answer's code. */
function codeOf(reason: string): number {
  switch (reason) {
    case 'Forbidden':
      return 403;
    case 'Unauthorized':
      return 401;
    case 'RequestEntityTooLarge':
      return 413;
    default:
      return 422;
  }
}

/** The name kube's admission errors carry: the request's, else the object's name or generateName, else "Unknown". */
function admissionName(a: AdmissionAttributes): string {
  if (a.name !== '') return a.name;
  const meta = isObject(a.object?.metadata) ? a.object.metadata : {};
  if (typeof meta.name === 'string' && meta.name !== '') return meta.name;
  if (typeof meta.generateName === 'string' && meta.generateName !== '') return meta.generateName;
  return 'Unknown';
}

/** The error kube answers for the first denial: 422 Invalid unless the validation named another reason. */
export function denialError(a: AdmissionAttributes, d: Denial): ApiError {
  const message =
    d.binding === undefined
      ? `ValidatingAdmissionPolicy '${d.policy}' denied request: ${d.message}`
      : `ValidatingAdmissionPolicy '${d.policy}' with binding '${d.binding}' denied request: ${d.message}`;
  const name = admissionName(a);
  const resource = a.info.group === '' ? a.info.resource : `${a.info.resource}.${a.info.group}`;
  const reason = d.reason ?? 'Invalid';
  return new ApiError(codeOf(reason), reason, `${resource} "${name}" is forbidden: ${message}`, {
    name,
    group: a.info.group || undefined,
    kind: a.info.resource,
    causes: [{ message }],
  });
}

/**
 * kube's ValidatingAdmissionPolicy plugin. For every policy whose matchConstraints match the request
 * and every binding of it whose matchResources match, with each param object: matchConditions,
 * variables, validations and audit annotations are evaluated, and a failed validation acts as the
 * binding's validationActions say (Deny: the request fails with the first denial; Warn: a
 * `Warning` header; Audit: an audit annotation). Errors follow the policy's failurePolicy.
 */
export class ValidatingAdmissionPolicyPlugin implements AdmissionPlugin {
  readonly name = 'ValidatingAdmissionPolicy';
  readonly cache: PolicyCache<CompiledValidatingPolicy>;

  constructor(
    private readonly catalog: ResourceCatalog,
    private readonly storage: Storage,
    private readonly authorizer: Authorizer,
    signal: AbortSignal,
    onError: (err: unknown) => void,
  ) {
    this.cache = new PolicyCache(storage, VALIDATING_POLICIES, VALIDATING_POLICY_BINDINGS, compileValidatingPolicy, signal, onError);
  }

  /** Lists and watches policies and bindings; requests wait for the first lists. */
  start(): Promise<void> {
    return this.cache.start();
  }

  /** Nothing to evaluate while no policy is bound. */
  idle(): boolean {
    return this.cache.idle();
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    await this.cache.ready;
    const entries = this.cache.entries();
    if (entries.length === 0) return;
    const denials: Denial[] = [];
    const namespaces = new NamespaceLookup(this.storage);
    for await (const step of matchingPolicies(this.catalog, this.storage, namespaces, entries, a)) {
      if (isConfigurationFailure(step)) {
        denials.push(step);
        continue;
      }
      const { policy: policyName, compiled, matched } = step;
      const audit = new Map<string, string[]>();
      // Converted once per policy, when a binding first has params to evaluate (kube's deferred versionedAttr).
      let objects: { object: Obj | null; oldObject: Obj | null } | undefined;
      for await (const b of step.bindings()) {
        if (isConfigurationFailure(b)) {
          denials.push(b);
          continue;
        }
        const { binding: bindingName, spec: bspec, params } = b;
        const nsName = selectorNamespaceOf(a);
        const namespaceObject =
          nsName !== '' && !(a.info.group === '' && a.info.resource === 'namespaces') ? namespaceObjectOf(await namespaces.get(nsName)) : null;
        const actions = Array.isArray(bspec.validationActions) ? bspec.validationActions : [];
        if (objects === undefined && params.length > 0) {
          try {
            objects = await objectsOf(this.catalog.customResources, a, matched);
          } catch (err) {
            if (!(err instanceof ApiError)) throw err;
            if (compiled.failurePolicy !== 'Ignore')
              denials.push({
                policy: policyName,
                binding: bindingName,
                message: `failed to configure binding: failed to convert object version: ${err.message}`,
                reason: undefined,
              });
            continue;
          }
        }
        for (const param of params) {
          const base: Obj = { ...objects, request: admissionRequestOf(a, matched), params: param, namespaceObject };
          const authz = new PolicyAuthorizer(this.authorizer, a.request?.user);
          const inputs = { ...base, ...authz.variables(a) };
          let outcome = this.invoke(compiled, inputs, policyName, bindingName, actions);
          for (let round = 1; authz.pending && round < MAX_AUTHORIZATION_ROUNDS; round++) {
            await authz.resolve();
            outcome = this.invoke(compiled, inputs, policyName, bindingName, actions);
          }
          denials.push(...outcome.denials);
          for (const w of outcome.warnings) a.request?.warn(w);
          for (const [key, value] of outcome.audit) {
            if (key === VALIDATION_FAILURE) {
              a.request?.annotate(key, value);
              continue;
            }
            const values = audit.get(key) ?? [];
            if (!values.includes(value)) values.push(value);
            audit.set(key, values);
          }
        }
      }
      for (const [key, values] of audit) {
        a.request?.annotate(`${policyName}/${key}`, values.join(', '));
      }
    }
    if (denials.length > 0) throw denialError(a, denials[0]);
  }

  /**
   * One invocation (policy, binding, param): match conditions, variables, validations and audit
   * annotations, without side effects, so that it can run again once authorizer decisions are known.
   */
  private invoke(compiled: CompiledValidatingPolicy, inputs: Obj, policyName: string, bindingName: string, actions: unknown[]): Invocation {
    const result: Invocation = { denials: [], warnings: [], audit: [] };
    const conditions = evaluateMatchConditions(compiled.matchConditions, inputs, compiled.failurePolicy);
    if ('error' in conditions) {
      result.denials.push({ policy: policyName, binding: bindingName, message: conditions.error, reason: undefined });
      return result;
    }
    if (!conditions.matches) return result;
    const budget = new CostBudget();
    const { vars, explain } = withVariables(inputs, compiled.variables, budget);
    const decisions: { failure: Denial; index: number }[] = [];
    compiled.validations.forEach((v, index) => {
      const out = evaluate(v.expression, vars, budget);
      let failure: Denial | undefined;
      if (!out.ok) {
        if (compiled.failurePolicy === 'Ignore') return;
        failure = { policy: policyName, binding: bindingName, message: explain(out.error), reason: undefined };
      } else if (out.value !== true) {
        failure = { policy: policyName, binding: bindingName, message: this.messageOf(v, vars, budget), reason: v.reason ?? 'Invalid' };
      }
      if (failure !== undefined) decisions.push({ failure, index });
    });
    // A spent budget makes the invocation one error, as kube's validator reports it.
    if (budget.exhausted) {
      decisions.length = 0;
      if (compiled.failurePolicy !== 'Ignore')
        decisions.push({ failure: { policy: policyName, binding: bindingName, message: OUT_OF_BUDGET, reason: undefined }, index: 0 });
    }
    for (const { failure, index } of decisions) {
      for (const action of actions) {
        if (action === 'Deny') result.denials.push(failure);
        else if (action === 'Warn')
          result.warnings.push(`Validation failed for ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}': ${failure.message}`);
        else if (action === 'Audit') {
          const value = [{ message: failure.message, policy: policyName, binding: bindingName, expressionIndex: index, validationActions: actions }];
          result.audit.push([VALIDATION_FAILURE, JSON.stringify(value)]);
        }
      }
    }
    for (const annotation of compiled.auditAnnotations) {
      const out = evaluate(annotation.valueExpression, vars);
      if (!out.ok) {
        if (compiled.failurePolicy !== 'Ignore') result.denials.push({ policy: policyName, binding: bindingName, message: out.error, reason: undefined });
      } else if (typeof out.value === 'string') {
        const value = out.value.trim().slice(0, MAX_AUDIT_VALUE);
        if (value !== '') result.audit.push([annotation.key, value]);
      } else if (out.value !== null) {
        result.denials.push({
          policy: policyName,
          binding: bindingName,
          message: `valueExpression '${annotation.valueExpression.expression}' resulted in unsupported return type: ${typeName(out.value)}. Return type must be either string or null.`,
          reason: undefined,
        });
      }
    }
    return result;
  }

  /** kube's message for a failed validation: messageExpression's single line, else message, else the expression. */
  private messageOf(v: CompiledValidation, vars: Obj, budget: CostBudget): string {
    let message = '';
    if (v.messageExpression !== undefined) {
      const out = evaluate(v.messageExpression, vars, budget);
      if (out.ok && typeof out.value === 'string') {
        const text = out.value.trim();
        if (Buffer.byteLength(text) <= MAX_MESSAGE_BYTES && !text.includes('\n')) message = text;
      }
    }
    if (message === '' && v.message !== '') message = v.message.trim();
    if (message === '') message = `failed expression: ${v.expression.expression.trim()}`;
    return message;
  }
}

function typeName(v: unknown): string {
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'double';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'object') return 'map';
  return typeof v;
}
