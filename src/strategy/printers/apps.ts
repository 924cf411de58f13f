/**
 * Printers of apps/v1 workloads: deployments, replica sets, stateful sets, daemon sets and
 * controller revisions.
 */
import { ageColumn, col, nameColumn, templateColumns } from '../../codec/table-columns.js';
import { age, containerCells, formatLabelSelector, formatLabels, labelSelectorString, nameOf } from './format.js';
import { replicaCountPrinter, replicasOf } from './core.js';
import type { Obj, TablePrinter } from '../../codec/table-printer.js';
import { num, obj, objs, path, str, strMap } from './values.js';

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
    const spec = obj(d, 'spec');
    const status = obj(d, 'status');
    const [names, images] = containerCells(path(spec, 'template', 'spec'));
    return {
      cells: [
        nameOf(d),
        `${num(status, 'readyReplicas')}/${replicasOf(spec)}`,
        num(status, 'updatedReplicas'),
        num(status, 'availableReplicas'),
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
    const spec = obj(ss, 'spec');
    const [names, images] = containerCells(path(spec, 'template', 'spec'));
    return { cells: [nameOf(ss), `${num(obj(ss, 'status'), 'readyReplicas')}/${replicasOf(spec)}`, age(ss, now), names, images] };
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
    const spec = obj(ds, 'spec');
    const status = obj(ds, 'status');
    const podSpec = path(spec, 'template', 'spec');
    const [names, images] = containerCells(podSpec);
    return {
      cells: [
        nameOf(ds),
        num(status, 'desiredNumberScheduled'),
        num(status, 'currentNumberScheduled'),
        num(status, 'numberReady'),
        num(status, 'updatedNumberScheduled'),
        num(status, 'numberAvailable'),
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
  const ref = objs(obj(o, 'metadata'), 'ownerReferences').find((r) => r.controller === true);
  if (!ref) return '<none>';
  const apiVersion = str(ref, 'apiVersion');
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const kind = str(ref, 'kind');
  if (kind === '' && group === '') return str(ref, 'name');
  return `${(group ? `${kind}.${group}` : kind).toLowerCase()}/${str(ref, 'name')}`;
}

export const controllerRevisionPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Controller', 'string', 'Controller of the object'),
    col('Revision', 'string', 'Revision indicates the revision of the state represented by Data.'),
    ageColumn(),
  ],
  row: (cr, now) => ({ cells: [nameOf(cr), controllerName(cr), num(cr, 'revision'), age(cr, now)] }),
};
