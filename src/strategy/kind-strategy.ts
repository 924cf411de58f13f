import type { StatusCause } from '../api/errors.js';
import type { Obj } from '../api/object-util.js';
import type { User } from '../api/user.js';
import type { UpdateMetaPasses } from '../validation/object-meta.js';

/**
 * One kind's written contract, after kube-apiserver's registry strategies: what a create and an update
 * of the kind reset and keep, its defaults, its validation and immutable fields, and how its deletes
 * and status writes behave. Every entry is optional; what a kind leaves out is the generic behaviour
 * described on each field. The write path (src/store/) reads these facts and nothing else per kind.
 */
export interface KindStrategy {
  /** kube's defaulting (`SetDefaults_*`) for an object written in `version` of the resource. Default: none. */
  defaults?: (obj: Obj, version: string) => void;

  /**
   * kube's validation of the kind, immutable fields included: `old` is undefined on create, and
   * `subresource` names the subresource written ('' for the object, 'status', ...). Default: only
   * object metadata is validated.
   */
  validate?: (obj: Obj, old: Obj | undefined, subresource: string) => StatusCause[];

  /**
   * The metadata validators kube's update validation of the kind runs again (each adds its causes
   * once more). Default: each metadata problem is reported once.
   */
  updateMetadataPasses?: UpdateMetaPasses;

  /** The group kube's Invalid status names when another group's store validates the kind. Default: the kind's group. */
  errorGroup?: string;

  /**
   * Whether `metadata.generation` is set to 1 on create and bumped by changes outside metadata and
   * status. Default: kinds with a status subresource (and every custom resource) track it.
   */
  tracksGeneration?: boolean;

  /** Whether a change of the labels bumps the generation too (EndpointSlices). Default: false. */
  labelsCountAsSpec?: boolean;

  /**
   * The status a created object starts with, for kinds with a status subresource: a function of the
   * object, or 'keep' to store the status sent. Default: the sent status is dropped.
   */
  createStatus?: 'keep' | ((obj: Obj) => Obj);

  /**
   * Kind-specific preparation of a create, after defaults and the status reset (kube's PrepareForCreate);
   * it may return warnings, sent whether or not the create then validates.
   */
  prepareForCreate?: (obj: Obj) => string[] | void;

  /** The part of kube's PrepareForCreate that records who sent the create (a CSR's requester). Default: none. */
  recordRequester?: (obj: Obj, user: User) => void;

  /**
   * kube's WarningsOnCreate (`old` undefined) and WarningsOnUpdate of writes of the object itself (and
   * of its scale), sent as `Warning` headers once the write has validated. Default: none.
   */
  warnings?: (obj: Obj, old: Obj | undefined) => string[];

  /** kube's WarningsOnUpdate of the status strategy, for writes of the `status` subresource. Default: none. */
  statusWarnings?: (obj: Obj) => string[];

  /** Kind-specific preparation of an update of the object, after defaults and after the stored status was kept (PrepareForUpdate). */
  prepareForUpdate?: (next: Obj, old: Obj) => void;

  /** Whether a PUT of a missing object creates it (kube's AllowCreateOnUpdate). Default: false. */
  createOnUpdate?: boolean;

  /**
   * What of the metadata a status write may change: `true` labels and annotations, `'all'` all of it
   * but the system fields (uid, creationTimestamp, deletion, generation), as kube's status strategies
   * that reset only the spec; `'all-but-labels'` likewise but the labels stay (Deployments). Default:
   * only the status changes.
   */
  statusUpdatesMetadata?: boolean | 'all' | 'all-but-labels';

  /**
   * kube's Canonicalize for a status write, which runs it after every update, subresources included
   * (the object's own create and update canonicalize in prepareForCreate and prepareForUpdate).
   */
  canonicalizeStatusWrite?: (obj: Obj) => void;

  /** kube's PrepareForUpdate of the status strategy, beyond keeping the stored spec: `next` is the object to store. Default: none. */
  prepareForStatusUpdate?: (next: Obj, old: Obj) => void;

  /**
   * What kube's conversion of a decoded body (create, update, patched object) into its internal
   * object does in place, where it is more than a copy: returns the converter's error, which fails
   * the request as a decoding error. Default: none.
   */
  decodeConversion?: (obj: Obj) => string | undefined;

  /**
   * The grace period a DELETE grants (kube's CheckGracefulDelete), given the request's
   * `gracePeriodSeconds`: above 0 the object is marked and kept until the period ends or a kubelet
   * confirms. Default: 0, deleted at once unless finalizers hold it.
   */
  gracefulDeleteSeconds?: (obj: Obj, requested: number | undefined) => number;

  /**
   * For kinds whose deletion is always two-phase (namespaces, emptied by their controller): what
   * marking the object for deletion also changes. Default: none, and objects without finalizers go at once.
   */
  markTerminating?: (obj: Obj) => void;

  /** Whether DELETE answers with the deleted object rather than a Success Status. Default: a Status. */
  returnsDeletedObject?: boolean;
}
