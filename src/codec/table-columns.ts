/**
 * Column-definition builders. Name and Age carry kube's ObjectMeta field descriptions verbatim
 * (clients show them in `kubectl explain`-like UIs); other descriptions are short and our own.
 */
import type { TableColumn } from './table-printer.js';

export const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';

export const CREATION_TIMESTAMP_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

/** A column; `priority` 1 marks wide-only columns. */
export function col(name: string, type: 'string' | 'integer' | 'boolean' | 'number' | 'date', description: string, priority = 0, format = ''): TableColumn {
  return { name, type, format, description, priority };
}

/** The "Name" column every printer starts with. */
export function nameColumn(priority = 0): TableColumn {
  return col('Name', 'string', NAME_DESCRIPTION, priority, 'name');
}

/** The "Age" column: a string cell holding a human duration, as kube prints it. */
export function ageColumn(): TableColumn {
  return col('Age', 'string', CREATION_TIMESTAMP_DESCRIPTION);
}

/** The wide "Containers", "Images" (and optionally "Selector") columns of workload printers. */
export function templateColumns(selector: boolean): TableColumn[] {
  const cols = [
    col('Containers', 'string', 'Names of each container in the template.', 1),
    col('Images', 'string', 'Images referenced by each container in the template.', 1),
  ];
  if (selector) cols.push(col('Selector', 'string', 'Label selector of the pods this object manages.', 1));
  return cols;
}

/** The default Table of types without a printer: Name and Created At (a date cell). */
export const DEFAULT_COLUMNS: TableColumn[] = [nameColumn(), col('Created At', 'date', CREATION_TIMESTAMP_DESCRIPTION)];
