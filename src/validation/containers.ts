/**
 * kube 1.36's validation of the containers of a pod spec (regular and init; validateContainers,
 * validateInitContainers, validateContainerCommon): names, images, ports and host-port conflicts,
 * env and envFrom, volume mounts, pull and termination-message policies, resources, probes and
 * lifecycle handlers, and the security context (./pod-security-context.ts). Init containers without
 * `restartPolicy: Always` may not carry probes or lifecycle handlers; with it they are sidecars.
 */
import type { StatusCause } from '../api/errors.js';
import { configKeyProblems } from './config-data.js';
import { duplicateField, forbiddenField, invalidField, notFoundField, notSupportedField, requiredField } from './field-errors.js';
import { validateContainerSecurityContext } from './pod-security-context.js';
import { validateResourceRequirements } from './resource-requirements.js';
import { isDNS1123Label, isDNS1123Subdomain, isLabelKey, maskTrailingDash } from './string-formats.js';
import { envVarNameProblems, nonNegative, portNameProblems, portNumberProblems } from './value-formats.js';
import { validateVolumeMounts } from './volumes.js';
import { asNumber, asString, numberOrUndefined, type Obj, objectOrUndefined } from '../api/values.js';
import { objects } from './value-access.js';

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'];
const ENV_FIELD_PATHS = [
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
];
/** Field labels a pod's downward API can convert at all (ConvertDownwardAPIFieldLabel). */
const DOWNWARD_FIELD_LABELS = new Set([
  ...ENV_FIELD_PATHS,
  'metadata.annotations',
  'metadata.labels',
  'spec.restartPolicy',
  'spec.schedulerName',
  'status.phase',
]);
const RESOURCE_FIELD_PATHS = ['limits.cpu', 'limits.ephemeral-storage', 'limits.memory', 'requests.cpu', 'requests.ephemeral-storage', 'requests.memory'];
const SCHEMES = ['HTTP', 'HTTPS'];

function portCauses(ports: unknown, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const names = new Set<string>();
  objects(ports).forEach((port, i) => {
    const at = `${field}[${i}]`;
    const name = asString(port.name);
    if (name !== '') {
      const problems = portNameProblems(name);
      if (problems.length > 0) causes.push(...problems.map((msg) => invalidField(`${at}.name`, name, msg)));
      else if (names.has(name)) causes.push(duplicateField(`${at}.name`, name));
      else names.add(name);
    }
    const containerPort = asNumber(port.containerPort);
    if (containerPort === 0) causes.push(requiredField(`${at}.containerPort`));
    else causes.push(...portNumberProblems(containerPort).map((msg) => invalidField(`${at}.containerPort`, containerPort, msg)));
    const hostPort = asNumber(port.hostPort);
    if (hostPort !== 0) causes.push(...portNumberProblems(hostPort).map((msg) => invalidField(`${at}.hostPort`, hostPort, msg)));
    const protocol = asString(port.protocol);
    if (protocol === '') causes.push(requiredField(`${at}.protocol`));
    else if (!PROTOCOLS.includes(protocol)) causes.push(notSupportedField(`${at}.protocol`, protocol, PROTOCOLS));
  });
  return causes;
}

/** AccumulateUniqueHostPorts: a protocol/hostIP/hostPort triple may be used once across the containers. */
function hostPortConflicts(containers: Obj[], field: string): StatusCause[] {
  const seen = new Set<string>();
  const causes: StatusCause[] = [];
  containers.forEach((container, ci) => {
    objects(container.ports).forEach((port, pi) => {
      const hostPort = asNumber(port.hostPort);
      if (hostPort === 0) return;
      const key = `${asString(port.protocol)}/${asString(port.hostIP)}/${hostPort}`;
      if (seen.has(key)) causes.push(duplicateField(`${field}[${ci}].ports[${pi}].hostPort`, key));
      else seen.add(key);
    });
  });
  return causes;
}

function fieldRefCauses(ref: Obj, field: string): StatusCause[] {
  if (asString(ref.apiVersion) === '') return [requiredField(`${field}.apiVersion`)];
  const path = asString(ref.fieldPath);
  if (path === '') return [requiredField(`${field}.fieldPath`)];
  const subscripted = /^(metadata\.(?:annotations|labels))\['(.*)'\]$/.exec(path);
  if (asString(ref.apiVersion) !== 'v1')
    return [invalidField(`${field}.fieldPath`, path, `error converting fieldPath: unsupported pod version: ${asString(ref.apiVersion)}`)];
  if (subscripted === null && !DOWNWARD_FIELD_LABELS.has(path)) {
    return [invalidField(`${field}.fieldPath`, path, `error converting fieldPath: field label not supported: ${path}`)];
  }
  if (subscripted !== null) {
    const [, base = '', key = ''] = subscripted;
    const checked = base === 'metadata.annotations' ? key.toLowerCase() : key;
    return isLabelKey(checked).map((msg) => invalidField(field, checked, msg));
  }
  return ENV_FIELD_PATHS.includes(path) ? [] : [notSupportedField(`${field}.fieldPath`, path, ENV_FIELD_PATHS)];
}

