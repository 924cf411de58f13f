import { CachedDocument, sha512Hex } from './cached-document.js';
import { type JsonObject } from './json-value.js';
import { describedBaseDocument } from './meta-descriptions.js';
import { encodeOpenApiV2Protobuf } from './openapi-v2-protobuf.js';
import { buildV3Document, groupPathsByV3Key } from './openapi-v3-convert.js';
import { pruneUnservedPaths } from './served-paths.js';
import { isObject } from '../api/values.js';

/**
 * Paths and definitions that extend the built-in OpenAPI v2 document, e.g. what a custom resource
 * definition serves. Members are Swagger 2.0 objects keyed like the document's own `paths` and
 * `definitions`; a member with the name of a built-in one replaces it.
 */
export interface OpenApiContribution {
  paths?: JsonObject;
  definitions?: JsonObject;
  /** Shared parameters (`#/parameters/NAME`) the paths refer to. */
  parameters?: JsonObject;
}

/** An explicit v3 document, or a function building it (undefined: serve the derived one). */
export type V3Document = JsonObject | (() => JsonObject | undefined);

/**
 * The OpenAPI documents of one server: /openapi/v2 (JSON and gnostic protobuf) and the /openapi/v3
 * index and per-group-version documents.
 *
 * Nothing is read or computed until first asked for; every encoded form is then kept until a change
 * (a contribution or an explicit v3 document) invalidates it, so steady-state requests only copy bytes.
 * A change gives a new hash to each document whose content changed, which is what makes the
 * `?hash=` URLs of the v3 index safe to cache forever.
 *
 * Extension hooks, for custom resources and aggregated APIs:
 * - `setContribution(id, { paths, definitions })` adds Swagger 2.0 paths and definitions under an id
 *   of the caller's choosing (e.g. the CRD's name); the v2 document and every v3 document derived
 *   from the affected paths (for `/apis/GROUP/VERSION/...` paths, the key `apis/GROUP/VERSION`) change
 *   accordingly. `removeContribution(id)` undoes it.
 * - `setV3Document(key, doc)` serves an OpenAPI 3.0 document verbatim for KEY (`apis/GROUP/VERSION`),
 *   taking precedence over a derived one; `doc` may be a function, called when the document is first
 *   asked for (and again after a change), so that a burst of changes builds nothing until a client
 *   reads it. `removeV3Document(key)` undoes it.
 */
export class OpenApiService {
  private readonly contributions = new Map<string, OpenApiContribution>();
  private readonly explicitV3 = new Map<string, V3Document>();
  private baseBytes: Buffer | undefined;
  private merged: JsonObject | undefined;
  private lastModified = new Date();
  private v2JsonDoc: CachedDocument | undefined;
  private v2ProtobufDoc: CachedDocument | undefined;
  private v2ProtobufPending: Promise<CachedDocument> | undefined;
  private v3Keys: Map<string, string[]> | undefined;
  private readonly v3Docs = new Map<string, CachedDocument>();
  private v3IndexDoc: CachedDocument | undefined;

  /** Whether the built-in document lost paths to `servesPath` (then its bytes are not served as they are). */
  private pruned = false;

  /**
   * @param loadBase reads the built-in Swagger 2.0 document's JSON bytes (by default schema/openapi-v2.json
   *   with the meta types' descriptions of schema/meta-descriptions.json added).
   * @param servesPath which of the built-in document's paths this server serves (all by default); the
   *   others, and the definitions only they use, are left out (see `--runtime-config`).
   */
  constructor(
    private readonly loadBase: () => Buffer = describedBaseDocument,
    private readonly servesPath?: (path: string) => boolean,
  ) {}

  /** Adds or replaces the contribution ID; see the class comment. */
  setContribution(id: string, contribution: OpenApiContribution): void {
    this.contributions.set(id, contribution);
    this.invalidate(true);
  }

  /** Removes the contribution ID, if any. */
  removeContribution(id: string): void {
    if (this.contributions.delete(id)) this.invalidate(true);
  }

  /**
   * Serves DOC (an OpenAPI 3.0 document, or a function building it when first asked for) for the v3
   * key KEY, e.g. `apis/example.com/v1`. A function returning undefined serves the derived document.
   */
  setV3Document(key: string, doc: V3Document): void {
    this.explicitV3.set(key, doc);
    this.v3Docs.delete(key);
    this.invalidate(false);
  }

  /** Stops serving the explicit v3 document of KEY (a derived one, if any, is served again). */
  removeV3Document(key: string): void {
    if (!this.explicitV3.delete(key)) return;
    this.v3Docs.delete(key);
    this.invalidate(false);
  }

  private invalidate(v2Changed: boolean): void {
    this.lastModified = new Date();
    this.v3IndexDoc = undefined;
    if (!v2Changed) return;
    this.merged = undefined;
    this.v2JsonDoc = undefined;
    this.v2ProtobufDoc = undefined;
    this.v2ProtobufPending = undefined;
    this.v3Keys = undefined;
    this.v3Docs.clear();
  }

  private base(): Buffer {
    this.baseBytes ??= this.loadBase();
    return this.baseBytes;
  }

