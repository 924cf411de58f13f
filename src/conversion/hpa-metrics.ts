/**
 * autoscaling/v1 <-> autoscaling/v2 conversion of HPA metric specs and metric statuses, with kube's
 * semantics (pkg/apis/autoscaling/v1/conversion.go): v1 keeps the older flat shape (`metricName`,
 * `targetAverageValue`, `currentValue`, ...), v2 the `metric`/`target`/`current` shape. Objects are
 * built in the Go types' field order, so they print as kube's do.
 *
 * The v1 readers accept what Go's `json.Unmarshal` accepts (case-insensitive keys, null for unset)
 * and throw `GoDecodeError` where it fails, because v1 metrics also come from annotations.
 */
import { canonicalQuantity } from '../api/quantity.js';
import { goField, goInt32, goLabelSelector, goObject, goQuantity, goString } from './go-json.js';
import type { Obj } from '../api/object-util.js';

/** The Go zero Quantity as it marshals. */
const ZERO = '0';

function isZeroQuantity(q: string): boolean {
  return canonicalQuantity(q) === '0';
}

/**
 * A quantity of a stored (v2) object: canonical when it parses, otherwise as stored. Reading what
 * storage holds never fails, whatever an older writer let through.
 */
function storedQuantity(v: unknown): string | undefined {
  if (typeof v === 'string') return canonicalQuantity(v);
  if (typeof v === 'number' && Number.isFinite(v)) return canonicalQuantity(String(v));
  return undefined;
}

// Unlike the shared stringField, a field that is present but not a string is a decode error (GoDecodeError), as in Go.
function goStringField(o: Obj, name: string): string {
  return goString(goField(o, name)) ?? '';
}

/** Copies `value` into `out[key]` unless it is undefined (Go's omitempty pointers). */
function put(out: Obj, key: string, value: unknown): void {
  if (value !== undefined) out[key] = value;
}

/** CrossVersionObjectReference (same JSON in both versions). */
function crossVersionRef(raw: unknown): Obj {
  const o = goObject(raw) ?? {};
  const out: Obj = { kind: goStringField(o, 'kind'), name: goStringField(o, 'name') };
  const apiVersion = goStringField(o, 'apiVersion');
  if (apiVersion !== '') out.apiVersion = apiVersion;
  return out;
}

function metricIdentifier(name: string, selector: Obj | undefined): Obj {
  const out: Obj = { name };
  put(out, 'selector', selector);
  return out;
}

function metricTarget(type: string, value: string | undefined, averageValue: string | undefined, averageUtilization: number | undefined): Obj {
  const out: Obj = { type };
  put(out, 'value', value);
  put(out, 'averageValue', averageValue);
  put(out, 'averageUtilization', averageUtilization);
  return out;
}

function metricValueStatus(value: string | undefined, averageValue: string | undefined, averageUtilization: number | undefined): Obj {
  const out: Obj = {};
  put(out, 'value', value);
  put(out, 'averageValue', averageValue);
  put(out, 'averageUtilization', averageUtilization);
  return out;
}

/** The sources of a metric spec or status, in the Go types' field order. */
const SOURCES = ['object', 'pods', 'resource', 'containerResource', 'external'] as const;
type Source = (typeof SOURCES)[number];

function convertSources(raw: unknown, convert: Record<Source, (o: Obj) => Obj>): Obj {
  const m = goObject(raw) ?? {};
  const out: Obj = { type: goStringField(m, 'type') };
  for (const source of SOURCES) {
    const o = goObject(goField(m, source));
    if (o !== undefined) out[source] = convert[source](o);
  }
  return out;
}

// ---- metric specs ----------------------------------------------------------------------------

