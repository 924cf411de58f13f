import { constructFromEvents, EVENT_ID, getScalarValue, parseEvents, SCALAR_STYLE, YAMLException, type Event, type ScalarEvent } from 'js-yaml';
import { isUtf8 } from 'node:buffer';
import { FORBIDDEN_KEYS, ForbiddenKeyError, readJson } from './json-text.js';
import { GO_YAML_SCHEMA, GoFloat, GoUint, goKeyIdentity, jsonKey, jsonScalar, KeyError } from './yaml-go-scalars.js';

/**
 * The one YAML reader for request bodies. It turns YAML into the JSON value kube-apiserver would see
 * after its YAML-to-JSON step (YAML 1.1 scalars, as go-yaml v2 resolves them: `yes`/`on` are booleans,
 * `0777` is octal, `1e5` is a number, `1:30` and timestamps are text; see yaml-go-scalars.ts) and refuses, before building anything, what would let a small body cost a lot:
 * - nesting deeper than `maxDepth`, in the text or after aliases are expanded;
 * - alias expansion beyond go-yaml v2's budget (the decoder's ratio of alias-expanded nodes to all
 *   decoded nodes: 99% below 400,000 decodes, falling to 10% at 4,000,000), answered with its words,
 *   "document contains excessive aliasing", so the 483-byte "billion laughs" is refused in
 *   microseconds instead of expanding to gigabytes;
 * - an anchor whose value contains an alias to itself ("anchor 'm' value contains itself");
 * - forbidden keys (`__proto__`, ...), and keys that are not scalars.
 * Repeated keys are accepted (the last wins, as go-yaml's decoding into a map does) and reported as
 * go-yaml's strict mode words them, for fieldValidation.
 * Only the first document of a stream is read, as kube-apiserver reads it.
 */

/** A YAML body that cannot be read or turned into JSON. */
export class YamlDecodeError extends Error {
  /**
   * The error as kube's YAML-to-JSON step words it: go-yaml's own errors after "yaml: ", those of the
   * conversion to JSON (a NaN, a null key) as they are.
   */
  readonly kubeMessage: string;
  constructor(message: string, stage: 'read' | 'convert' = 'read') {
    super(message);
    this.name = 'YamlDecodeError';
    this.kubeMessage = stage === 'read' ? `yaml: ${message}` : message;
  }
}

export interface ParsedYaml {
  value: unknown;
  /** Repeated keys as go-yaml's strict decoding reports them: `line 5: key "name" already set in map`. */
  duplicates: string[];
}

export interface YamlReadOptions {
  /** Deepest nesting of mappings and sequences, counted after alias expansion. */
  maxDepth: number;
  /** false: never take the one-line JSON shortcut (tests compare both ways of reading). */
  jsonShortcut?: boolean;
}

const enum Kind {
  Map,
  Seq,
  Scalar,
  Alias,
}

interface YamlNode {
  kind: Kind;
  children: number[];
  /** For aliases: the node the anchor names. */
  target: number;
  /** Anchor or alias name, for messages. */
  name: string;
  /** Offset in the text, for line numbers. */
  offset: number;
}

/** go-yaml v2's alias budget: the share of decodes that may come from alias expansion. */
function allowedAliasRatio(decodes: number): number {
  const low = 400_000;
  const high = 4_000_000;
  if (decodes <= low) return 0.99;
  if (decodes >= high) return 0.1;
  return 0.99 - 0.89 * ((decodes - low) / (high - low));
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 0x0a) line++;
  return line;
}

function slice(text: string, start: number, end: number): string {
  return start >= 0 && end >= start ? text.slice(start, end) : '';
}

/** The events of the stream's first document (without the document event and its closing pop). */
function firstDocument(events: Event[]): Event[] {
  if (events[0]?.type !== EVENT_ID.DOCUMENT) return [];
  let depth = 0;
  for (let i = 1; i < events.length; i++) {
    const e = events[i];
    if (e.type === EVENT_ID.SEQUENCE || e.type === EVENT_ID.MAPPING) depth++;
    else if (e.type === EVENT_ID.POP) {
      if (depth === 0) return events.slice(0, i + 1);
      depth--;
    }
  }
  return events;
}

