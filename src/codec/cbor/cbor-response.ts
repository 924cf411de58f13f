import type { Response } from 'express';
import { readJson } from '../json-text.js';
import { compareKeys, encodeCbor, fieldsOf, SELF_DESCRIBED, type NumberLiteral } from './cbor-encoder.js';
import { fieldKindsFor, type FieldKind } from './field-kinds.js';
import { JsonCborWriter, leadingType } from './json-to-cbor.js';
import { objectWithoutTypeMeta, withoutTypeMeta } from '../untyped-list-items.js';
import { isObject, type Obj } from '../../api/object-util.js';

/**
 * CBOR response bodies: objects from their stored JSON text or built values, and collections written
 * item by item (each item encoded and sent before the next is parsed, waiting for the socket to
 * drain), so a list's memory stays bounded by one chunk whatever its size.
 */

/** Stored JSON with integers beyond 2^53 keeps their literal text, which CBOR writes exactly. */
const LONG_DIGITS = /\d{16}/;

function parsed(json: string): { value: Obj; literal: NumberLiteral | undefined } {
  if (!LONG_DIGITS.test(json)) return { value: JSON.parse(json) as Obj, literal: undefined };
  const p = readJson(json, { maxDepth: 100_000 });
  const table = p.numberLiterals;
  return { value: p.value as Obj, literal: table ? (c, k) => table.get(c)?.get(k) : undefined };
}

const shared = new JsonCborWriter(64 * 1024);

/**
 * One object (stored JSON text) as a CBOR document. Objects that start with their kind and
 * apiVersion, as stored ones do, are transcoded from the text; others are parsed first.
 */
export function encodeCborJson(json: string): Buffer {
  const type = leadingType(json);
  if (type === undefined) {
    const { value, literal } = parsed(json);
    return encodeCbor(value, fieldsOf(value), literal);
  }
  // One writer serves every call (encoding never re-enters itself); take() copies the result out.
  const w = shared;
  w.reset();
  w.raw(SELF_DESCRIBED);
  w.json(json, fieldKindsFor(type.apiVersion, type.kind));
  return w.take();
}

/** A built value (Status, PartialObjectMetadata, ...) as a CBOR document. */
export function encodeCborDocument(value: Obj): Buffer {
  return encodeCbor(value, fieldsOf(value));
}

interface Envelope {
  kind: string;
  apiVersion: string;
  metadata: Obj;
}

const CHUNK = 64 * 1024;

/**
 * Writes a list: the envelope's keys in kube's order with `items` as a definite-length array whose
 * elements are encoded one at a time. `metadataOnly` writes a PartialObjectMetadataList (an empty one
 * has `items: null`, as kube's nil slice). `send` writes one piece of a large body and resolves
 * when the next may follow, false when the client went away (src/codec/paced-writes.ts).
 */
export async function writeCborList(
  res: Response,
  envelope: Envelope,
  items: string[],
  metadataOnly: boolean,
  send: (piece: Buffer) => Promise<boolean>,
  typedItems = true,
): Promise<void> {
  const head: Obj = metadataOnly
    ? { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: envelope.metadata, items: null }
    : { ...envelope, items: null };
  const keys = Object.keys(head).sort(compareKeys);
  const w = new JsonCborWriter(CHUNK + 1024);
  w.raw(SELF_DESCRIBED);
  w.head(5, keys.length);
  for (const k of keys) {
    w.string(k);
    if (k !== 'items') {
      w.value(head[k]);
      continue;
    }
    if (metadataOnly && items.length === 0) {
      w.value(null);
      continue;
    }
    w.head(4, items.length);
    // Items of a typed list carry no kind: their []byte fields come from the list kind's schema.
    const listed = fieldKindsFor(envelope.apiVersion, envelope.kind)?.fields.get('items');
    const itemFields: FieldKind | undefined = typeof listed === 'object' ? listed.each : undefined;
    for (const item of items) {
      // Each item is transcoded from its stored text (see json-to-cbor.ts); an item that does not
      // start with its type is parsed first.
      const type = metadataOnly ? undefined : leadingType(item);
      if (metadataOnly) w.jsonPartialMetadata(item);
      else if (type !== undefined) w.json(typedItems ? item : withoutTypeMeta(item), fieldKindsFor(type.apiVersion, type.kind) ?? itemFields);
      else {
        const { value, literal } = parsed(item);
        const written = typedItems || !isObject(value) ? value : objectWithoutTypeMeta(value);
        w.value(written, fieldsOf(value) ?? itemFields, literal);
      }
      if (w.length >= CHUNK) {
        if (!(await send(w.take()))) return;
      }
    }
  }
  res.end(w.take());
}
