import type { Response } from 'express';
import type { Obj } from '../api/object-util.js';
import { BODY_CHUNK_BYTES, ITEMS_PER_TURN, type Pacer } from './paced-writes.js';

/**
 * JSON bodies whose last field is a large array (a list's `items`, a Table's `rows`), written in
 * pieces with the event loop served between them (see paced-writes.ts). The bytes are those of
 * `JSON.stringify({...head, [key]: elements}, null, pretty ? 2 : undefined)` and a newline.
 */
export interface JsonArrayBody {
  /** The fields before the array, in order. */
  head: Obj;
  /** Name of the array, written last. */
  key: string;
  count: number;
  /** The i-th element (built when it is written, so only one piece of them is held at a time). */
  element(i: number): unknown;
  pretty: boolean;
}

/** Indentation of an element of a top-level array in kube's two-space pretty JSON. */
const ELEMENT_INDENT = '    ';

function elementText(value: unknown, pretty: boolean): string {
  // JSON.stringify writes no element as undefined inside an array: it writes null.
  const text = pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value);
  if (text === undefined) return 'null';
  // JSON strings hold no raw line break, so every break is one of the indentation's.
  return pretty ? ELEMENT_INDENT + text.replaceAll('\n', `\n${ELEMENT_INDENT}`) : text;
}

/** The whole body as one string (short arrays: one write). */
function wholeText(body: JsonArrayBody): string {
  const elements: unknown[] = [];
  for (let i = 0; i < body.count; i++) elements.push(body.element(i));
  const value = { ...body.head, [body.key]: elements };
  return body.pretty ? `${JSON.stringify(value, null, 2)}\n` : `${JSON.stringify(value)}\n`;
}

/**
 * Writes the body and ends the response. Arrays of at most ITEMS_PER_TURN elements are written in
 * one piece; longer ones in pieces of about BODY_CHUNK_BYTES, `pacer` giving the event loop its
 * turns (also between small elements).
 */
export async function writeJsonArrayBody(res: Response, body: JsonArrayBody, pacer: Pacer): Promise<void> {
  if (body.count <= ITEMS_PER_TURN) {
    res.end(wholeText(body));
    return;
  }
  const { pretty } = body;
  // The fields before the array are JSON.stringify's own text of them, with an empty array last.
  const head: Obj = { ...body.head };
  delete head[body.key];
  head[body.key] = [];
  const open = pretty ? JSON.stringify(head, null, 2) : JSON.stringify(head);
  // `[]}` (compact) or `[]\n}` (pretty) ends that text: keep up to and with the `[`.
  let piece = open.slice(0, open.length - (pretty ? 3 : 2));
  const separator = pretty ? ',\n' : ',';
  for (let i = 0; i < body.count; i++) {
    if (i > 0) piece += separator;
    else if (pretty) piece += '\n';
    piece += elementText(body.element(i), pretty);
    if (piece.length >= BODY_CHUNK_BYTES) {
      if (!(await pacer.write(res, piece))) return;
      piece = '';
    } else await pacer.turnAt(i + 1);
  }
  res.end(`${piece}${pretty ? '\n  ]\n}' : ']}'}\n`);
}