/** Builds the node graph of one document, resolving aliases to the nodes their anchors name. */
function buildNodes(text: string, events: Event[]): YamlNode[] {
  const nodes: YamlNode[] = [];
  const anchors = new Map<string, number>();
  const open: number[] = [];
  for (let i = 1; i < events.length; i++) {
    const e = events[i];
    if (e.type === EVENT_ID.POP) {
      open.pop();
      continue;
    }
    if (e.type === EVENT_ID.DOCUMENT) continue;
    const index = nodes.length;
    let node: YamlNode;
    if (e.type === EVENT_ID.ALIAS) {
      const name = slice(text, e.anchorStart, e.anchorEnd);
      const target = anchors.get(name);
      if (target === undefined) throw new YamlDecodeError(`unknown anchor '${name}' referenced`);
      node = { kind: Kind.Alias, children: [], target, name, offset: e.anchorStart };
    } else {
      const kind = e.type === EVENT_ID.MAPPING ? Kind.Map : e.type === EVENT_ID.SEQUENCE ? Kind.Seq : Kind.Scalar;
      const offset = e.type === EVENT_ID.SCALAR ? e.valueStart : e.start;
      const name = slice(text, e.anchorStart, e.anchorEnd);
      node = { kind, children: [], target: -1, name, offset };
      // An anchor names its node from the start, so an alias inside it refers to it (and is refused).
      if (name !== '') anchors.set(name, index);
    }
    nodes.push(node);
    const parent = open[open.length - 1];
    if (parent !== undefined) nodes[parent].children.push(index);
    if (node.kind === Kind.Map || node.kind === Kind.Seq) open.push(index);
  }
  return nodes;
}

const YAML11_TRUE = new Set(['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']);
const YAML11_FALSE = new Set(['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']);
const YAML11_NULL = new Set(['', '~', 'null', 'Null', 'NULL']);

/**
 * A mapping key as go-yaml v2 resolves it: its form in go-yaml's duplicate-key errors (`%#v`) and its
 * identity for finding repeats. Plain scalars that read as booleans, nulls or numbers become those
 * values (`y`, `on` and `true` are the same key; `1e5` and `100000` are not, a float and an integer),
 * anything else a quoted string.
 */
function keyForm(raw: string, plain: boolean): { form: string; identity: string } {
  if (plain) {
    if (YAML11_TRUE.has(raw)) return { form: 'true', identity: 'true' };
    if (YAML11_FALSE.has(raw)) return { form: 'false', identity: 'false' };
    if (YAML11_NULL.has(raw)) return { form: '<nil>', identity: '<nil>' };
    const number = goKeyIdentity(raw);
    if (number !== undefined) return number;
  }
  const form = JSON.stringify(raw);
  return { form, identity: form };
}

/**
 * Checks every mapping's keys: scalars only, none forbidden; repeated keys (as go-yaml resolves them)
 * are collected in go-yaml's strict wording. Merge keys (`<<`) may repeat keys of the merged mappings
 * without being reported.
 */
function checkKeys(text: string, events: Event[], nodes: YamlNode[]): string[] {
  const scalarEvents: ScalarEvent[] = [];
  for (const e of events) if (e.type === EVENT_ID.SCALAR) scalarEvents.push(e);
  const scalarIndex = new Map<number, ScalarEvent>();
  let s = 0;
  nodes.forEach((n, i) => {
    if (n.kind === Kind.Scalar) scalarIndex.set(i, scalarEvents[s++]);
  });
  const keyOf = (i: number): { raw: string; form: string; identity: string } => {
    let n = nodes[i];
    let index = i;
    if (n.kind === Kind.Alias) {
      index = n.target;
      n = nodes[index];
    }
    if (n.kind !== Kind.Scalar) throw new YamlDecodeError(`invalid map key: only scalar keys are supported (line ${lineOf(text, n.offset)})`);
    const event = scalarIndex.get(index) as ScalarEvent;
    const raw = getScalarValue(text, event);
    return { raw, ...keyForm(raw, event.style === SCALAR_STYLE.PLAIN && event.tagStart < 0) };
  };
  const duplicates: string[] = [];
  for (const n of nodes) {
    if (n.kind !== Kind.Map) continue;
    const seen = new Set<string>();
    for (let k = 0; k + 1 < n.children.length; k += 2) {
      const keyIndex = n.children[k];
      const { raw, form, identity } = keyOf(keyIndex);
      if (FORBIDDEN_KEYS.has(raw)) throw new ForbiddenKeyError(raw);
      if (raw === '<<') continue;
      if (seen.has(identity)) duplicates.push(`line ${lineOf(text, nodes[keyIndex].offset)}: key ${form} already set in map`);
      seen.add(identity);
    }
  }
  return duplicates;
}

/**
 * Replays go-yaml v2's decoding order without building anything: counts decodes and alias-expanded
 * decodes with its rule, refuses self-containing anchors, and measures nesting after expansion.
 */