const V1_SPEC_TO_V2: Record<Source, (o: Obj) => Obj> = {
  object(o) {
    const targetValue = goQuantity(goField(o, 'targetValue')) ?? ZERO;
    const averageValue = goQuantity(goField(o, 'averageValue'));
    // v1 cannot leave targetValue out: a zero one next to an average value means "not set".
    const target =
      averageValue === undefined
        ? metricTarget('Value', targetValue, undefined, undefined)
        : metricTarget('AverageValue', isZeroQuantity(targetValue) ? undefined : targetValue, averageValue, undefined);
    return {
      describedObject: crossVersionRef(goField(o, 'target')),
      target,
      metric: metricIdentifier(goStringField(o, 'metricName'), goLabelSelector(goField(o, 'selector'))),
    };
  },
  pods(o) {
    return {
      metric: metricIdentifier(goStringField(o, 'metricName'), goLabelSelector(goField(o, 'selector'))),
      target: metricTarget('AverageValue', undefined, goQuantity(goField(o, 'targetAverageValue')) ?? ZERO, undefined),
    };
  },
  resource(o) {
    return { name: goStringField(o, 'name'), target: resourceTarget(o) };
  },
  containerResource(o) {
    return { name: goStringField(o, 'name'), target: resourceTarget(o), container: goStringField(o, 'container') };
  },
  external(o) {
    const value = goQuantity(goField(o, 'targetValue'));
    return {
      metric: metricIdentifier(goStringField(o, 'metricName'), goLabelSelector(goField(o, 'metricSelector'))),
      target: metricTarget(value === undefined ? 'AverageValue' : 'Value', value, goQuantity(goField(o, 'targetAverageValue')), undefined),
    };
  },
};

function resourceTarget(o: Obj): Obj {
  const utilization = goInt32(goField(o, 'targetAverageUtilization'));
  return metricTarget(utilization === undefined ? 'AverageValue' : 'Utilization', undefined, goQuantity(goField(o, 'targetAverageValue')), utilization);
}

const V2_SPEC_TO_V1: Record<Source, (o: Obj) => Obj> = {
  object(o) {
    const target = goObject(goField(o, 'target')) ?? {};
    const metric = goObject(goField(o, 'metric')) ?? {};
    const out: Obj = {
      target: crossVersionRef(goField(o, 'describedObject')),
      metricName: goStringField(metric, 'name'),
      targetValue: storedQuantity(goField(target, 'value')) ?? ZERO,
    };
    put(out, 'selector', goLabelSelector(goField(metric, 'selector')));
    put(out, 'averageValue', storedQuantity(goField(target, 'averageValue')));
    return out;
  },
  pods(o) {
    const target = goObject(goField(o, 'target')) ?? {};
    const metric = goObject(goField(o, 'metric')) ?? {};
    const out: Obj = { metricName: goStringField(metric, 'name'), targetAverageValue: storedQuantity(goField(target, 'averageValue')) ?? ZERO };
    put(out, 'selector', goLabelSelector(goField(metric, 'selector')));
    return out;
  },
  resource(o) {
    return v1ResourceSource(o, false);
  },
  containerResource(o) {
    return v1ResourceSource(o, true);
  },
  external(o) {
    const target = goObject(goField(o, 'target')) ?? {};
    const metric = goObject(goField(o, 'metric')) ?? {};
    const out: Obj = { metricName: goStringField(metric, 'name') };
    put(out, 'metricSelector', goLabelSelector(goField(metric, 'selector')));
    put(out, 'targetValue', storedQuantity(goField(target, 'value')));
    put(out, 'targetAverageValue', storedQuantity(goField(target, 'averageValue')));
    return out;
  },
};

function v1ResourceSource(o: Obj, withContainer: boolean): Obj {
  const target = goObject(goField(o, 'target')) ?? {};
  const out: Obj = { name: goStringField(o, 'name') };
  put(out, 'targetAverageUtilization', goInt32(goField(target, 'averageUtilization')));
  put(out, 'targetAverageValue', storedQuantity(goField(target, 'averageValue')));
  if (withContainer) out.container = goStringField(o, 'container');
  return out;
}

/** An autoscaling/v1 MetricSpec (annotation shape) as an autoscaling/v2 MetricSpec. */
export function v1MetricSpecToV2(raw: unknown): Obj {
  return convertSources(raw, V1_SPEC_TO_V2);
}

/** An autoscaling/v2 MetricSpec as an autoscaling/v1 MetricSpec (annotation shape). */
export function v2MetricSpecToV1(raw: unknown): Obj {
  return convertSources(raw, V2_SPEC_TO_V1);
}

// ---- metric statuses -------------------------------------------------------------------------

