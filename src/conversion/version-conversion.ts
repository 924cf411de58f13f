/**
 * Version conversion at the storage boundary. Each built-in kind served in versions whose objects
 * differ has one storage ("hub") version and a pair of functions to and from it; every other kind is
 * stored in whichever version wrote it and served in another by relabelling `apiVersion` only (its
 * versions share one schema).
 *
 * Handlers work on objects in the request's version and call:
 * - `toStorageVersion` on the object they are about to store (create, update, patch),
 * - `servedObject` on the stored object a patch or update applies to,
 * - `servedJsonFor` on what they answer (get, list, watch events, write responses), which builds
 *   metadata-only answers from the stored object, as kube builds them from its internal one.
 * Converted objects come out canonical (kind, apiVersion, metadata first) and in the shape Go's
 * encoder gives the target version's type; serving never throws on what storage holds.
 */
import { withReadDefaultsOf } from '../crd/cr-read-defaults.js';
import type { CustomResourceFacts } from '../catalog/custom-resource-facts.js';
import { canonicalize, withApiVersion, type Obj } from '../api/object-util.js';
import { shapeStoredObject } from '../codec/go-shape.js';
import { logger } from '../logging/logger.js';
import { coreEventAsStored, coreEventToEventsV1, eventsV1ToCoreEvent } from './event-conversion.js';
import { hpaV1ToV2, hpaV2ToV1, hpaV2ToV2 } from './hpa-conversion.js';

/** How the objects of one kind move between its served versions and its storage version. */
export interface KindConversion {
  kind: string;
  /** The `apiVersion` objects are stored in. */
  storageVersion: string;
  /** Every `apiVersion` serving the kind, the storage version included. */
  versions: readonly string[];
  /** `obj`, an object of `fromVersion`, in the storage version. */
  toStorage(obj: Obj, fromVersion: string): Obj;
  /** `obj`, an object of the storage version, in `toVersion`. */
  fromStorage(obj: Obj, toVersion: string): Obj;
}

const CONVERSIONS: readonly KindConversion[] = [
  {
    kind: 'HorizontalPodAutoscaler',
    storageVersion: 'autoscaling/v2',
    versions: ['autoscaling/v2', 'autoscaling/v1'],
    toStorage: (obj, from) => (from === 'autoscaling/v1' ? hpaV1ToV2(obj) : hpaV2ToV2(obj)),
    fromStorage: (obj, to) => (to === 'autoscaling/v1' ? hpaV2ToV1(obj) : hpaV2ToV2(obj)),
  },
  {
    kind: 'Event',
    storageVersion: 'v1',
    versions: ['v1', 'events.k8s.io/v1'],
    toStorage: (obj, from) => (from === 'events.k8s.io/v1' ? eventsV1ToCoreEvent(obj) : coreEventAsStored(obj)),
    fromStorage: (obj, to) => (to === 'events.k8s.io/v1' ? coreEventToEventsV1(obj) : obj),
  },
];

/** The conversion of `kind` that serves `apiVersion`, if the kind has one. */
export function conversionFor(kind: string, apiVersion: string): KindConversion | undefined {
  return CONVERSIONS.find((c) => c.kind === kind && c.versions.includes(apiVersion));
}

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** Canonical order and Go's shape for `kind` in `apiVersion`. */
function finish(obj: Obj, kind: string, apiVersion: string): Obj {
  const out = canonicalize(obj, kind, apiVersion);
  shapeStoredObject(out, { ...splitApiVersion(apiVersion), kind });
  return out;
}

/** The `apiVersion` objects of `info`'s kind and version are stored in, when the kind converts. */
export function storageVersionOf(info: { group: string; version: string; kind: string; custom?: boolean }): string | undefined {
  if (info.custom === true) return undefined;
  return conversionFor(info.kind, info.group ? `${info.group}/${info.version}` : info.version)?.storageVersion;
}