function checkExpansion(nodes: YamlNode[], maxDepth: number): void {
  if (nodes.length === 0) return;
  let decodes = 1; // the document node
  let aliased = 0;
  let aliasDepth = 0;
  const active = new Set<number>();
  // Stack entries: a node to visit, or the end of an alias expansion / container.
  type Step = { visit: number } | { leaveAlias: number } | { leaveContainer: true };
  const steps: Step[] = [{ visit: 0 }];
  let depth = 0;
  while (steps.length > 0) {
    const step = steps.pop() as Step;
    if ('leaveAlias' in step) {
      aliasDepth--;
      active.delete(step.leaveAlias);
      continue;
    }
    if ('leaveContainer' in step) {
      depth--;
      continue;
    }
    const index = step.visit;
    const node = nodes[index];
    decodes++;
    if (aliasDepth > 0) aliased++;
    if (aliased > 100 && decodes > 1000 && aliased / decodes > allowedAliasRatio(decodes)) {
      throw new YamlDecodeError('document contains excessive aliasing');
    }
    if (node.kind === Kind.Alias) {
      if (active.has(index)) throw new YamlDecodeError(`anchor '${node.name}' value contains itself`);
      active.add(index);
      aliasDepth++;
      steps.push({ leaveAlias: index }, { visit: node.target });
      continue;
    }
    if (node.kind === Kind.Scalar) continue;
    depth++;
    if (depth > maxDepth) throw new YamlDecodeError(`exceeded max depth of ${maxDepth}`);
    steps.push({ leaveContainer: true });
    for (let c = node.children.length - 1; c >= 0; c--) steps.push({ visit: node.children[c] });
  }
}

/** A JSON number for a YAML float, refusing what JSON cannot carry (as Go's json.Marshal refuses it). */
function jsonNumber(n: number): number {
  if (Number.isFinite(n)) return n;
  throw new YamlDecodeError(`json: unsupported value: ${Number.isNaN(n) ? 'NaN' : n > 0 ? '+Inf' : '-Inf'}`, 'convert');
}

/**
 * Copies the constructed value into plain JSON values. Shared (aliased) parts become separate copies,
 * so later in-place changes to one occurrence never show in another; YAML-only values get the form
 * kube's YAML-to-JSON conversion gives them (timestamps as RFC 3339 text, binary as its bytes' text,
 * sets as maps of nulls). Recursion depth is bounded by the checked nesting.
 */
function toJson(value: unknown): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return jsonNumber(value);
  if (value instanceof GoFloat || value instanceof GoUint || typeof value === 'bigint') return jsonNumber(jsonScalar(value));
  if (value instanceof Date) return value.toISOString().replace('.000Z', 'Z');
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (Array.isArray(value)) return value.map(toJson);
  if (value instanceof Set) {
    const out: Record<string, unknown> = {};
    for (const k of value) out[keyText(k, null)] = null;
    return out;
  }
  if (value instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of value) out[keyText(k, v)] = toJson(v);
    return out;
  }
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = toJson(v);
    return out;
  }
  return null;
}

/** A key of a set or map as sigs.k8s.io/yaml writes it; throws what it refuses. */
function keyText(key: unknown, value: unknown): string {
  const text = jsonKey(key, value);
  if (text instanceof KeyError) throw new YamlDecodeError(text.message, 'convert');
  return text;
}

function parseFailure(err: unknown, maxDepth: number): YamlDecodeError {
  if (err instanceof YamlDecodeError) return err;
  if (err instanceof KeyError) return new YamlDecodeError(err.message, 'convert');
  if (err instanceof YAMLException) {
    const line = err.mark !== undefined ? `line ${err.mark.line + 1}: ` : '';
    if (/maxDepth/.test(err.reason)) return new YamlDecodeError(`${line}exceeded max depth of ${maxDepth}`);
    return new YamlDecodeError(`${line}${err.reason}`);
  }
  return new YamlDecodeError(err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err));
}

/**
 * The text of a YAML body, read as go-yaml reads bytes: UTF-16 when it starts with a UTF-16 byte
 * order mark, otherwise UTF-8 that must be valid and printable. Throws YamlDecodeError with
 * go-yaml's reader wording (`invalid leading UTF-8 octet`, `control characters are not allowed`).
 */
