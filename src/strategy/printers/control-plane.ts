/**
 * Printers of cluster-infrastructure types: leases and lease candidates, priority and runtime
 * classes, API priority and fairness, API services, storage versions and dynamic resource
 * allocation (resource.k8s.io).
 */
import { ageColumn, col, nameColumn } from '../../codec/table-columns.js';
import { age, listWithMore, nameOf } from './format.js';
import type { Obj, TablePrinter } from '../../codec/table-printer.js';
import { booleanField, objectField, objectFieldOrUndefined, stringField, stringFieldOrUndefined } from '../../api/values.js';
import { finiteNumberField, finiteNumberFieldOrUndefined, objs, path } from './values.js';

export const leasePrinter: TablePrinter = {
  columns: [nameColumn(), col('Holder', 'string', 'The identity of the holder of the lease.'), ageColumn()],
  row: (l, now) => ({ cells: [nameOf(l), stringField(objectField(l, 'spec'), 'holderIdentity'), age(l, now)] }),
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
    const spec = objectField(c, 'spec');
    return { cells: [nameOf(c), stringField(spec, 'leaseName'), stringField(spec, 'binaryVersion'), stringField(spec, 'emulationVersion'), age(c, now)] };
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
    cells: [
      nameOf(pc),
      finiteNumberField(pc, 'value'),
      booleanField(pc, 'globalDefault'),
      age(pc, now),
      stringFieldOrUndefined(pc, 'preemptionPolicy') ?? 'PreemptLowerPriority',
    ],
  }),
};

export const runtimeClassPrinter: TablePrinter = {
  columns: [nameColumn(), col('Handler', 'string', 'The CRI handler of this runtime class.'), ageColumn()],
  row: (rc, now) => ({ cells: [nameOf(rc), stringField(rc, 'handler'), age(rc, now)] }),
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
    const spec = objectField(fs, 'spec');
    const dm = objectFieldOrUndefined(spec, 'distinguisherMethod');
    const dangling = objs(objectField(fs, 'status'), 'conditions').find((c) => stringField(c, 'type') === 'Dangling');
    return {
      cells: [
        nameOf(fs),
        stringField(objectField(spec, 'priorityLevelConfiguration'), 'name'),
        finiteNumberField(spec, 'matchingPrecedence'),
        dm ? stringField(dm, 'type') : '<none>',
        age(fs, now),
        dangling ? stringField(dangling, 'status') : '?',
      ],
    };
  },
  sort(objects: Obj[]): Obj[] {
    return [...objects].sort((a, b) => {
      const pa = finiteNumberField(objectField(a, 'spec'), 'matchingPrecedence');
      const pb = finiteNumberField(objectField(b, 'spec'), 'matchingPrecedence');
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
    const spec = objectField(pl, 'spec');
    const limited = objectFieldOrUndefined(spec, 'limited');
    let cells: unknown[] = ['<none>', '<none>', '<none>', '<none>'];
    if (limited) {
      const queuing = objectFieldOrUndefined(path(limited, 'limitResponse'), 'queuing');
      cells = [
        finiteNumberFieldOrUndefined(limited, 'nominalConcurrencyShares') ?? 30,
        ...(queuing
          ? [finiteNumberField(queuing, 'queues'), finiteNumberField(queuing, 'handSize'), finiteNumberField(queuing, 'queueLengthLimit')]
          : ['<none>', '<none>', '<none>']),
      ];
    }
    return { cells: [nameOf(pl), stringField(spec, 'type'), ...cells, age(pl, now)] };
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
    const ref = objectFieldOrUndefined(objectField(svc, 'spec'), 'service');
    const available = objs(objectField(svc, 'status'), 'conditions').find((c) => stringField(c, 'type') === 'Available');
    let status = 'Unknown';
    if (available) {
      const s = stringField(available, 'status');
      const reason = stringField(available, 'reason');
      status = s === 'True' || reason === '' ? s : `${s} (${reason})`;
    }
    return { cells: [nameOf(svc), ref ? `${stringField(ref, 'namespace')}/${stringField(ref, 'name')}` : 'Local', status, age(svc, now)] };
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
    const status = objectField(sv, 'status');
    const versions = objs(status, 'storageVersions').map((v) => `${stringField(v, 'apiServerID')}=${stringField(v, 'encodingVersion')}`);
    return { cells: [nameOf(sv), stringFieldOrUndefined(status, 'commonEncodingVersion') ?? '<unset>', listWithMore(versions), age(sv, now)] };
  },
};

export const nameAgePrinter: TablePrinter = {
  columns: [nameColumn(), ageColumn()],
  row: (o, now) => ({ cells: [nameOf(o), age(o, now)] }),
};

/** kube's `resourceClaimState`: deleted, pending, allocated, reserved. */
export function resourceClaimState(claim: Obj): string {
  const states: string[] = [];
  const deleted = typeof objectField(claim, 'metadata').deletionTimestamp === 'string';
  const status = objectField(claim, 'status');
  if (deleted) states.push('deleted');
  if (objectFieldOrUndefined(status, 'allocation') === undefined) {
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
    const spec = objectField(s, 'spec');
    return { cells: [nameOf(s), stringField(spec, 'nodeName'), stringField(spec, 'driver'), stringField(objectField(spec, 'pool'), 'name'), age(s, now)] };
  },
};
