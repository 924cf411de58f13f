/**
 * Table printers of custom resources, after kube's apiextensions tableconvertor: a Name column, then
 * the version's additionalPrinterColumns (or a single Age column when it declares none), each cell
 * read with the JSONPath subset kube allows in printer columns.
 */
import { isObject } from '../../api/values.js';
import { CREATION_TIMESTAMP_DESCRIPTION, nameColumn } from '../../codec/table-columns.js';
import { nameOf, since } from './format.js';
import type { Obj, TableColumn, TablePrinter } from '../../codec/table-printer.js';

/** One declared printer column of a custom resource version. */
export interface CustomColumn {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
  jsonPath: string;
}

type Step = { key: string } | { index: number } | { all: true } | { filterKey: string; filterValue: string };

/** Parses `.a.b[0]`, `.items[*].x` and `.conditions[?(@.type=="Ready")].status`; undefined when outside the subset. */
export function parseJsonPath(path: string): Step[] | undefined {
  const steps: Step[] = [];
  let rest = path.trim();
  if (rest.startsWith('{') && rest.endsWith('}')) rest = rest.slice(1, -1);
  if (rest.startsWith('$')) rest = rest.slice(1);
  while (rest.length > 0) {
    let m = /^\.([A-Za-z0-9_-]+)/.exec(rest);
    if (m?.[1] !== undefined) {
      steps.push({ key: m[1] });
      rest = rest.slice(m[0].length);
      continue;
    }
    m = /^\[(\d+)\]/.exec(rest);
    if (m?.[1] !== undefined) {
      steps.push({ index: Number(m[1]) });
      rest = rest.slice(m[0].length);
      continue;
    }
    m = /^\[\*\]/.exec(rest);
    if (m) {
      steps.push({ all: true });
      rest = rest.slice(m[0].length);
      continue;
    }
    m = /^\[\?\(@\.([A-Za-z0-9_-]+)\s*==\s*(?:"([^"]*)"|'([^']*)')\)\]/.exec(rest);
    if (m?.[1] !== undefined) {
      steps.push({ filterKey: m[1], filterValue: m[2] ?? m[3] ?? '' });
      rest = rest.slice(m[0].length);
      continue;
    }
    m = /^\['([^']+)'\]/.exec(rest);
    if (m?.[1] !== undefined) {
      steps.push({ key: m[1] });
      rest = rest.slice(m[0].length);
      continue;
    }
    return undefined;
  }
  return steps;
}

/** Every value `steps` reach in `root`, in document order (missing keys give nothing, as AllowMissingKeys). */
export function evaluateJsonPath(root: unknown, steps: readonly Step[]): unknown[] {
  let current: unknown[] = [root];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const v of current) {
      if ('key' in step) {
        if (isObject(v) && v[step.key] !== undefined) next.push(v[step.key]);
      } else if ('index' in step) {
        if (Array.isArray(v) && step.index < v.length) next.push(v[step.index]);
      } else if ('all' in step) {
        if (Array.isArray(v)) next.push(...(v as unknown[]));
        else if (isObject(v)) next.push(...Object.values(v));
      } else if (Array.isArray(v)) {
        for (const item of v as unknown[]) if (isObject(item) && String(item[step.filterKey]) === step.filterValue) next.push(item);
      }
    }
    current = next;
  }
  return current;
}

/** Go's jsonpath printing of one value in a string column. */
export function printed(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** kube's `cellForJSONValue`: the typed cell of a non-string column, null when the value does not fit. */
export function typedCell(type: string, value: unknown, now: number): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date':
      if (typeof value !== 'string') return null;
      return Number.isNaN(Date.parse(value)) ? '<invalid>' : since(value, now);
    default:
      return null;
  }
}

/** The printer of one custom resource version declaring `columns` (none: the Age column). */
export function customResourcePrinter(columns: readonly CustomColumn[]): TablePrinter {
  const declared: CustomColumn[] =
    columns.length > 0
      ? [...columns]
      : [{ name: 'Age', type: 'date', format: '', description: CREATION_TIMESTAMP_DESCRIPTION, priority: 0, jsonPath: '.metadata.creationTimestamp' }];
  const paths = declared.map((c) => parseJsonPath(c.jsonPath));
  const headers: TableColumn[] = [
    nameColumn(),
    ...declared.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format,
      description: c.description !== '' ? c.description : `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
      priority: c.priority,
    })),
  ];
  return {
    columns: headers,
    row(obj: Obj, now: number) {
      const cells: unknown[] = [nameOf(obj)];
      declared.forEach((c, i) => {
        const steps = paths[i];
        const results = steps === undefined ? [] : evaluateJsonPath(obj, steps);
        const first = results[0];
        if (first === undefined) cells.push(null);
        else if (c.type === 'string') cells.push(printed(first));
        else cells.push(typedCell(c.type, first, now));
      });
      return { cells };
    },
  };
}

const compiled = new WeakMap<readonly CustomColumn[], TablePrinter>();

/** customResourcePrinter of `columns`, compiled once per column list (a catalogue entry's). */
export function cachedCustomResourcePrinter(columns: readonly CustomColumn[]): TablePrinter {
  let printer = compiled.get(columns);
  if (printer === undefined) {
    printer = customResourcePrinter(columns);
    compiled.set(columns, printer);
  }
  return printer;
}