  /** The Swagger 2.0 document with every contribution merged in. */
  v2Document(): JsonObject {
    if (this.merged) return this.merged;
    const parsed: unknown = JSON.parse(this.base().toString('utf8'));
    if (!isObject(parsed)) throw new Error('schema/openapi-v2.json is not a JSON object');
    if (this.servesPath !== undefined) this.pruned = pruneUnservedPaths(parsed, this.servesPath);
    if (this.contributions.size > 0) {
      const paths: JsonObject = { ...(isObject(parsed['paths']) ? parsed['paths'] : {}) };
      const definitions: JsonObject = { ...(isObject(parsed['definitions']) ? parsed['definitions'] : {}) };
      const parameters: JsonObject = { ...(isObject(parsed['parameters']) ? parsed['parameters'] : {}) };
      let addsParameters = false;
      for (const c of this.contributions.values()) {
        Object.assign(paths, c.paths ?? {});
        Object.assign(definitions, c.definitions ?? {});
        if (c.parameters !== undefined && Object.keys(c.parameters).length > 0) {
          Object.assign(parameters, c.parameters);
          addsParameters = true;
        }
      }
      parsed['paths'] = sortKeys(paths);
      parsed['definitions'] = sortKeys(definitions);
      if (addsParameters) parsed['parameters'] = sortKeys(parameters);
    }
    this.merged = parsed;
    return parsed;
  }

  /** /openapi/v2 as JSON. Without contributions or pruned paths these are the schema file's bytes as they are. */
  v2Json(): CachedDocument {
    if (!this.v2JsonDoc) {
      const doc = this.v2Document();
      const bytes = this.contributions.size === 0 && !this.pruned ? this.base() : Buffer.from(JSON.stringify(doc));
      this.v2JsonDoc = CachedDocument.of(bytes, this.lastModified);
    }
    return this.v2JsonDoc;
  }

  /**
   * /openapi/v2 as gnostic protobuf; its hash (and so ETag) is the JSON form's, as in kube-apiserver.
   * Concurrent first requests share one encoding.
   */
  async v2Protobuf(): Promise<CachedDocument> {
    if (this.v2ProtobufDoc) return this.v2ProtobufDoc;
    if (!this.v2ProtobufPending) {
      const pending = this.encodeV2Protobuf();
      this.v2ProtobufPending = pending;
      // Cleared whatever the outcome, so a failure is retried by the next request.
      pending.then(
        () => this.clearPending(pending),
        () => this.clearPending(pending),
      );
    }
    return this.v2ProtobufPending;
  }

  private clearPending(pending: Promise<CachedDocument>): void {
    if (this.v2ProtobufPending === pending) this.v2ProtobufPending = undefined;
  }

  private async encodeV2Protobuf(): Promise<CachedDocument> {
    const json = this.v2Json();
    const doc = this.v2Document();
    const bytes = Buffer.from(await encodeOpenApiV2Protobuf(doc));
    const encoded = new CachedDocument(bytes, json.hash, json.lastModified);
    // A change while encoding made this result stale: serve it to its requests, but do not keep it.
    if (this.v2JsonDoc === json) this.v2ProtobufDoc = encoded;
    return encoded;
  }

  /** The v2 paths the v3 document KEY is derived from (undefined when the v2 document has none). */
  derivedPaths(key: string): string[] | undefined {
    return this.derivedKeys().get(key);
  }

  private derivedKeys(): Map<string, string[]> {
    this.v3Keys ??= groupPathsByV3Key(this.v2Document());
    return this.v3Keys;
  }

  /** Every served v3 key (`api/v1`, `apis/apps/v1`, `apis/apps`, `version`, ...), sorted. */
  v3KeyList(): string[] {
    const keys = new Set([...this.derivedKeys().keys(), ...this.explicitV3.keys()]);
    return [...keys].sort();
  }

  /** The v3 document of KEY as JSON, or undefined when KEY is not served. */
  v3Document(key: string): CachedDocument | undefined {
    const cached = this.v3Docs.get(key);
    if (cached) return cached;
    const explicit = this.explicitV3.get(key);
    let doc: JsonObject | undefined = typeof explicit === 'function' ? explicit() : explicit;
    if (doc === undefined) {
      const paths = this.derivedKeys().get(key);
      if (paths === undefined) return undefined;
      doc = buildV3Document(this.v2Document(), paths);
    }
    const built = CachedDocument.of(Buffer.from(JSON.stringify(doc)), this.lastModified);
    this.v3Docs.set(key, built);
    return built;
  }

  /**
   * The /openapi/v3 index: `{"paths": {KEY: {"serverRelativeURL": "/openapi/v3/KEY?hash=HASH"}}}`.
   * Building it hashes every v3 document, so the first call builds them all.
   */
  v3Index(): CachedDocument {
    if (this.v3IndexDoc) return this.v3IndexDoc;
    const paths: JsonObject = {};
    for (const key of this.v3KeyList()) {
      const doc = this.v3Document(key);
      if (doc) paths[key] = { serverRelativeURL: v3DocumentUrl(key, doc.hash) };
    }
    const bytes = Buffer.from(JSON.stringify({ paths }));
    this.v3IndexDoc = new CachedDocument(bytes, sha512Hex(bytes), this.lastModified);
    return this.v3IndexDoc;
  }
}

/** The server-relative URL of the v3 document KEY at version HASH, as kube-openapi builds it. */
export function v3DocumentUrl(key: string, hash: string): string {
  const path = `/openapi/v3/${key}`.replace(/\/+/g, '/');
  return `${encodeURI(path)}?hash=${encodeURIComponent(hash)}`;
}

function sortKeys(obj: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(obj).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

const shared = new Map<string, OpenApiService>();

/**
 * The process-wide service of one set of served built-in paths (`key` names the set, e.g. the
 * `--runtime-config` text; `servesPath` is used when the set is first asked for): the one
 * `openapiRouter()` serves by default has every path. Code that registers custom resources adds
 * their contributions to the service of its server.
 */
export function sharedOpenApiService(key = '*', servesPath?: (path: string) => boolean): OpenApiService {
  let service = shared.get(key);
  if (service === undefined) {
    service = new OpenApiService(undefined, servesPath);
    shared.set(key, service);
  }
  return service;
}
