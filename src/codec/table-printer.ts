import type { Obj } from '../api/object-util.js';
/**
 * Shapes shared by the server-side Table printers (kube-apiserver's pkg/printers equivalents).
 */

export type { Obj } from '../api/object-util.js';

/** A column of a meta.k8s.io/v1 Table. `priority` 0 is always shown; 1 only with `-o wide`. */
export interface TableColumn {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** A `TableRowCondition` (kube sets `Completed` on finished pods). */
export interface TableRowCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** The printed part of one row: one cell per column, in column order. */
export interface PrintedRow {
  cells: unknown[];
  conditions?: TableRowCondition[];
}

/**
 * How one resource type prints as a Table. `row` receives the object as served and the time
 * used for ages, so output is a pure function of its inputs.
 */
export interface TablePrinter {
  columns: TableColumn[];
  row(obj: Obj, now: number): PrintedRow;
  /** Reorders a collection before printing (kube sorts FlowSchemas by precedence). */
  sort?(objects: Obj[]): Obj[];
}
