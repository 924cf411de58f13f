import { ApiError, type StatusCause } from '../api/errors.js';
import { goQuote } from '../codec/go-quote.js';
import type { ApplyConflict } from './apply-configuration.js';
import type { FieldPath } from './field-set.js';
import type { PathElement } from './path-element.js';
import { stringField } from '../api/values.js';

/** structured-merge-diff's value.ToString: Go's `%v` for numbers and booleans, `%q` for strings. */
function valueString(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(valueString).join(',')}]`;
  return Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `${k}=${valueString(x)}`)
    .join('');
}

function elementString(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `.${pe.name}`;
    case 'key':
      return `[${pe.fields.map(([k, v]) => `${k}=${valueString(v)}`).join(',')}]`;
    case 'value':
      return `[=${valueString(pe.value)}]`;
    case 'index':
      return `[${pe.index}]`;
  }
}

/** A field path as structured-merge-diff's Path.String writes it: `.spec.containers[name="c"].image`. */
export function pathString(path: FieldPath): string {
  return path.map(elementString).join('');
}

/** kube's printManager: `"name"`, with its subresource, and `using <apiVersion>` for Update entries. */
function printManager(id: string): string {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(id) as Record<string, unknown>;
  } catch {
    return goQuote(id);
  }
  let out = goQuote(stringField(parsed, 'manager'));
  if (stringField(parsed, 'subresource') !== '') out = `${out} with subresource ${goQuote(stringField(parsed, 'subresource'))}`;
  if (stringField(parsed, 'operation') === 'Update') return `${out} using ${stringField(parsed, 'apiVersion')}`;
  return out;
}

/**
 * The 409 kube answers an apply with conflicts (NewConflictError): one `FieldManagerConflict`
 * cause per field, and the message listing them, one line per manager sorted by identifier when
 * there are several.
 */
export function applyConflictStatus(conflicts: readonly ApplyConflict[]): ApiError {
  const sorted = [...conflicts].sort((a, b) => (a.manager < b.manager ? -1 : a.manager > b.manager ? 1 : 0));
  const causes: StatusCause[] = sorted.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${printManager(c.manager)}`,
    field: pathString(c.path),
  }));
  let message: string;
  const first = sorted[0];
  if (sorted.length === 1 && first !== undefined) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(first.manager)}: ${pathString(first.path)}`;
  } else {
    const lines: string[] = [];
    let current: string | undefined;
    for (const c of sorted) {
      if (c.manager !== current) {
        lines.push(`conflicts with ${printManager(c.manager)}:`);
        current = c.manager;
      }
      lines.push(`- ${pathString(c.path)}`);
    }
    message = `Apply failed with ${sorted.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError(409, 'Conflict', message, { causes });
}
