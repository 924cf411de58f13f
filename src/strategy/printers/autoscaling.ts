/**
 * Printers of autoscaling (horizontal pod autoscalers in v1 and v2, the scale subresource) and
 * policy (pod disruption budgets).
 */
import { hpaV1ToV2 } from '../../conversion/hpa-conversion.js';
import { ageColumn, col, CREATION_TIMESTAMP_DESCRIPTION, NAME_DESCRIPTION, nameColumn } from '../../codec/table-columns.js';
import { age, nameOf } from './format.js';
import { quantityOf } from '../../api/quantity.js';
import type { Obj, TablePrinter } from '../../codec/table-printer.js';
import { objectField, objectFieldOrUndefined, stringField } from '../../api/values.js';
import { finiteNumberField, finiteNumberFieldOrUndefined, intOrString, objs } from './values.js';

/**
 * The HPA's metrics in autoscaling/v2 form, as kube prints them from its internal object: an
 * autoscaling/v1 object is converted (CPU target, round-trip annotations, kube's 80% CPU default).
 */
export function hpaMetrics(hpa: Obj): { specs: Obj[]; statuses: Obj[] } {
  const v2 = Array.isArray(objectField(hpa, 'spec').metrics) ? hpa : hpaV1ToV2(hpa);
  return { specs: objs(objectField(v2, 'spec'), 'metrics'), statuses: objs(objectField(v2, 'status'), 'currentMetrics') };
}

export function utilization(v: Obj): string | undefined {
  const n = finiteNumberFieldOrUndefined(v, 'averageUtilization');
  return n === undefined ? undefined : `${n}%`;
}

/** kube's `formatHPAMetrics`: "cpu: 40%/80%", "<unknown>" for missing current values, at most two. */
export function formatHPAMetrics(hpa: Obj): string {
  const { specs, statuses } = hpaMetrics(hpa);
  if (specs.length === 0) return '<none>';
  const list = specs.map((s, i) => {
    const st = statuses[i];
    const type = stringField(s, 'type');
    const field =
      type === 'External'
        ? 'external'
        : type === 'Pods'
          ? 'pods'
          : type === 'Object'
            ? 'object'
            : type === 'Resource'
              ? 'resource'
              : type === 'ContainerResource'
                ? 'containerResource'
                : '';
    if (field === '') return '<unknown type>';
    const source = objectField(s, field);
    const target = objectField(source, 'target');
    const current = st ? objectFieldOrUndefined(st, field) : undefined;
    const cur = current ? objectField(current, 'current') : undefined;
    switch (type) {
      case 'External':
      case 'Object':
        if (target.averageValue !== undefined) {
          const c = cur && cur.averageValue !== undefined ? quantityOf(cur.averageValue) : '<unknown>';
          return `${c}/${quantityOf(target.averageValue)} (avg)`;
        }
        return `${cur ? quantityOf(cur.value, '0') : '<unknown>'}/${quantityOf(target.value, '0')}`;
      case 'Pods':
        return `${cur ? quantityOf(cur.averageValue, '0') : '<unknown>'}/${quantityOf(target.averageValue, '0')}`;
      default: {
        const name = stringField(source, 'name');
        if (target.averageValue !== undefined) return `${name}: ${cur ? quantityOf(cur.averageValue, '0') : '<unknown>'}/${quantityOf(target.averageValue)}`;
        return `${name}: ${(cur && utilization(cur)) ?? '<unknown>'}/${utilization(target) ?? '<auto>'}`;
      }
    }
  });
  if (list.length > 2) return `${list.slice(0, 2).join(', ')} + ${list.length - 2} more...`;
  return list.join(', ');
}

export const hpaPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Reference', 'string', 'The target resource being scaled.'),
    col('Targets', 'string', 'Current and target values of the metrics used to compute the replica count.'),
    col('MinPods', 'string', 'Lower limit for the number of replicas.'),
    col('MaxPods', 'string', 'Upper limit for the number of replicas.'),
    col('Replicas', 'string', 'Current number of replicas.'),
    ageColumn(),
  ],
  row(hpa, now) {
    const spec = objectField(hpa, 'spec');
    const ref = objectField(spec, 'scaleTargetRef');
    return {
      cells: [
        nameOf(hpa),
        `${stringField(ref, 'kind')}/${stringField(ref, 'name')}`,
        formatHPAMetrics(hpa),
        String(finiteNumberFieldOrUndefined(spec, 'minReplicas') ?? 1),
        finiteNumberField(spec, 'maxReplicas'),
        finiteNumberField(objectField(hpa, 'status'), 'currentReplicas'),
        age(hpa, now),
      ],
    };
  },
};

export const scalePrinter: TablePrinter = {
  columns: [
    col('Name', 'string', NAME_DESCRIPTION),
    col('Desired', 'integer', 'Desired number of instances for the scaled object.'),
    col('Available', 'integer', 'Actual number of observed instances of the scaled object.'),
    col('Age', 'string', CREATION_TIMESTAMP_DESCRIPTION),
  ],
  row: (s, now) => ({
    cells: [nameOf(s), finiteNumberField(objectField(s, 'spec'), 'replicas'), finiteNumberField(objectField(s, 'status'), 'replicas'), age(s, now)],
  }),
};

export const pdbPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Min Available', 'string', 'The minimum number of pods that must be available.'),
    col('Max Unavailable', 'string', 'The maximum number of pods that may be unavailable.'),
    col('Allowed Disruptions', 'integer', 'Calculated number of pods that may be disrupted at this time.'),
    ageColumn(),
  ],
  row(pdb, now) {
    const spec = objectField(pdb, 'spec');
    return {
      cells: [
        nameOf(pdb),
        intOrString(spec, 'minAvailable') ?? 'N/A',
        intOrString(spec, 'maxUnavailable') ?? 'N/A',
        finiteNumberField(objectField(pdb, 'status'), 'disruptionsAllowed'),
        age(pdb, now),
      ],
    };
  },
};
