/**
 * Printers of core/v1 types other than pods and events: services, nodes, namespaces, config maps,
 * secrets, service accounts, endpoints, volumes and claims, quotas, pod templates, RCs.
 */
import { ageColumn, col, nameColumn, templateColumns } from '../../codec/table-columns.js';
import { accessModes, age, containerCells, formatLabels, nameOf, storageClassOf } from './format.js';
import { quantityOf } from '../../api/quantity.js';
import type { Obj, TablePrinter } from '../../codec/table-printer.js';
import { arrayField, objectField, objectFieldOrUndefined, stringField, stringFieldOrUndefined } from '../../api/values.js';
import { finiteNumberField, finiteNumberFieldOrUndefined, keyCount, objs, path, strMap, strs } from './values.js';

/**
 * `spec.replicas` as kube's printers read it from the internal object: absent is 0, Go's zero value
 * (stored objects always have it, defaulted to 1; a watch bookmark's empty object has not).
 */
export function replicasOf(spec: Obj): number {
  return finiteNumberFieldOrUndefined(spec, 'replicas') ?? 0;
}

export function deleting(o: Obj): boolean {
  const ts = objectField(o, 'metadata').deletionTimestamp;
  return typeof ts === 'string' && ts !== '';
}

/** kube's `makePortString`: "80/TCP,443:30443/TCP". */
export function servicePorts(ports: Obj[]): string {
  return ports
    .map((p) => {
      const protocol = stringField(p, 'protocol') || 'TCP';
      const nodePort = finiteNumberField(p, 'nodePort');
      return nodePort > 0 ? `${finiteNumberField(p, 'port')}:${nodePort}/${protocol}` : `${finiteNumberField(p, 'port')}/${protocol}`;
    })
    .join(',');
}

/** Distinct load-balancer ingress IPs (or hostnames), sorted, comma-joined. */
export function loadBalancerIngress(lb: Obj): string {
  const set = new Set<string>();
  for (const i of objs(lb, 'ingress')) {
    const v = stringField(i, 'ip') || stringField(i, 'hostname');
    if (v) set.add(v);
  }
  return [...set].sort().join(',');
}

/** kube's `getServiceExternalIP` with wide output (the server always prints wide). */
export function serviceExternalIP(svc: Obj): string {
  const spec = objectField(svc, 'spec');
  const externalIPs = strs(spec, 'externalIPs');
  switch (stringField(spec, 'type') || 'ClusterIP') {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length > 0 ? externalIPs.join(',') : '<none>';
    case 'LoadBalancer': {
      const lb = loadBalancerIngress(path(svc, 'status', 'loadBalancer'));
      if (externalIPs.length > 0) return [...(lb ? lb.split(',') : []), ...externalIPs].join(',');
      return lb || '<pending>';
    }
    case 'ExternalName':
      return stringField(spec, 'externalName');
    default:
      return '<unknown>';
  }
}

export const servicePrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Type', 'string', 'How the service is exposed: ClusterIP, NodePort, LoadBalancer or ExternalName.'),
    col('Cluster-IP', 'string', 'The IP address of the service inside the cluster.'),
    col('External-IP', 'string', 'External IP addresses or the external name of the service.'),
    col('Port(s)', 'string', 'The ports exposed by the service.'),
    ageColumn(),
    col('Selector', 'string', 'Label selector of the pods traffic is routed to.', 1),
  ],
  row(svc, now) {
    const spec = objectField(svc, 'spec');
    const clusterIP = strs(spec, 'clusterIPs')[0] || stringField(spec, 'clusterIP') || '<none>';
    return {
      cells: [
        nameOf(svc),
        stringField(spec, 'type') || 'ClusterIP',
        clusterIP,
        serviceExternalIP(svc),
        servicePorts(objs(spec, 'ports')) || '<none>',
        age(svc, now),
        formatLabels(strMap(spec, 'selector')),
      ],
    };
  },
};

/** The "Status" cell of a node: Ready/NotReady/Unknown, plus SchedulingDisabled when cordoned. */
export function nodeStatus(node: Obj): string {
  const ready = objs(path(node, 'status'), 'conditions').find((c) => stringField(c, 'type') === 'Ready');
  const status: string[] = [];
  if (ready) status.push(stringField(ready, 'status') === 'True' ? 'Ready' : 'NotReady');
  else status.push('Unknown');
  if (path(node, 'spec').unschedulable === true) status.push('SchedulingDisabled');
  return status.join(',');
}

/** Roles from `node-role.kubernetes.io/<role>` labels and the `kubernetes.io/role` label, sorted. */
export function nodeRoles(node: Obj): string {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(strMap(objectField(node, 'metadata'), 'labels'))) {
    if (k.startsWith('node-role.kubernetes.io/')) {
      const role = k.slice('node-role.kubernetes.io/'.length);
      if (role) roles.add(role);
    } else if (k === 'kubernetes.io/role' && v !== '') {
      roles.add(v);
    }
  }
  return roles.size > 0 ? [...roles].sort().join(',') : '<none>';
}

