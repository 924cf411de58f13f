/**
 * IngressClass (networking.k8s.io/v1), everything Capstan knows about the kind beyond the generated
 * API facts, in one file: the worked example of docs/architecture.md.
 *
 * - defaults: a parameters reference without a scope is Cluster-scoped;
 * - validation (kube-apiserver 1.36, checked against test/golden/validation/): a domain-prefixed
 *   controller of at most 250 bytes, immutable on update, and a parameters reference with a
 *   DNS-subdomain group, path-segment kind and name, a scope of Cluster or Namespace, and a
 *   namespace exactly when the scope is Namespace;
 * - the table kubectl prints: Name, Controller, Parameters, Age.
 *
 * The DefaultIngressClass admission plugin (admission/default-ingress-class.ts) acts on Ingresses,
 * not on this kind, and stays with the admission chain.
 */
import type { StatusCause } from '../../api/errors.js';
import { defaultPointer, objectAt } from '../../api/field-defaults.js';
import { ageColumn, col, nameColumn } from '../../codec/table-columns.js';
import type { TablePrinter } from '../../codec/table-printer.js';
import { forbiddenField, invalidField, notSupportedField, requiredField, tooLongField } from '../../validation/field-errors.js';
import { isDNS1123Label, isDNS1123Subdomain, isPathSegmentName, regexError } from '../../validation/string-formats.js';
import type { KindStrategy } from '../kind-strategy.js';
import { age, nameOf } from '../printers/format.js';
import { objectField, objectFieldOrUndefined, stringField, stringFieldOrUndefined } from '../../api/values.js';
import type { Obj } from '../../api/object-util.js';

function defaultIngressClass(ic: Obj): void {
  const parameters = objectAt(objectAt(ic, 'spec') ?? {}, 'parameters');
  if (parameters !== undefined) defaultPointer(parameters, 'scope', 'Cluster');
}

const MAX_CONTROLLER_BYTES = 250;
const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";
const HTTP_PATH = new RegExp(`^${HTTP_PATH_FMT}$`);

/** IsDomainPrefixedPath: `host/path` with a DNS-subdomain host and an HTTP path. */
function domainPrefixedPathCauses(field: string, value: string): StatusCause[] {
  if (value === '') return [requiredField(field)];
  const slash = value.indexOf('/');
  if (slash <= 0 || slash === value.length - 1) return [invalidField(field, value, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const host = value.slice(0, slash);
  const path = value.slice(slash + 1);
  const causes = isDNS1123Subdomain(host).map((msg) => invalidField(field, host, msg));
  if (!HTTP_PATH.test(path)) causes.push(invalidField(field, path, regexError('Invalid path', HTTP_PATH_FMT)));
  return causes;
}

function parametersCauses(params: Obj | undefined): StatusCause[] {
  if (params === undefined) return [];
  const path = 'spec.parameters';
  const causes: StatusCause[] = [];
  if (typeof params.apiGroup === 'string') {
    for (const msg of isDNS1123Subdomain(params.apiGroup)) causes.push(invalidField(`${path}.apiGroup`, params.apiGroup, msg));
  }
  for (const key of ['kind', 'name']) {
    const v = typeof params[key] === 'string' ? params[key] : '';
    if (v === '') causes.push(requiredField(`${path}.${key}`));
    else for (const msg of isPathSegmentName(v)) causes.push(invalidField(`${path}.${key}`, v, msg));
  }
  if (params.scope === undefined || params.scope === null) {
    causes.push(requiredField(`${path}.scope`));
    return causes;
  }
  const scope = typeof params.scope === 'string' ? params.scope : '';
  const namespace = params.namespace;
  if (scope !== 'Cluster' && scope !== 'Namespace') {
    causes.push(notSupportedField(`${path}.scope`, scope, ['Cluster', 'Namespace']));
  } else if (scope === 'Namespace') {
    if (typeof namespace !== 'string') causes.push(requiredField(`${path}.namespace`, "`parameters.scope` is set to 'Namespace'"));
    else for (const msg of isDNS1123Label(namespace)) causes.push(invalidField(`${path}.namespace`, namespace, msg));
  } else if (namespace !== undefined && namespace !== null) {
    causes.push(forbiddenField(`${path}.namespace`, "`parameters.scope` is set to 'Cluster'"));
  }
  return causes;
}

function validateIngressClass(ic: Obj, old?: Obj): StatusCause[] {
  const spec = objectAt(ic, 'spec') ?? {};
  const controller = typeof spec.controller === 'string' ? spec.controller : '';
  const causes: StatusCause[] = [];
  if (old !== undefined) {
    const oldSpec = objectAt(old, 'spec') ?? {};
    const oldController = typeof oldSpec.controller === 'string' ? oldSpec.controller : '';
    if (controller !== oldController) causes.push(invalidField('spec.controller', controller, 'field is immutable'));
  }
  if (Buffer.byteLength(controller) > MAX_CONTROLLER_BYTES) causes.push(tooLongField('spec.controller', MAX_CONTROLLER_BYTES));
  causes.push(...domainPrefixedPathCauses('spec.controller', controller));
  causes.push(...parametersCauses(objectAt(spec, 'parameters')));
  return causes;
}

const ingressClassPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Controller', 'string', 'Controller that is responsible for handling this class'),
    col('Parameters', 'string', 'A reference to a resource with additional parameters'),
    ageColumn(),
  ],
  row(ic, now) {
    const spec = objectField(ic, 'spec');
    const p = objectFieldOrUndefined(spec, 'parameters');
    let parameters = '<none>';
    if (p) {
      const apiGroup = stringFieldOrUndefined(p, 'apiGroup');
      parameters = `${stringField(p, 'kind')}${apiGroup !== undefined ? `.${apiGroup}` : ''}/${stringField(p, 'name')}`;
    }
    return { cells: [nameOf(ic), stringField(spec, 'controller'), parameters, age(ic, now)] };
  },
};

export const ingressClasses: KindStrategy = { printer: ingressClassPrinter, defaults: defaultIngressClass, validate: validateIngressClass };

/** This file's kind by `group/resource`. */
export const INGRESS_CLASS_KINDS: Readonly<Record<string, KindStrategy>> = {
  'networking.k8s.io/ingressclasses': ingressClasses,
};
