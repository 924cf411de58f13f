/**
 * Server-side representations of objects: `PartialObjectMetadata(List)` and the default `Table`
 * (Name and Created At columns) of meta.k8s.io/v1.
 */

type Obj = Record<string, unknown>;

function metadataOf(obj: Obj): Obj {
  return typeof obj.metadata === 'object' && obj.metadata !== null ? (obj.metadata as Obj) : {};
}

/** The metadata-only form of one object. */
export function toPartialObjectMetadata(obj: Obj): Obj {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: metadataOf(obj) };
}

/** A column of a Table. */
export interface TableColumn {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

const DEFAULT_COLUMNS: TableColumn[] = [
  { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names', priority: 0 },
  { name: 'Created At', type: 'date', format: '', description: 'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata', priority: 0 },
];

/** `includeObject` query parameter of Table requests. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** A Table for `objects`; `listMeta` carries the list's resourceVersion and continue token. */
export function toTable(objects: Obj[], listMeta: Obj, includeObject: IncludeObject = 'Metadata'): Obj {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: DEFAULT_COLUMNS,
    rows: objects.map((o) => {
      const meta = metadataOf(o);
      const row: Obj = { cells: [meta.name ?? '', meta.creationTimestamp ?? null] };
      if (includeObject === 'Object') row.object = o;
      else if (includeObject === 'Metadata') row.object = toPartialObjectMetadata(o);
      return row;
    }),
  };
}