export function yamlBodyText(body: Buffer): string {
  if (body.length >= 2 && body[0] === 0xff && body[1] === 0xfe) return checkPrintable(body.subarray(2).toString('utf16le'));
  if (body.length >= 2 && body[0] === 0xfe && body[1] === 0xff) {
    const swapped = Buffer.from(body.subarray(2, body.length - (body.length % 2)));
    return checkPrintable(swapped.swap16().toString('utf16le'));
  }
  // Node's validator first (native); the byte walk only to word what is wrong.
  if (!isUtf8(body)) checkUtf8(body);
  const text = body.toString('utf8');
  return checkPrintable(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
}

function checkUtf8(body: Buffer): void {
  for (let i = 0; i < body.length;) {
    const b = body[i];
    const width = b < 0x80 ? 1 : (b & 0xe0) === 0xc0 ? 2 : (b & 0xf0) === 0xe0 ? 3 : (b & 0xf8) === 0xf0 ? 4 : 0;
    if (width === 0) throw new YamlDecodeError('invalid leading UTF-8 octet');
    if (i + width > body.length) throw new YamlDecodeError('incomplete UTF-8 octet sequence');
    let value = width === 1 ? b : width === 2 ? b & 0x1f : width === 3 ? b & 0x0f : b & 0x07;
    for (let k = 1; k < width; k++) {
      const t = body[i + k];
      if ((t & 0xc0) !== 0x80) throw new YamlDecodeError('invalid trailing UTF-8 octet');
      value = (value << 6) + (t & 0x3f);
    }
    const shortest = value < 0x80 ? 1 : value < 0x800 ? 2 : value < 0x10000 ? 3 : 4;
    if (width !== shortest) throw new YamlDecodeError('invalid length of a UTF-8 sequence');
    if ((value >= 0xd800 && value <= 0xdfff) || value > 0x10ffff) throw new YamlDecodeError('invalid Unicode character');
    i += width;
  }
}

/** go-yaml accepts tab, line breaks, printable ASCII, NEL and the printable Unicode planes only. */
function checkPrintable(text: string): string {
  if (/[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\ud800-\udbff\udc00-\udfff]/.test(text)) {
    throw new YamlDecodeError('control characters are not allowed');
  }
  return text;
}

/** Characters YAML reads differently from JSON outside strings (tab) or in them (YAML 1.1's line breaks). */
const NOT_ONE_LINE_JSON = /[\t\n\r\u0085\u2028\u2029]/;

/**
 * The same value as the YAML reader gives, read by the JSON reader (several times faster), for a
 * body that is one line of JSON: what client-go, kubectl and the other clients send as
 * `application/apply-patch+yaml` or `application/yaml`. Undefined (read it as YAML) unless nothing in
 * it could read differently: one line without tabs, an object, no repeated keys (their report names
 * YAML lines), no number that JSON and Go read differently (YAML makes `1e3` an integer, `1e400` text), nesting two levels inside the limit (the YAML reader counts the leaf scalar and
 * the document), no forbidden key and no syntax error (whose messages are the YAML reader's).
 */
function readOneLineJson(text: string, maxDepth: number): ParsedYaml | undefined {
  let start = 0;
  while (text.charCodeAt(start) === 0x20) start++;
  if (text.charCodeAt(start) !== 0x7b) return undefined;
  let end = text.length;
  for (let c = text.charCodeAt(end - 1); c === 0x0a || c === 0x0d || c === 0x20; c = text.charCodeAt(end - 1)) end--;
  const line = start === 0 && end === text.length ? text : text.slice(start, end);
  if (NOT_ONE_LINE_JSON.test(line)) return undefined;
  try {
    const parsed = readJson(line, { maxDepth: maxDepth - 2 });
    if (parsed.duplicates.length > 0 || parsed.numberLiterals !== undefined) return undefined;
    return { value: parsed.value, duplicates: [] };
  } catch {
    return undefined;
  }
}

/** Reads the first YAML document of `text`. Throws YamlDecodeError or ForbiddenKeyError. */
export function readYaml(text: string, options: YamlReadOptions): ParsedYaml {
  if (options.jsonShortcut !== false) {
    const json = readOneLineJson(text, options.maxDepth);
    if (json !== undefined) return json;
  }
  let events: Event[];
  try {
    events = firstDocument(parseEvents(text, { maxDepth: options.maxDepth }));
  } catch (err) {
    throw parseFailure(err, options.maxDepth);
  }
  if (events.length === 0) return { value: null, duplicates: [] };
  const nodes = buildNodes(text, events);
  const duplicates = checkKeys(text, events, nodes);
  checkExpansion(nodes, options.maxDepth);
  let constructed: unknown;
  try {
    [constructed] = constructFromEvents(events, { source: text, schema: GO_YAML_SCHEMA, json: true });
  } catch (err) {
    throw parseFailure(err, options.maxDepth);
  }
  return { value: toJson(constructed ?? null), duplicates };
}