function keySelectorCauses(ref: Obj, field: string): StatusCause[] {
  const name = asString(ref.name);
  const key = asString(ref.key);
  const causes = isDNS1123Subdomain(name).map((msg) => invalidField(`${field}.name`, name, msg));
  if (key === '') causes.push(requiredField(`${field}.key`));
  else causes.push(...configKeyProblems(key).map((msg) => invalidField(`${field}.key`, key, msg)));
  return causes;
}

function valueFromCauses(env: Obj, field: string): StatusCause[] {
  const from = objectOrUndefined(env.valueFrom);
  if (from === undefined) return [];
  const causes: StatusCause[] = [];
  let sources = 0;
  const fieldRef = objectOrUndefined(from.fieldRef);
  if (fieldRef !== undefined) {
    sources += 1;
    causes.push(...fieldRefCauses(fieldRef, `${field}.fieldRef`));
  }
  const resourceRef = objectOrUndefined(from.resourceFieldRef);
  if (resourceRef !== undefined) {
    sources += 1;
    const resource = asString(resourceRef.resource);
    if (resource === '') causes.push(requiredField(`${field}.resourceFieldRef.resource`));
    else if (!RESOURCE_FIELD_PATHS.includes(resource) && !resource.startsWith('requests.hugepages-') && !resource.startsWith('limits.hugepages-')) {
      causes.push(notSupportedField(`${field}.resourceFieldRef.resource`, resource, RESOURCE_FIELD_PATHS));
    }
  }
  for (const key of ['configMapKeyRef', 'secretKeyRef'] as const) {
    const ref = objectOrUndefined(from[key]);
    if (ref !== undefined) {
      sources += 1;
      causes.push(...keySelectorCauses(ref, `${field}.${key}`));
    }
  }
  if (objectOrUndefined(from.fileKeyRef) !== undefined) sources += 1;
  if (sources === 0)
    causes.push(invalidField(field, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`'));
  else if (asString(env.value) !== '') causes.push(invalidField(field, '', 'may not be specified when `value` is not empty'));
  else if (sources > 1) causes.push(invalidField(field, '', 'may not have more than one field specified at a time'));
  return causes;
}

function envCauses(env: unknown, field: string): StatusCause[] {
  return objects(env).flatMap((e, i) => {
    const at = `${field}[${i}]`;
    const name = asString(e.name);
    const causes = name === '' ? [requiredField(`${at}.name`)] : envVarNameProblems(name).map((msg) => invalidField(`${at}.name`, name, msg));
    return [...causes, ...valueFromCauses(e, `${at}.valueFrom`)];
  });
}

function envFromCauses(envFrom: unknown, field: string): StatusCause[] {
  return objects(envFrom).flatMap((e, i) => {
    const at = `${field}[${i}]`;
    const prefix = asString(e.prefix);
    const causes = prefix === '' ? [] : envVarNameProblems(prefix).map((msg) => invalidField(`${at}.prefix`, prefix, msg));
    let sources = 0;
    for (const key of ['configMapRef', 'secretRef'] as const) {
      const ref = objectOrUndefined(e[key]);
      if (ref === undefined) continue;
      sources += 1;
      const name = asString(ref.name);
      if (name === '') causes.push(requiredField(`${at}.${key}.name`));
      else causes.push(...isDNS1123Subdomain(maskTrailingDash(name)).map((msg) => invalidField(`${at}.${key}.name`, name, msg)));
    }
    if (sources === 0) causes.push(invalidField(field, '', 'must specify one of: `configMapRef` or `secretRef`'));
    else if (sources > 1) causes.push(invalidField(field, '', 'may not have more than one field specified at a time'));
    return causes;
  });
}

function portNumOrName(port: unknown, field: string): StatusCause[] {
  if (typeof port === 'string') return portNameProblems(port).map((msg) => invalidField(field, port, msg));
  const n = typeof port === 'number' ? port : 0;
  return portNumberProblems(n).map((msg) => invalidField(field, n, msg));
}

/** validateHandler: exactly one of exec, httpGet, tcpSocket, grpc (probes) or sleep (lifecycle). */
function handlerCauses(handler: Obj, field: string, kinds: readonly string[]): StatusCause[] {
  const causes: StatusCause[] = [];
  let count = 0;
  for (const kind of kinds) {
    const action = objectOrUndefined(handler[kind]);
    if (action === undefined) continue;
    if (count > 0) {
      causes.push(forbiddenField(`${field}.${kind}`, 'may not specify more than 1 handler type'));
      continue;
    }
    count += 1;
    const at = `${field}.${kind}`;
    if (kind === 'exec' && (!Array.isArray(action.command) || action.command.length === 0)) causes.push(requiredField(`${at}.command`));
    if (kind === 'httpGet') {
      if (asString(action.path) === '') causes.push(requiredField(`${at}.path`));
      causes.push(...portNumOrName(action.port, `${at}.port`));
      const scheme = asString(action.scheme);
      if (!SCHEMES.includes(scheme)) causes.push(notSupportedField(`${at}.scheme`, scheme, SCHEMES));
    }
    if (kind === 'tcpSocket') causes.push(...portNumOrName(action.port, `${at}.port`));
    if (kind === 'grpc') causes.push(...portNumOrName(asNumber(action.port), `${at}.port`));
  }
  if (count === 0) causes.push(requiredField(field, 'must specify a handler type'));
  return causes;
}

function probeCauses(probe: Obj, field: string, kind: 'liveness' | 'readiness' | 'startup'): StatusCause[] {
  const causes = handlerCauses(probe, field, ['exec', 'httpGet', 'tcpSocket', 'grpc']);
  for (const key of ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold']) {
    causes.push(...nonNegative(`${field}.${key}`, asNumber(probe[key])));
  }
  const grace = numberOrUndefined(probe.terminationGracePeriodSeconds);
  if (grace !== undefined && grace <= 0) causes.push(invalidField(`${field}.terminationGracePeriodSeconds`, grace, 'must be greater than 0'));
  if (kind !== 'readiness' && asNumber(probe.successThreshold) !== 1)
    causes.push(invalidField(`${field}.successThreshold`, asNumber(probe.successThreshold), 'must be 1'));
  if (kind === 'readiness' && grace !== undefined)
    causes.push(invalidField(`${field}.terminationGracePeriodSeconds`, grace, 'must not be set for readinessProbes'));
  return causes;
}

/** Probes and lifecycle handlers, for regular containers and sidecars. */
function probesAndLifecycle(container: Obj, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const lifecycle = objectOrUndefined(container.lifecycle);
  if (lifecycle !== undefined) {
    for (const hook of ['postStart', 'preStop'] as const) {
      const handler = objectOrUndefined(lifecycle[hook]);
      if (handler !== undefined) causes.push(...handlerCauses(handler, `${at}.lifecycle.${hook}`, ['exec', 'httpGet', 'tcpSocket', 'sleep']));
    }
  }
  for (const kind of ['liveness', 'readiness', 'startup'] as const) {
    const probe = objectOrUndefined(container[`${kind}Probe`]);
    if (probe !== undefined) causes.push(...probeCauses(probe, `${at}.${kind}Probe`, kind));
  }
  return causes;
}

/** What a pod spec's containers are checked against, gathered from the rest of the spec. */
export interface ContainerContext {
  /** The names of the pod's volumes. */
  volumeNames: Set<string>;
  /** The names of the pod's resource claims. */
  podClaims: ReadonlySet<string>;
  /** Whether the pod shares the host's user namespace (`hostUsers` unset or true). */
  hostUsers: boolean;
  /** Whether the stored spec already has a non-sidecar init container resized with RestartContainer (kube ratchets it). */
  allowRestartContainerForNonSidecarInit?: boolean;
}

/** validateContainerCommon: the checks every container gets. */
function containerCommon(container: Obj, ctx: ContainerContext, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const name = asString(container.name);
  if (name === '') causes.push(requiredField(`${at}.name`));
  else causes.push(...isDNS1123Label(name).map((msg) => invalidField(`${at}.name`, name, msg)));
  if (asString(container.image) === '') causes.push(requiredField(`${at}.image`));
  const tmp = asString(container.terminationMessagePolicy);
  if (tmp === '') causes.push(requiredField(`${at}.terminationMessagePolicy`));
  else if (!TERMINATION_MESSAGE_POLICIES.includes(tmp)) causes.push(notSupportedField(`${at}.terminationMessagePolicy`, tmp, TERMINATION_MESSAGE_POLICIES));
  causes.push(...portCauses(container.ports, `${at}.ports`));
  causes.push(...envCauses(container.env, `${at}.env`));
  causes.push(...envFromCauses(container.envFrom, `${at}.envFrom`));
  causes.push(...validateVolumeMounts(container.volumeMounts, ctx.volumeNames, `${at}.volumeMounts`));
  const pull = asString(container.imagePullPolicy);
  if (pull === '') causes.push(requiredField(`${at}.imagePullPolicy`));
  else if (!PULL_POLICIES.includes(pull)) causes.push(notSupportedField(`${at}.imagePullPolicy`, pull, PULL_POLICIES));
  causes.push(...validateResourceRequirements(container.resources, `${at}.resources`, { podClaims: ctx.podClaims }));
  causes.push(...validateContainerSecurityContext(container.securityContext, `${at}.securityContext`, ctx.hostUsers));
  return causes;
}

/** validateContainers: at least one, unique names, plus probes, lifecycle and host-port conflicts. */
export function validateRegularContainers(containers: unknown, ctx: ContainerContext, field: string): StatusCause[] {
  const list = objects(containers);
  if (list.length === 0) return [requiredField(field)];
  const causes: StatusCause[] = [];
  const names = new Set<string>();
  list.forEach((container, i) => {
    const at = `${field}[${i}]`;
    causes.push(...containerCommon(container, ctx, at));
    const name = asString(container.name);
    if (names.has(name)) causes.push(duplicateField(`${at}.name`, name));
    else names.add(name);
    causes.push(...probesAndLifecycle(container, at));
  });
  return [...causes, ...hostPortConflicts(list, field)];
}

/** validateInitContainers: names unique across init and regular containers; probes only on sidecars. */
export function validateInitContainers(initContainers: unknown, regular: unknown, ctx: ContainerContext, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const names = new Set(objects(regular).map((c) => asString(c.name)));
  objects(initContainers).forEach((container, i) => {
    const at = `${field}[${i}]`;
    causes.push(...containerCommon(container, ctx, at));
    const restartPolicy = container.restartPolicy;
    const sidecar = restartPolicy === 'Always';
    const name = asString(container.name);
    if (names.has(name)) causes.push(duplicateField(`${at}.name`, name));
    else if (name !== '') names.add(name);
    causes.push(...hostPortConflicts([container], field));
    if (sidecar) causes.push(...probesAndLifecycle(container, at));
    else {
      for (const key of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe']) {
        if (objectOrUndefined(container[key]) !== undefined)
          causes.push(forbiddenField(`${at}.${key}`, 'may not be set for init containers without restartPolicy=Always'));
      }
    }
    if (!sidecar && ctx.allowRestartContainerForNonSidecarInit !== true) {
      objects(container.resizePolicy).forEach((p, j) => {
        if (p.restartPolicy === 'RestartContainer') {
          causes.push(
            invalidField(`${at}.resizePolicy[${j}].restartPolicy`, 'RestartContainer', "must not be set to 'RestartContainer' for non-sidecar initContainers"),
          );
        }
      });
    }
  });
  return causes;
}

/** validateContainersOnlyForPod: a Pod's (not a template's) images may not have surrounding whitespace. */
export function validateContainerImagesForPod(containers: unknown, field: string): StatusCause[] {
  return objects(containers).flatMap((c, i) => {
    const image = asString(c.image);
    return image !== image.trim() ? [invalidField(`${field}[${i}].image`, image, 'must not have leading or trailing whitespace')] : [];
  });
}

/** The fields of an ephemeral container kube refuses (not in its allowedEphemeralContainerFields). */
const EPHEMERAL_FORBIDDEN_FIELDS = [
  'ports',
  'resources',
  'resizePolicy',
  'restartPolicy',
  'restartPolicyRules',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
];

/** Whether a field holds a value other than Go's zero value for it (nil, empty struct). */
function isNonZero(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return false;
  if (typeof value === 'object' && !Array.isArray(value)) return Object.values(value).some(isNonZero);
  return true;
}

/**
 * validateEphemeralContainers: the common container checks, names unique across all containers, a
 * target naming a regular or init container, and none of the fields an ephemeral container may not have.
 */
export function validateEphemeralContainers(ephemeral: unknown, regular: unknown, init: unknown, ctx: ContainerContext, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const others = new Set([...objects(regular), ...objects(init)].map((c) => asString(c.name)));
  const names = new Set(others);
  objects(ephemeral).forEach((container, i) => {
    const at = `${field}[${i}]`;
    causes.push(...containerCommon(container, ctx, at));
    const image = asString(container.image);
    if (image !== image.trim()) causes.push(invalidField(`${at}.image`, image, 'must not have leading or trailing whitespace'));
    const name = asString(container.name);
    if (names.has(name)) causes.push(duplicateField(`${at}.name`, name));
    else names.add(name);
    const target = asString(container.targetContainerName);
    if (target !== '' && !others.has(target)) causes.push(notFoundField(`${at}.targetContainerName`, target));
    for (const key of EPHEMERAL_FORBIDDEN_FIELDS) {
      if (isNonZero(container[key])) causes.push(forbiddenField(`${at}.${key}`, 'cannot be set for an Ephemeral Container'));
    }
    objects(container.volumeMounts).forEach((mount, mi) => {
      for (const key of ['subPath', 'subPathExpr'] as const) {
        if (asString(mount[key]) !== '') causes.push(forbiddenField(`${at}.volumeMounts[${mi}].${key}`, 'cannot be set for an Ephemeral Container'));
      }
    });
  });
  return causes;
}
