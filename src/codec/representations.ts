/**
 * Server-side representations of objects: `PartialObjectMetadata(List)` and the `Table` of
 * meta.k8s.io/v1, with kube-apiserver's per-type columns (printers in src/codec/printers, each kind's
 * referenced from its strategy) or, for types
 * without a printer, the default Name and Created At columns.
 */
import { DEFAULT_COLUMNS } from './table-columns.js';
import type { TableColumn, TablePrinter } from './table-printer.js';
import type { Obj } from '../api/object-util.js';

export type { TableColumn, TablePrinter } from './table-printer.js';

function metadataOf(obj: Obj): Obj {
  return typeof obj.metadata === 'object' && obj.metadata !== null ? (obj.metadata as Obj) : {};
}

/** The metadata-only form of one object. */
export function toPartialObjectMetadata(obj: Obj): Obj {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: metadataOf(obj) };
}

/** `includeObject` query parameter of Table requests. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** Options of `toTable` beyond the objects themselves. */
export interface TableOptions {
  /** Omit column definitions (`columnDefinitions: null`), as kube does after a watch's first event. */
  noHeaders?: boolean;
  /** The time ages are computed against (ms since the epoch); defaults to now. */
  now?: number;
}

const defaultPrinter: TablePrinter = {
  columns: DEFAULT_COLUMNS,
  row: (o) => {
    const meta = metadataOf(o);
    return { cells: [meta.name ?? '', meta.creationTimestamp ?? null] };
  },
};

/** A Table in parts: its fields before `rows`, and the rows' objects with how each becomes its row. */
export interface TableParts {
  head: Obj;
  /** The objects in the order of their rows. */
  ordered: Obj[];
  row: (obj: Obj) => Obj;
}

/** The parts of `toTable` (for a Table written row by row); the same arguments and meaning. */
export function tableParts(
  objects: Obj[],
  listMeta: Obj,
  includeObject: IncludeObject = 'Metadata',
  printer?: TablePrinter,
  options: TableOptions = {},
): TableParts {
  const p = printer ?? defaultPrinter;
  const now = options.now ?? Date.now();
  const ordered = p.sort ? p.sort(objects) : objects;
  const columns: TableColumn[] | null = options.noHeaders ? null : p.columns;
  return {
    head: { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: listMeta, columnDefinitions: columns },
    ordered,
    row: (o) => {
      const printed = p.row(o, now);
      const row: Obj = { cells: printed.cells };
      if (printed.conditions) row.conditions = printed.conditions;
      if (includeObject === 'Object') row.object = o;
      else if (includeObject === 'Metadata') row.object = toPartialObjectMetadata(o);
      return row;
    },
  };
}

/**
 * A Table for `objects`; `listMeta` carries the list's resourceVersion and continue token.
 * `printer` is the type's printer (its strategy's); types without one get the default Name/Created At table.
 */
export function toTable(objects: Obj[], listMeta: Obj, includeObject: IncludeObject = 'Metadata', printer?: TablePrinter, options: TableOptions = {}): Obj {
  const parts = tableParts(objects, listMeta, includeObject, printer, options);
  return { ...parts.head, rows: parts.ordered.map(parts.row) };
}
