import { createRequire } from 'node:module';
import type protobuf from 'protobufjs';
import { readSchemaJson } from '../../schema/schema-files.js';

/**
 * The protobufjs view of `schema/protobuf.json` (every `generated.proto` message of the built-in API).
 *
 * protobufjs and the 280 KB descriptor are loaded on the first protobuf request, never at server start,
 * and synchronously so that the codec's API stays synchronous. The root is fully resolved once, so
 * every `Field.resolvedType` is set for the plan builder.
 */

type ProtobufModule = typeof protobuf;

let pbModule: ProtobufModule | undefined;
let root: protobuf.Root | undefined;

/** The protobufjs module, required on first use. */
export function protobufModule(): ProtobufModule {
  if (pbModule === undefined) {
    const require = createRequire(import.meta.url);
    pbModule = require('protobufjs') as ProtobufModule;
  }
  return pbModule;
}

function descriptorRoot(): protobuf.Root {
  if (root === undefined) {
    const r = protobufModule().Root.fromJSON(readSchemaJson('protobuf.json') as protobuf.INamespace);
    r.resolveAll();
    root = r;
  }
  return root;
}

/** The message type with fully-qualified name NAME (no leading dot), or undefined if the descriptor lacks it. */
export function lookupMessage(name: string): protobuf.Type | undefined {
  const found = descriptorRoot().lookup(name);
  return found instanceof protobufModule().Type ? found : undefined;
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
