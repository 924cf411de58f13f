/**
 * Printers of cluster-infrastructure types: leases and lease candidates, priority and runtime
 * classes, API priority and fairness, API services, storage versions and dynamic resource
 * allocation (resource.k8s.io).
 */
import { ageColumn, col, nameColumn } from '../../codec/table-columns.js';
import { age, listWithMore, nameOf } from './format.js';
import type { Obj, TablePrinter } from '../../codec/table-printer.js';
import { bool, num, obj, objs, optNum, optObj, optStr, path, str } from './values.js';

export const leasePrinter: TablePrinter = {
  columns: [nameColumn(), col('Holder', 'string', 'The identity of the holder of the lease.'), ageColumn()],
  row: (l, now) => ({ cells: [nameOf(l), str(obj(l, 'spec'), 'holderIdentity'), age(l, now)] }),
};

export const leaseCandidatePrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('LeaseName', 'string', 'The lease the candidate competes for.'),
    col('BinaryVersion', 'string', 'The binary version of the candidate.'),
    col('EmulationVersion', 'string', 'The emulation version of the candidate.'),
    ageColumn(),
  ],
  row(c, now) {
    const spec = obj(c, 'spec');
    return { cells: [nameOf(c), str(spec, 'leaseName'), str(spec, 'binaryVersion'), str(spec, 'emulationVersion'), age(c, now)] };
  },
};

export const priorityClassPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Value', 'integer', 'The priority of pods of this class.'),
    col('Global-Default', 'boolean', 'Whether this class is the default for pods without a priority class.'),
    ageColumn(),
    col('PreemptionPolicy', 'string', 'Whether pods of this class may preempt lower-priority pods.', 1),
  ],
  row: (pc, now) => ({
    cells: [nameOf(pc), num(pc, 'value'), bool(pc, 'globalDefault'), age(pc, now), optStr(pc, 'preemptionPolicy') ?? 'PreemptLowerPriority'],
  }),
};

export const runtimeClassPrinter: TablePrinter = {
  columns: [nameColumn(), col('Handler', 'string', 'The CRI handler of this runtime class.'), ageColumn()],
  row: (rc, now) => ({ cells: [nameOf(rc), str(rc, 'handler'), age(rc, now)] }),
};

export const flowSchemaPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('PriorityLevel', 'string', 'The priority level configuration requests are assigned to.'),
    col('MatchingPrecedence', 'string', 'Lower values match first.'),
    col('DistinguisherMethod', 'string', 'How flows are distinguished.'),
    ageColumn(),
    col('MissingPL', 'string', 'references a broken or non-existent PriorityLevelConfiguration'),
  ],
  row(fs, now) {
    const spec = obj(fs, 'spec');
    const dm = optObj(spec, 'distinguisherMethod');
    const dangling = objs(obj(fs, 'status'), 'conditions').find((c) => str(c, 'type') === 'Dangling');
    return {
      cells: [
        nameOf(fs),
        str(obj(spec, 'priorityLevelConfiguration'), 'name'),
        num(spec, 'matchingPrecedence'),
        dm ? str(dm, 'type') : '<none>',
        age(fs, now),
        dangling ? str(dangling, 'status') : '?',
      ],
    };
  },
  sort(objects: Obj[]): Obj[] {
    return [...objects].sort((a, b) => {
      const pa = num(obj(a, 'spec'), 'matchingPrecedence');
      const pb = num(obj(b, 'spec'), 'matchingPrecedence');
      if (pa !== pb) return pa - pb;
      const na = nameOf(a);
      const nb = nameOf(b);
      return na < nb ? -1 : na > nb ? 1 : 0;
    });
  },
};

export const priorityLevelPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Type', 'string', 'Exempt or Limited.'),
    col('NominalConcurrencyShares', 'string', "The share of the server's concurrency limit of this level."),
    col('Queues', 'string', 'Number of queues.'),
    col('HandSize', 'string', 'Number of queues a flow is shuffle-sharded to.'),
    col('QueueLengthLimit', 'string', 'Maximum number of requests waiting in one queue.'),
    ageColumn(),
  ],
  row(pl, now) {
    const spec = obj(pl, 'spec');
    const limited = optObj(spec, 'limited');
    let cells: unknown[] = ['<none>', '<none>', '<none>', '<none>'];
    if (limited) {
      const queuing = optObj(path(limited, 'limitResponse'), 'queuing');
      cells = [
        optNum(limited, 'nominalConcurrencyShares') ?? 30,
        ...(queuing ? [num(queuing, 'queues'), num(queuing, 'handSize'), num(queuing, 'queueLengthLimit')] : ['<none>', '<none>', '<none>']),
      ];
    }
    return { cells: [nameOf(pl), str(spec, 'type'), ...cells, age(pl, now)] };
  },
};

export const apiServicePrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Service', 'string', 'The reference to the service that hosts this API endpoint.'),
    col('Available', 'string', 'Whether this service is available.'),
    ageColumn(),
  ],
  row(svc, now) {
    const ref = optObj(obj(svc, 'spec'), 'service');
    const available = objs(obj(svc, 'status'), 'conditions').find((c) => str(c, 'type') === 'Available');
    let status = 'Unknown';
    if (available) {
      const s = str(available, 'status');
      const reason = str(available, 'reason');
      status = s === 'True' || reason === '' ? s : `${s} (${reason})`;
    }
    return { cells: [nameOf(svc), ref ? `${str(ref, 'namespace')}/${str(ref, 'name')}` : 'Local', status, age(svc, now)] };
  },
};

export const storageVersionPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('CommonEncodingVersion', 'string', 'The encoding version all API servers agree on.'),
    col('StorageVersions', 'string', 'Encoding versions reported by each API server.'),
    ageColumn(),
  ],
  row(sv, now) {
    const status = obj(sv, 'status');
    const versions = objs(status, 'storageVersions').map((v) => `${str(v, 'apiServerID')}=${str(v, 'encodingVersion')}`);
    return { cells: [nameOf(sv), optStr(status, 'commonEncodingVersion') ?? '<unset>', listWithMore(versions), age(sv, now)] };
  },
};

export const nameAgePrinter: TablePrinter = {
  columns: [nameColumn(), ageColumn()],
  row: (o, now) => ({ cells: [nameOf(o), age(o, now)] }),
};

/** kube's `resourceClaimState`: deleted, pending, allocated, reserved. */
export function resourceClaimState(claim: Obj): string {
  const states: string[] = [];
  const deleted = typeof obj(claim, 'metadata').deletionTimestamp === 'string';
  const status = obj(claim, 'status');
  if (deleted) states.push('deleted');
  if (optObj(status, 'allocation') === undefined) {
    if (!deleted) states.push('pending');
  } else {
    states.push('allocated');
    if (objs(status, 'reservedFor').length > 0) states.push('reserved');
  }
  return states.join(',');
}

export const resourceClaimPrinter: TablePrinter = {
  columns: [nameColumn(), col('State', 'string', 'A summary of the current state (allocated, pending, reserved, etc.).'), ageColumn()],
  row: (c, now) => ({ cells: [nameOf(c), resourceClaimState(c), age(c, now)] }),
};

export const resourceSlicePrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Node', 'string', 'The node providing the resources.'),
    col('Driver', 'string', 'The driver providing the resources.'),
    col('Pool', 'string', 'The pool the slice belongs to.'),
    ageColumn(),
  ],
  row(s, now) {
    const spec = obj(s, 'spec');
    return { cells: [nameOf(s), str(spec, 'nodeName'), str(spec, 'driver'), str(obj(spec, 'pool'), 'name'), age(s, now)] };
  },
};
