import { GO_FIELD_PRESENCE } from './go-field-presence.js';

/**
 * How Go treats a field's zero value, which decides whether a zero read from the wire reaches JSON:
 * - `pointer`: the Go field is a pointer, so anything on the wire was set on purpose (keep zeros);
 * - `always`: a non-pointer scalar without `omitempty`, which Go's JSON always writes (keep zeros);
 * - `omitempty`: everything else (drop zero scalars, empty lists, maps and structs).
 */
export type FieldPresence = 'pointer' | 'always' | 'omitempty';

let table: Map<string, Map<string, FieldPresence>> | undefined;

function load(): Map<string, Map<string, FieldPresence>> {
  const out = new Map<string, Map<string, FieldPresence>>();
  let pkg = '';
  for (const line of GO_FIELD_PRESENCE.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('@')) {
      pkg = line.slice(1);
      continue;
    }
    const [message, ...entries] = line.split(' ');
    if (message === undefined) continue;
    const fields = new Map<string, FieldPresence>();
    for (const entry of entries) {
      const sep = entry.lastIndexOf(':');
      const code = entry.slice(sep + 1);
      fields.set(entry.slice(0, sep), code === 'p' ? 'pointer' : code === 'a' ? 'always' : 'omitempty');
    }
    out.set(`${pkg}.${message}`, fields);
  }
  return out;
}

/** The presence class of proto field FIELD of message MESSAGE (fully-qualified, no leading dot). */
export function fieldPresence(message: string, field: string): FieldPresence {
  table ??= load();
  return table.get(message)?.get(field) ?? 'omitempty';
}