export function nodeAddress(node: Obj, type: string): string {
  const a = objs(path(node, 'status'), 'addresses').find((x) => stringField(x, 'type') === type);
  return a ? stringField(a, 'address') : '<none>';
}

export const nodePrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Status', 'string', 'The status of the node'),
    col('Roles', 'string', 'The roles of the node'),
    ageColumn(),
    col('Version', 'string', 'Kubelet version reported by the node.'),
    col('Internal-IP', 'string', 'The first internal IP address of the node.', 1),
    col('External-IP', 'string', 'The first external IP address of the node.', 1),
    col('OS-Image', 'string', 'OS image reported by the node.', 1),
    col('Kernel-Version', 'string', 'Kernel version reported by the node.', 1),
    col('Container-Runtime', 'string', 'Container runtime version reported by the node.', 1),
  ],
  row(node, now) {
    const info = path(node, 'status', 'nodeInfo');
    return {
      cells: [
        nameOf(node),
        nodeStatus(node),
        nodeRoles(node),
        age(node, now),
        stringField(info, 'kubeletVersion'),
        nodeAddress(node, 'InternalIP'),
        nodeAddress(node, 'ExternalIP'),
        stringField(info, 'osImage') || '<unknown>',
        stringField(info, 'kernelVersion') || '<unknown>',
        stringField(info, 'containerRuntimeVersion') || '<unknown>',
      ],
    };
  },
};

export const namespacePrinter: TablePrinter = {
  columns: [nameColumn(), col('Status', 'string', 'The status of the namespace'), ageColumn()],
  row: (ns, now) => ({ cells: [nameOf(ns), stringField(objectField(ns, 'status'), 'phase') || 'Active', age(ns, now)] }),
};

export const configMapPrinter: TablePrinter = {
  columns: [nameColumn(), col('Data', 'string', 'Number of data and binaryData entries.'), ageColumn()],
  row: (cm, now) => ({ cells: [nameOf(cm), keyCount(cm, 'data') + keyCount(cm, 'binaryData'), age(cm, now)] }),
};

export const secretPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Type', 'string', 'Used to facilitate programmatic handling of secret data.'),
    col('Data', 'string', 'Number of data entries.'),
    ageColumn(),
  ],
  row: (s, now) => ({ cells: [nameOf(s), stringField(s, 'type') || 'Opaque', keyCount(s, 'data'), age(s, now)] }),
};

export const serviceAccountPrinter: TablePrinter = {
  columns: [nameColumn(), col('Secrets', 'string', 'Number of secrets the service account references.'), ageColumn()],
  row: (sa, now) => ({ cells: [nameOf(sa), arrayField(sa, 'secrets').length, age(sa, now)] }),
};

/** kube's `formatEndpoints` over all ports: up to three `ip:port`, then "+ N more...". */
export function formatEndpoints(ep: Obj): string {
  const subsets = objs(ep, 'subsets');
  if (subsets.length === 0) return '<none>';
  const list: string[] = [];
  let count = 0;
  for (const ss of subsets) {
    const addresses = objs(ss, 'addresses');
    const ports = objs(ss, 'ports');
    const targets = ports.length === 0 ? [undefined] : ports;
    for (const port of targets) {
      count += addresses.length;
      for (const a of addresses) {
        if (list.length === 3) break;
        const ip = stringField(a, 'ip');
        list.push(port === undefined ? ip : `${ip.includes(':') ? `[${ip}]` : ip}:${finiteNumberField(port, 'port')}`);
      }
    }
  }
  const ret = list.join(',');
  return count > 3 ? `${ret} + ${count - 3} more...` : ret;
}

export const endpointsPrinter: TablePrinter = {
  columns: [nameColumn(), col('Endpoints', 'string', 'The addresses and ports of the endpoints.'), ageColumn()],
  row: (ep, now) => ({ cells: [nameOf(ep), formatEndpoints(ep), age(ep, now)] }),
};

export const persistentVolumePrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Capacity', 'string', 'The storage capacity of the volume.'),
    col('Access Modes', 'string', 'The ways the volume can be mounted.'),
    col('Reclaim Policy', 'string', 'What happens to the volume when released from its claim.'),
    col('Status', 'string', 'The phase of the volume.'),
    col('Claim', 'string', 'The claim bound to the volume.'),
    col('StorageClass', 'string', 'StorageClass of the pv'),
    col('VolumeAttributesClass', 'string', 'VolumeAttributesClass of the pv'),
    col('Reason', 'string', 'Why the volume is in its phase.'),
    ageColumn(),
    col('VolumeMode', 'string', 'Whether the volume is a filesystem or a raw block device.', 1),
  ],
  row(pv, now) {
    const spec = objectField(pv, 'spec');
    const claimRef = objectFieldOrUndefined(spec, 'claimRef');
    return {
      cells: [
        nameOf(pv),
        quantityOf(objectField(spec, 'capacity').storage, '0'),
        accessModes(arrayField(spec, 'accessModes')),
        stringField(spec, 'persistentVolumeReclaimPolicy'),
        deleting(pv) ? 'Terminating' : stringField(objectField(pv, 'status'), 'phase'),
        claimRef ? `${stringField(claimRef, 'namespace')}/${stringField(claimRef, 'name')}` : '',
        storageClassOf(pv, spec),
        stringFieldOrUndefined(spec, 'volumeAttributesClassName') ?? '<unset>',
        stringField(objectField(pv, 'status'), 'reason'),
        age(pv, now),
        stringFieldOrUndefined(spec, 'volumeMode') ?? '<unset>',
      ],
    };
  },
};