/**
 * `info` moved to its storage version when its kind converts and the request's version is another
 * (for the strategy steps kube runs on its internal object), otherwise undefined.
 */
export function storageInfoOf<T extends { group: string; version: string; kind: string; custom?: boolean }>(info: T): T | undefined {
  const storageVersion = storageVersionOf(info);
  const own = info.group ? `${info.group}/${info.version}` : info.version;
  if (storageVersion === undefined || storageVersion === own) return undefined;
  return { ...info, ...splitApiVersion(storageVersion) };
}

/**
 * The object to store for `obj`, an object of `info`'s kind and version (custom resources and kinds
 * without a conversion are returned as they are).
 */
export function toStorageVersion(obj: Obj, info: { group: string; version: string; kind: string; custom?: boolean }): Obj {
  if (info.custom === true) return obj;
  const from = info.group ? `${info.group}/${info.version}` : info.version;
  const conversion = conversionFor(info.kind, from);
  if (conversion === undefined) return obj;
  return finish(conversion.toStorage(obj, from), info.kind, conversion.storageVersion);
}

/** A stored object (parsed) as served at `apiVersion`. */
export function servedObject(stored: Obj, apiVersion: string): Obj {
  const kind = typeof stored.kind === 'string' ? stored.kind : '';
  const from = typeof stored.apiVersion === 'string' ? stored.apiVersion : '';
  if (from === apiVersion) return stored;
  const conversion = conversionFor(kind, from);
  if (conversion === undefined || !conversion.versions.includes(apiVersion)) return { ...stored, apiVersion };
  try {
    // An object kept in another served version (written before its kind converted) goes through the hub.
    const hub = from === conversion.storageVersion ? stored : conversion.toStorage(stored, from);
    return hub.apiVersion === apiVersion ? hub : finish(conversion.fromStorage(hub, apiVersion), kind, apiVersion);
  } catch (err) {
    // Serving must not fail on what storage holds (a throw here would end a watch stream for every
    // watcher of the type): the object goes out relabelled, and the fault is logged to be fixed.
    logger.error('version conversion failed', { kind, from, to: apiVersion, error: err });
    return { ...stored, apiVersion };
  }
}

const HEAD = /^\{"kind":"([^"\\]*)","apiVersion":"([^"\\]*)"/;

/**
 * Stored JSON as served at `apiVersion`. Objects already in that version, and kinds whose versions
 * share one schema, are relabelled without parsing; the others are converted. Custom resources get
 * their version's read defaults from `facts`.
 */
function servedJson(facts: CustomResourceFacts, json: string, apiVersion: string): string {
  const head = HEAD.exec(json);
  if (head === null) return json;
  if (head[2] === apiVersion) return withReadDefaultsOf(facts, json, apiVersion, head[1]);
  const conversion = conversionFor(head[1], head[2]);
  if (conversion === undefined || !conversion.versions.includes(apiVersion))
    return withReadDefaultsOf(facts, withApiVersion(json, apiVersion), apiVersion, head[1]);
  return JSON.stringify(servedObject(JSON.parse(json) as Obj, apiVersion));
}

/**
 * The JSON an answer in `representation` is built from. Metadata-only answers (PartialObjectMetadata
 * and Tables that do not embed the whole object) come from the stored object, as kube builds them
 * from its internal object, in which an autoscaling/v1 HPA's round-trip annotations are no metadata
 * and printers see every metric; full objects are served at `apiVersion` (custom resources with the
 * read defaults of the version's schema in `facts`).
 */
export function servedJsonFor(facts: CustomResourceFacts, json: string, apiVersion: string, representation: string, includeObject = 'Metadata'): string {
  const metadataOnly =
    representation === 'PartialObjectMetadata' || representation === 'PartialObjectMetadataList' || (representation === 'Table' && includeObject !== 'Object');
  return metadataOnly ? json : servedJson(facts, json, apiVersion);
}
