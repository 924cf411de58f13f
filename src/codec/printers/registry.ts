/**
 * Looks up the Table printer of a built-in type, by served resource or by kind. Types without a
 * printer (custom resources, roles, limit ranges, CRDs, ...) get undefined and print with the
 * default Name/Created At columns, as in kube-apiserver.
 */
import { accessPrinters } from './access.js';
import { appsPrinters } from './apps.js';
import { autoscalingPrinters } from './autoscaling.js';
import { batchPrinters } from './batch.js';
import { controlPlanePrinters } from './control-plane.js';
import { corePrinters } from './core.js';
import { eventPrinters } from './events.js';
import { networkingPrinters } from './networking.js';
import { podPrinter } from './pod.js';
import { storagePrinters } from './storage.js';
import { customPrinterFor } from './custom-columns.js';
import type { Obj, PrinterEntry, TablePrinter } from './types.js';

const ENTRIES: PrinterEntry[] = [
  { group: '', resource: 'pods', kind: 'Pod', printer: podPrinter },
  ...corePrinters,
  ...eventPrinters,
  ...appsPrinters,
  ...batchPrinters,
  ...networkingPrinters,
  ...storagePrinters,
  ...autoscalingPrinters,
  ...accessPrinters,
  ...controlPlanePrinters,
];

const byResource = new Map<string, TablePrinter>(ENTRIES.map((e) => [`${e.group}/${e.resource}`, e.printer]));
const byKind = new Map<string, TablePrinter>(ENTRIES.map((e) => [`${e.group}/${e.kind}`, e.printer]));

/** The printer of a served resource (`''`, `'pods'`; `'apps'`, `'deployments'`), if kube has one. */
export function tableFor(group: string, resource: string): TablePrinter | undefined {
  return byResource.get(`${group}/${resource}`);
}

/** The printer of a kind in a group, if kube has one. */
export function tableForKind(group: string, kind: string): TablePrinter | undefined {
  return byKind.get(`${group}/${kind}`);
}

/** The group of an `apiVersion` (`''` for `v1`). */
export function groupOfApiVersion(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** The printer for an object, from its `apiVersion` and `kind`. */
export function printerForObject(obj: Obj): TablePrinter | undefined {
  const { apiVersion, kind } = obj;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return undefined;
  return customPrinterFor(apiVersion, kind) ?? tableForKind(groupOfApiVersion(apiVersion), kind);
}

/** The printer for a list envelope (`apiVersion`, `kind` ending in `List`). */
export function printerForList(apiVersion: string, listKind: string): TablePrinter | undefined {
  const kind = listKind.endsWith('List') ? listKind.slice(0, -'List'.length) : listKind;
  return customPrinterFor(apiVersion, kind) ?? tableForKind(groupOfApiVersion(apiVersion), kind);
}

/** Every (group, resource) with a printer, for tests and documentation. */
export function printedResources(): Array<{ group: string; resource: string; kind: string }> {
  return ENTRIES.map(({ group, resource, kind }) => ({ group, resource, kind }));
}