export const persistentVolumeClaimPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Status', 'string', 'The phase of the claim.'),
    col('Volume', 'string', 'The volume bound to the claim.'),
    col('Capacity', 'string', 'The capacity of the bound volume.'),
    col('Access Modes', 'string', 'The access modes of the bound volume.'),
    col('StorageClass', 'string', 'StorageClass of the pvc'),
    col('VolumeAttributesClass', 'string', 'VolumeAttributesClass of the pvc'),
    ageColumn(),
    col('VolumeMode', 'string', 'Whether the claim is for a filesystem or a raw block device.', 1),
  ],
  row(pvc, now) {
    const spec = objectField(pvc, 'spec');
    const status = objectField(pvc, 'status');
    const volumeName = stringField(spec, 'volumeName');
    const bound = volumeName !== '';
    return {
      cells: [
        nameOf(pvc),
        deleting(pvc) ? 'Terminating' : stringField(status, 'phase'),
        volumeName,
        bound ? quantityOf(objectField(status, 'capacity').storage, '0') : '',
        bound ? accessModes(arrayField(status, 'accessModes')) : '',
        storageClassOf(pvc, spec),
        stringFieldOrUndefined(spec, 'volumeAttributesClassName') ?? '<unset>',
        age(pvc, now),
        stringFieldOrUndefined(spec, 'volumeMode') ?? '<unset>',
      ],
    };
  },
};

/** kube's quota cells: "resource: used/hard" pairs, requests and limits apart, sorted by name. */
export function quotaCells(rq: Obj): [string, string] {
  const status = objectField(rq, 'status');
  const hard = objectField(status, 'hard');
  const used = objectField(status, 'used');
  const requests: string[] = [];
  const limits: string[] = [];
  for (const name of Object.keys(hard).sort()) {
    const entry = `${name}: ${quantityOf(used[name], '0')}/${quantityOf(hard[name], '0')}`;
    const pieces = name.split('.');
    if (pieces.length > 1 && pieces[0] === 'limits') limits.push(entry);
    else requests.push(entry);
  }
  return [requests.join(', '), limits.join(', ')];
}

export const resourceQuotaPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Request', 'string', 'Request represents a minimum amount of cpu/memory that a container may consume.'),
    col('Limit', 'string', 'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.'),
    ageColumn(),
  ],
  row(rq, now) {
    const [request, limit] = quotaCells(rq);
    return { cells: [nameOf(rq), request, limit, age(rq, now)] };
  },
};

export const podTemplatePrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Containers', 'string', 'Names of each container in the template.'),
    col('Images', 'string', 'Images referenced by each container in the template.'),
    col('Pod Labels', 'string', 'The labels for the pod template.'),
  ],
  row(pt) {
    const template = objectField(pt, 'template');
    const [names, images] = containerCells(objectField(template, 'spec'));
    return { cells: [nameOf(pt), names, images, formatLabels(strMap(objectField(template, 'metadata'), 'labels'))] };
  },
};

/**
 * The columns kube prints for types that keep a count of pod replicas (ReplicationController,
 * ReplicaSet); they differ only in how the selector is written.
 */
export function replicaCountPrinter(selectorCell: (spec: Obj) => string): TablePrinter {
  return {
    columns: [
      nameColumn(),
      col('Desired', 'integer', 'Number of desired replicas.'),
      col('Current', 'integer', 'Number of current replicas.'),
      col('Ready', 'integer', 'Number of ready replicas.'),
      ageColumn(),
      ...templateColumns(true),
    ],
    row(o, now) {
      const spec = objectField(o, 'spec');
      const status = objectField(o, 'status');
      const [names, images] = containerCells(path(spec, 'template', 'spec'));
      return {
        cells: [
          nameOf(o),
          replicasOf(spec),
          finiteNumberField(status, 'replicas'),
          finiteNumberField(status, 'readyReplicas'),
          age(o, now),
          names,
          images,
          selectorCell(spec),
        ],
      };
    },
  };
}

export const replicationControllerPrinter = replicaCountPrinter((spec) => formatLabels(strMap(spec, 'selector')));

export const componentStatusPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Status', 'string', 'Status of the component conditions'),
    col('Message', 'string', 'Message of the component conditions'),
    col('Error', 'string', 'Error of the component conditions'),
  ],
  row(cs) {
    const healthy = objs(cs, 'conditions').find((c) => stringField(c, 'type') === 'Healthy');
    if (!healthy) return { cells: [nameOf(cs), 'Unknown', '', ''] };
    return {
      cells: [nameOf(cs), stringField(healthy, 'status') === 'True' ? 'Healthy' : 'Unhealthy', stringField(healthy, 'message'), stringField(healthy, 'error')],
    };
  },
};
