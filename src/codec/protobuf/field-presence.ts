import { readFileSync } from 'node:fs';
import { schemaPath } from '../../schema/schema-files.js';

/**
 * schema/go-field-presence.txt says which proto fields of the Kubernetes API types are Go pointers and
 * which are non-pointer scalars that Go's JSON encoder always writes (no `omitempty`). It is generated
 * by reflecting over the k8s.io/api, apimachinery, apiextensions-apiserver and kube-aggregator v0.36 Go
 * types (`go run . presence` in tools/goldens; `npm run gen:goldens` regenerates it): neither
 * protobuf.json nor the OpenAPI document carries this fact.
 *
 * Why it matters: Go writes non-pointer scalars to protobuf even when zero, so a zero on the wire is
 * ambiguous. For a pointer field (`replicas`, `automountServiceAccountToken`, `maxUnavailable`) the zero
 * is meaningful and must survive into JSON; for an `omitempty` non-pointer field it must be dropped, as
 * Go's JSON output drops it.
 *
 * Format: `@<proto package>` starts a package; each following line is `<Message> <field>:<code>...` where
 * code `p` = pointer and `a` = always written by Go's JSON. Fields not listed are non-pointer
 * `omitempty` fields, slices, maps or structs.
 */
const PRESENCE_FILE = 'go-field-presence.txt';

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
  for (const line of readFileSync(schemaPath(PRESENCE_FILE), 'utf8').split('\n')) {
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
