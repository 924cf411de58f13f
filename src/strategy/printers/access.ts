/**
 * Printers of access-control types: RBAC bindings, admission webhook configurations and
 * policies, certificate signing requests and trust bundles. Roles and cluster roles have no
 * printer in kube and keep the default Name/Created At table.
 */
import { ageColumn, col, nameColumn } from '../../codec/table-columns.js';
import { age, humanDuration, labelSelectorString, nameOf } from './format.js';
import type { Obj, TablePrinter } from '../../codec/table-printer.js';
import { arrayField, objectField, objectFieldOrUndefined, stringField } from '../../api/values.js';
import { finiteNumberFieldOrUndefined, objs } from './values.js';

/** kube's `rbac.SubjectsStrings`: users, groups and "namespace/name" service accounts. */
export function subjectStrings(binding: Obj): [string, string, string] {
  const users: string[] = [];
  const groups: string[] = [];
  const sas: string[] = [];
  for (const s of objs(binding, 'subjects')) {
    const kind = stringField(s, 'kind');
    if (kind === 'User') users.push(stringField(s, 'name'));
    else if (kind === 'Group') groups.push(stringField(s, 'name'));
    else if (kind === 'ServiceAccount') sas.push(`${stringField(s, 'namespace')}/${stringField(s, 'name')}`);
  }
  return [users.join(', '), groups.join(', '), sas.join(', ')];
}

export function bindingPrinter(what: string): TablePrinter {
  return {
    columns: [
      nameColumn(),
      col('Role', 'string', 'The role this binding grants.'),
      ageColumn(),
      col('Users', 'string', `Users in the ${what}`, 1),
      col('Groups', 'string', `Groups in the ${what}`, 1),
      col('ServiceAccounts', 'string', `ServiceAccounts in the ${what}`, 1),
    ],
    row(b, now) {
      const ref = objectField(b, 'roleRef');
      return { cells: [nameOf(b), `${stringField(ref, 'kind')}/${stringField(ref, 'name')}`, age(b, now), ...subjectStrings(b)] };
    },
  };
}

export function webhookConfigurationPrinter(): TablePrinter {
  return {
    columns: [nameColumn(), col('Webhooks', 'integer', 'Webhooks indicates the number of webhooks registered in this configuration'), ageColumn()],
    row: (w, now) => ({ cells: [nameOf(w), arrayField(w, 'webhooks').length, age(w, now)] }),
  };
}

export function policyPrinter(rulesField: 'validations' | 'mutations', header: string, description: string): TablePrinter {
  return {
    columns: [
      nameColumn(),
      col(header, 'integer', description),
      col('ParamKind', 'string', 'ParamKind specifies the kind of resources used to parameterize this policy'),
      ageColumn(),
    ],
    row(p, now) {
      const spec = objectField(p, 'spec');
      const paramKind = objectFieldOrUndefined(spec, 'paramKind');
      return {
        cells: [
          nameOf(p),
          arrayField(spec, rulesField).length,
          paramKind ? `${stringField(paramKind, 'apiVersion')}/${stringField(paramKind, 'kind')}` : '<unset>',
          age(p, now),
        ],
      };
    },
  };
}

export function policyBindingPrinter(): TablePrinter {
  return {
    columns: [
      nameColumn(),
      col('PolicyName', 'string', 'PolicyName indicates the policy definition which the policy binding binded to'),
      col('ParamRef', 'string', 'ParamRef indicates the param resource which sets the configration param'),
      ageColumn(),
    ],
    row(b, now) {
      const spec = objectField(b, 'spec');
      const ref = objectFieldOrUndefined(spec, 'paramRef');
      let param = '<unset>';
      if (ref) {
        const name = stringField(ref, 'name');
        if (name !== '') param = stringField(ref, 'namespace') !== '' ? `${stringField(ref, 'namespace')}/${name}` : `*/${name}`;
        else if (objectFieldOrUndefined(ref, 'selector')) param = labelSelectorString(ref.selector) ?? '';
      }
      return { cells: [nameOf(b), stringField(spec, 'policyName'), param, age(b, now)] };
    },
  };
}

/** kube's `extractCSRStatus`: Approved/Denied/Pending, then ",Failed" and ",Issued". */
export function csrCondition(csr: Obj): string {
  const status = objectField(csr, 'status');
  const types = new Set(objs(status, 'conditions').map((c) => stringField(c, 'type')));
  let out = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) out += ',Failed';
  if (stringField(status, 'certificate') !== '') out += ',Issued';
  return out;
}

export const csrPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    ageColumn(),
    col('SignerName', 'string', 'The requested signer.'),
    col('Requestor', 'string', 'The user that created the request.'),
    col('RequestedDuration', 'string', 'The requested validity duration of the certificate.'),
    col('Condition', 'string', 'Approval and issuance state of the request.'),
  ],
  row(csr, now) {
    const spec = objectField(csr, 'spec');
    const seconds = finiteNumberFieldOrUndefined(spec, 'expirationSeconds');
    return {
      cells: [
        nameOf(csr),
        age(csr, now),
        stringField(spec, 'signerName') || '<none>',
        stringField(spec, 'username'),
        seconds === undefined ? '<none>' : humanDuration(seconds * 1000),
        csrCondition(csr),
      ],
    };
  },
};

export const clusterTrustBundlePrinter: TablePrinter = {
  columns: [nameColumn(), col('SignerName', 'string', 'The signer the trust anchors are associated with.')],
  row: (b) => ({ cells: [nameOf(b), stringField(objectField(b, 'spec'), 'signerName') || '<none>'] }),
};
