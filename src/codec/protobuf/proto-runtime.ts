import { createRequire } from 'node:module';
import type protobuf from 'protobufjs';
import { readSchemaJson } from '../../schema/schema-files.js';

/**
 * The protobufjs view of `schema/protobuf.json` (every `generated.proto` message of the built-in API).
 *
 * protobufjs and the 280 KB descriptor are loaded on the first protobuf request, never at server start,
 * and synchronously so that the codec's API stays synchronous. A package's messages are turned into
 * protobufjs types when a message of it is first looked up, together with the packages its fields
 * refer to (a ConfigMap needs core/v1, meta/v1, runtime, resource and intstr, about a quarter of the
 * descriptor; building all 67 packages cost a first protobuf request about 90 ms). Every package is
 * resolved once loaded, so every `Field.resolvedType` of a returned message is set for the plan builder.
 */

type ProtobufModule = typeof protobuf;
/** A package's node of the descriptor JSON: its messages by name (and any sub-packages). */
type PackageJson = { nested?: Record<string, { fields?: Record<string, { type: string; keyType?: string }> } & PackageJson> };

let pbModule: ProtobufModule | undefined;
let root: protobuf.Root | undefined;
/** Package name (`k8s.io.api.core.v1`) to its descriptor node; packages are the nodes holding messages. */
let packages: Map<string, PackageJson> | undefined;
const loadedPackages = new Set<string>();

/**
 * The protobufjs module, required on first use. In the bundle (CommonJS), `require` is esbuild's, which
 * holds protobufjs in the bundle and evaluates it on this first call, with no file lookups or compiles
 * from node_modules (about 30 ms); tsc's ES modules have no `require` and load it from node_modules.
 */
export function protobufModule(): ProtobufModule {
  if (pbModule === undefined) {
    pbModule = (
      typeof require === 'function'
        ? // eslint-disable-next-line @typescript-eslint/no-require-imports -- bundled lazily by esbuild, see above
          require('protobufjs')
        : createRequire(import.meta.url)('protobufjs')
    ) as ProtobufModule;
  }
  return pbModule;
}

function packageIndex(): Map<string, PackageJson> {
  if (packages === undefined) {
    const index = new Map<string, PackageJson>();
    const walk = (node: PackageJson, name: string): void => {
      for (const [child, value] of Object.entries(node.nested ?? {})) {
        if (value.fields !== undefined) index.set(name, node);
        else walk(value, name === '' ? child : `${name}.${child}`);
      }
    };
    walk(readSchemaJson('protobuf.json') as PackageJson, '');
    packages = index;
  }
  return packages;
}

/** The package of the message (or of the type a field names, with or without a leading dot) NAME. */
function packageOf(name: string): string | undefined {
  const index = packageIndex();
  let at = name.lastIndexOf('.');
  while (at > 0) {
    const candidate = name.slice(name.startsWith('.') ? 1 : 0, at);
    if (index.has(candidate)) return candidate;
    at = name.lastIndexOf('.', at - 1);
  }
  return undefined;
}

/** Adds PKG and every package its fields refer to (transitively) to the root, then resolves them. */
function loadPackage(pkg: string): void {
  if (loadedPackages.has(pkg)) return;
  const r = (root ??= new (protobufModule().Root)());
  const added: protobuf.Namespace[] = [];
  const add = (name: string): void => {
    const json = packageIndex().get(name);
    if (json === undefined || loadedPackages.has(name)) return;
    loadedPackages.add(name);
    const messages: Record<string, protobuf.AnyNestedObject> = {};
    const refs = new Set<string>();
    for (const [message, value] of Object.entries(json.nested ?? {})) {
      if (value.fields === undefined) continue;
      messages[message] = value;
      for (const field of Object.values(value.fields)) {
        const ref = packageOf(field.type);
        if (ref !== undefined && ref !== name) refs.add(ref);
      }
    }
    added.push(r.define(name).addJSON(messages));
    for (const ref of refs) add(ref);
  };
  add(pkg);
  for (const ns of added) ns.resolveAll();
}

/** The fully-qualified name of every message in the descriptor (no leading dot), package by package. */
export function descriptorMessageNames(): string[] {
  const names: string[] = [];
  for (const [pkg, json] of packageIndex()) {
    for (const [message, value] of Object.entries(json.nested ?? {})) if (value.fields !== undefined) names.push(`${pkg}.${message}`);
  }
  return names;
}

/** Message types found by `lookupMessage`, by name: a lookup walks the descriptor's namespaces. */
const foundMessages = new Map<string, protobuf.Type>();

/** The message type with fully-qualified name NAME (no leading dot), or undefined if the descriptor lacks it. */
export function lookupMessage(name: string): protobuf.Type | undefined {
  const known = foundMessages.get(name);
  if (known !== undefined) return known;
  const pkg = packageOf(name);
  if (pkg === undefined) return undefined;
  loadPackage(pkg);
  const found = root?.lookup(name);
  if (!(found instanceof protobufModule().Type)) return undefined;
  foundMessages.set(name, found);
  return found;
}

/** The message type NAME, which the descriptor is known to contain (envelope and meta types). */
export function requireMessage(name: string): protobuf.Type {
  const t = lookupMessage(name);
  if (t === undefined) throw new Error(`protobuf descriptor lacks ${name}`);
  return t;
}

/** The fully-qualified name of a resolved type, without protobufjs's leading dot. */
export function fullName(type: protobuf.Type): string {
  return type.fullName.startsWith('.') ? type.fullName.slice(1) : type.fullName;
}
