/**
 * Printers of networking.k8s.io types (ingresses, network policies, service
 * CIDRs, IP addresses) and discovery.k8s.io endpoint slices.
 */
import { ageColumn, col, nameColumn } from '../../codec/table-columns.js';
import { age, formatLabelSelector, listWithMore, nameOf } from './format.js';
import { loadBalancerIngress } from './core.js';
import type { Obj, TablePrinter } from '../../codec/table-printer.js';
import { arrayField, objectField, objectFieldOrUndefined, stringField, stringFieldOrUndefined } from '../../api/values.js';
import { finiteNumberFieldOrUndefined, objs, path, strs } from './values.js';

/** kube's `formatHosts`: up to three rule hosts, "*" when none, then "+ N more...". */
export function ingressHosts(rules: Obj[]): string {
  const list: string[] = [];
  let more = false;
  for (const rule of rules) {
    if (list.length === 3) more = true;
    const host = stringField(rule, 'host');
    if (!more && host !== '') list.push(host);
  }
  if (list.length === 0) return '*';
  const ret = list.join(',');
  return more ? `${ret} + ${rules.length - 3} more...` : ret;
}

export const ingressPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Class', 'string', 'The name of the IngressClass resource that should be used for additional configuration'),
    col('Hosts', 'string', 'Hosts that incoming requests are matched against before the ingress rule'),
    col('Address', 'string', 'Address is a list containing ingress points for the load-balancer'),
    col('Ports', 'string', 'Ports of TLS configurations that open'),
    ageColumn(),
  ],
  row(ing, now) {
    const spec = objectField(ing, 'spec');
    return {
      cells: [
        nameOf(ing),
        stringFieldOrUndefined(spec, 'ingressClassName') ?? '<none>',
        ingressHosts(objs(spec, 'rules')),
        loadBalancerIngress(path(ing, 'status', 'loadBalancer')),
        arrayField(spec, 'tls').length > 0 ? '80, 443' : '80',
        age(ing, now),
      ],
    };
  },
};

export const networkPolicyPrinter: TablePrinter = {
  columns: [nameColumn(), col('Pod-Selector', 'string', 'The pods to which this policy applies.'), ageColumn()],
  row: (np, now) => ({ cells: [nameOf(np), formatLabelSelector(objectField(np, 'spec').podSelector ?? {}), age(np, now)] }),
};

export const serviceCIDRPrinter: TablePrinter = {
  columns: [nameColumn(), col('CIDRs', 'string', 'The IP blocks service IPs are allocated from.'), ageColumn()],
  row: (sc, now) => ({ cells: [nameOf(sc), strs(objectField(sc, 'spec'), 'cidrs').join(','), age(sc, now)] }),
};

export const ipAddressPrinter: TablePrinter = {
  columns: [nameColumn(), col('ParentRef', 'string', 'The object this IP address is allocated to.')],
  row(ip) {
    const ref = objectFieldOrUndefined(objectField(ip, 'spec'), 'parentRef');
    let parent = '<none>';
    if (ref) {
      const group = stringField(ref, 'group');
      parent = (group ? `${stringField(ref, 'resource')}.${group}` : stringField(ref, 'resource')).toLowerCase();
      if (stringField(ref, 'namespace') !== '') parent += `/${stringField(ref, 'namespace')}`;
      parent += `/${stringField(ref, 'name')}`;
    }
    return { cells: [nameOf(ip), parent] };
  },
};

/** kube's `formatDiscoveryPorts`: port numbers (or names, or "*"). */
export function slicePorts(ports: Obj[]): string {
  return listWithMore(
    ports.map((p) => {
      const n = finiteNumberFieldOrUndefined(p, 'port');
      if (n !== undefined) return String(n);
      return stringFieldOrUndefined(p, 'name') ?? '*';
    }),
  );
}

export const endpointSlicePrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('AddressType', 'string', 'The type of address carried by this slice.'),
    col('Ports', 'string', 'The network ports exposed by each endpoint.'),
    col('Endpoints', 'string', 'The addresses of the endpoints.'),
    ageColumn(),
  ],
  row(es, now) {
    const addresses = objs(es, 'endpoints').flatMap((e) => strs(e, 'addresses'));
    return { cells: [nameOf(es), stringField(es, 'addressType'), slicePorts(objs(es, 'ports')), listWithMore(addresses), age(es, now)] };
  },
};
