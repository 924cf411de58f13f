/**
 * Printers of apps/v1 workloads: deployments, replica sets, stateful sets, daemon sets and
 * controller revisions.
 */
import { ageColumn, col, nameColumn, templateColumns } from '../../codec/table-columns.js';
import { age, containerCells, formatLabelSelector, formatLabels, labelSelectorString, nameOf } from './format.js';
import { replicaCountPrinter, replicasOf } from './core.js';
import type { Obj, TablePrinter } from '../../codec/table-printer.js';
import { objectField, stringField } from '../../api/values.js';
import { finiteNumberField, objs, path, strMap } from './values.js';

export const deploymentPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Ready', 'string', 'Number of the pod with ready state'),
    col('Up-to-date', 'string', 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.'),
    col('Available', 'string', 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.'),
    ageColumn(),
    ...templateColumns(true),
  ],
  row(d, now) {
    const spec = objectField(d, 'spec');
    const status = objectField(d, 'status');
    const [names, images] = containerCells(path(spec, 'template', 'spec'));
    return {
      cells: [
        nameOf(d),
        `${finiteNumberField(status, 'readyReplicas')}/${replicasOf(spec)}`,
        finiteNumberField(status, 'updatedReplicas'),
        finiteNumberField(status, 'availableReplicas'),
        age(d, now),
        names,
        images,
        labelSelectorString(spec.selector) ?? '<invalid>',
      ],
    };
  },
};

export const replicaSetPrinter = replicaCountPrinter((spec) => formatLabelSelector(spec.selector));

export const statefulSetPrinter: TablePrinter = {
  columns: [nameColumn(), col('Ready', 'string', 'Number of the pod with ready state'), ageColumn(), ...templateColumns(false)],
  row(ss, now) {
    const spec = objectField(ss, 'spec');
    const [names, images] = containerCells(path(spec, 'template', 'spec'));
    return { cells: [nameOf(ss), `${finiteNumberField(objectField(ss, 'status'), 'readyReplicas')}/${replicasOf(spec)}`, age(ss, now), names, images] };
  },
};

export const daemonSetPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Desired', 'integer', 'The total number of nodes that should be running the daemon pod.'),
    col('Current', 'integer', 'The number of nodes running at least one daemon pod and are supposed to.'),
    col('Ready', 'integer', 'The number of nodes running the daemon pod with a Ready condition.'),
    col('Up-to-date', 'integer', 'The total number of nodes running an updated daemon pod.'),
    col('Available', 'integer', 'The number of nodes running an available daemon pod.'),
    col('Node Selector', 'string', 'Node selector of the pod template.'),
    ageColumn(),
    ...templateColumns(true),
  ],
  row(ds, now) {
    const spec = objectField(ds, 'spec');
    const status = objectField(ds, 'status');
    const podSpec = path(spec, 'template', 'spec');
    const [names, images] = containerCells(podSpec);
    return {
      cells: [
        nameOf(ds),
        finiteNumberField(status, 'desiredNumberScheduled'),
        finiteNumberField(status, 'currentNumberScheduled'),
        finiteNumberField(status, 'numberReady'),
        finiteNumberField(status, 'updatedNumberScheduled'),
        finiteNumberField(status, 'numberAvailable'),
        formatLabels(strMap(podSpec, 'nodeSelector')),
        age(ds, now),
        names,
        images,
        formatLabelSelector(spec.selector),
      ],
    };
  },
};

/** kube's `formatResourceName` of a controller owner reference: "daemonset.apps/name". */
export function controllerName(o: Obj): string {
  const ref = objs(objectField(o, 'metadata'), 'ownerReferences').find((r) => r.controller === true);
  if (!ref) return '<none>';
  const apiVersion = stringField(ref, 'apiVersion');
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const kind = stringField(ref, 'kind');
  if (kind === '' && group === '') return stringField(ref, 'name');
  return `${(group ? `${kind}.${group}` : kind).toLowerCase()}/${stringField(ref, 'name')}`;
}

export const controllerRevisionPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Controller', 'string', 'Controller of the object'),
    col('Revision', 'string', 'Revision indicates the revision of the state represented by Data.'),
    ageColumn(),
  ],
  row: (cr, now) => ({ cells: [nameOf(cr), controllerName(cr), finiteNumberField(cr, 'revision'), age(cr, now)] }),
};