const V1_STATUS_TO_V2: Record<Source, (o: Obj) => Obj> = {
  object(o) {
    return {
      metric: metricIdentifier(goStringField(o, 'metricName'), goLabelSelector(goField(o, 'selector'))),
      current: metricValueStatus(goQuantity(goField(o, 'currentValue')) ?? ZERO, goQuantity(goField(o, 'averageValue')), undefined),
      describedObject: crossVersionRef(goField(o, 'target')),
    };
  },
  pods(o) {
    return {
      metric: metricIdentifier(goStringField(o, 'metricName'), goLabelSelector(goField(o, 'selector'))),
      current: metricValueStatus(undefined, goQuantity(goField(o, 'currentAverageValue')) ?? ZERO, undefined),
    };
  },
  resource(o) {
    return { name: goStringField(o, 'name'), current: resourceCurrent(o) };
  },
  containerResource(o) {
    return { name: goStringField(o, 'name'), current: resourceCurrent(o), container: goStringField(o, 'container') };
  },
  external(o) {
    return {
      metric: metricIdentifier(goStringField(o, 'metricName'), goLabelSelector(goField(o, 'metricSelector'))),
      current: metricValueStatus(goQuantity(goField(o, 'currentValue')) ?? ZERO, goQuantity(goField(o, 'currentAverageValue')), undefined),
    };
  },
};

function resourceCurrent(o: Obj): Obj {
  return metricValueStatus(undefined, goQuantity(goField(o, 'currentAverageValue')) ?? ZERO, goInt32(goField(o, 'currentAverageUtilization')));
}

const V2_STATUS_TO_V1: Record<Source, (o: Obj) => Obj> = {
  object(o) {
    const current = goObject(goField(o, 'current')) ?? {};
    const metric = goObject(goField(o, 'metric')) ?? {};
    const out: Obj = {
      target: crossVersionRef(goField(o, 'describedObject')),
      metricName: goStringField(metric, 'name'),
      currentValue: storedQuantity(goField(current, 'value')) ?? ZERO,
    };
    put(out, 'selector', goLabelSelector(goField(metric, 'selector')));
    put(out, 'averageValue', storedQuantity(goField(current, 'averageValue')));
    return out;
  },
  pods(o) {
    const current = goObject(goField(o, 'current')) ?? {};
    const metric = goObject(goField(o, 'metric')) ?? {};
    const out: Obj = { metricName: goStringField(metric, 'name'), currentAverageValue: storedQuantity(goField(current, 'averageValue')) ?? ZERO };
    put(out, 'selector', goLabelSelector(goField(metric, 'selector')));
    return out;
  },
  resource(o) {
    return v1ResourceStatus(o, false);
  },
  containerResource(o) {
    return v1ResourceStatus(o, true);
  },
  external(o) {
    const current = goObject(goField(o, 'current')) ?? {};
    const metric = goObject(goField(o, 'metric')) ?? {};
    const out: Obj = { metricName: goStringField(metric, 'name') };
    put(out, 'metricSelector', goLabelSelector(goField(metric, 'selector')));
    out.currentValue = storedQuantity(goField(current, 'value')) ?? ZERO;
    put(out, 'currentAverageValue', storedQuantity(goField(current, 'averageValue')));
    return out;
  },
};

function v1ResourceStatus(o: Obj, withContainer: boolean): Obj {
  const current = goObject(goField(o, 'current')) ?? {};
  const out: Obj = { name: goStringField(o, 'name') };
  put(out, 'currentAverageUtilization', goInt32(goField(current, 'averageUtilization')));
  out.currentAverageValue = storedQuantity(goField(current, 'averageValue')) ?? ZERO;
  if (withContainer) out.container = goStringField(o, 'container');
  return out;
}

/** An autoscaling/v1 MetricStatus (annotation shape) as an autoscaling/v2 MetricStatus. */
export function v1MetricStatusToV2(raw: unknown): Obj {
  return convertSources(raw, V1_STATUS_TO_V2);
}

/** An autoscaling/v2 MetricStatus as an autoscaling/v1 MetricStatus (annotation shape). */
export function v2MetricStatusToV1(raw: unknown): Obj {
  return convertSources(raw, V2_STATUS_TO_V1);
}
