import type { StatusCause } from '../api/errors.js';
import type { Obj } from '../api/object-util.js';
import type { User } from '../api/user.js';
import type { UpdateMetaPasses } from '../validation/object-meta.js';
import type { TablePrinter } from '../codec/table-printer.js';
import type { FieldSelectorSpec } from '../selectors/field-selector.js';
import type { AllocationTarget } from '../services/service-allocation.js';
import type { CustomResourceFacts } from '../catalog/custom-resource-facts.js';

/**
 * One kind's written contract, after kube-apiserver's registry strategies: what a create and an update
 * of the kind reset and keep, its defaults, its validation and immutable fields, and how its deletes
 * and status writes behave. Every entry is optional; what a kind leaves out is the generic behaviour
 * described on each field. Everything Capstan knows about a built-in kind beyond the generated API
 * facts (schema/) is reached from here: the store, the handlers' Table output, field selectors and
 * the field manager read a kind's facts from its strategy, never from tables of their own.
 */
export interface KindStrategy {
  /**
   * kube's defaulting (`SetDefaults_*`) for an object written in `version` of the resource. `facts`
   * are the serving catalogue's custom resource facts (custom resources default by their schema).
   * Default: none.
   */
  defaults?: (obj: Obj, version: string, facts: CustomResourceFacts) => void;

  /**
   * kube's validation of the kind, immutable fields included: `old` is undefined on create, and
   * `subresource` names the subresource written ('' for the object, 'status', ...). Default: only
   * object metadata is validated. `facts` as for `defaults`.
   */
  validate?: (obj: Obj, old: Obj | undefined, subresource: string, facts: CustomResourceFacts) => StatusCause[];

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
   * What of the metadata a status write may change: `'all'` all of it
   * but the system fields (uid, creationTimestamp, deletion, generation), as kube's status strategies
   * that reset only the spec; `'all-but-labels'` likewise but the labels stay (Deployments);
   * `'all-but-owner-references'` likewise but the owner references stay (Pods: old kubelets corrupted
   * them). Default: only the status changes.
   */
  statusUpdatesMetadata?: 'all' | 'all-but-labels' | 'all-but-owner-references';

  /**
   * kube's Canonicalize for a status write, which runs it after every update, subresources included
   * (the object's own create and update canonicalize in prepareForCreate and prepareForUpdate).
   */
  canonicalizeStatusWrite?: (obj: Obj) => void;

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

  /**
   * Whether a deleted object that an update leaves without `metadata.finalizers` is still held by
   * finalizers of the kind's own (namespaces: `spec.finalizers`, as kube's
   * ShouldDeleteNamespaceDuringUpdate), so it is written rather than removed. Default: not held.
   */
  heldAfterFinalizers?: (obj: Obj) => boolean;

  /** Whether DELETE answers with the deleted object rather than a Success Status. Default: a Status. */
  returnsDeletedObject?: boolean;

  /** Whether the kind's `spec.selector` is a plain label map (ReplicationControllers), shown as such in its Scale. Default: a LabelSelector. */
  scaleSelectorIsMap?: boolean;

  /** Where objects of the kind keep a pod template (workloads), as object keys. Default: none. */
  podTemplatePath?: readonly string[];

  /** kube's Table columns for the kind (its TableConvertor). Default: Name and Created At. */
  printer?: TablePrinter;

  /**
   * The field labels a field selector may use on the kind and the object's values for them (kube's
   * field label conversion and GetAttrs), in the served `version`. Default: metadata.name and, for
   * namespaced kinds, metadata.namespace.
   */
  fieldSelectors?: (version: string) => FieldSelectorSpec;

  /**
   * A field label (canonical) whose exact-match watches (`field=value`) storage hands only the
   * changes of objects with that value before or after, without calling the others (kube's Cacher
   * trigger: pods by spec.nodeName, which every kubelet watches). Default: none.
   */
  watchIndexField?: string;

  /**
   * Fields besides `spec` a write of the status subresource never records as owned (kube's status
   * strategy GetResetFields), as paths. Default: none beyond `spec`.
   */
  statusResetFields?: ReadonlyArray<readonly string[]>;

  /** kube's DefaultGarbageCollectionPolicy in the served `version`. Default: dependents are deleted. */
  garbageCollectionPolicy?: (version: string) => 'OrphanDependents' | 'Unsupported' | undefined;

  /**
   * What the kind's status writes change besides the status, run after the generic status rules
   * (a CSR's condition timestamps).
   */
  prepareForStatusUpdate?: (next: Obj, old: Obj) => void;

  /**
   * The kind's own status-like subresources (a CSR's `approval`): a write of one runs the status
   * rules, then this, which decides what of the request's `next` the prepared `result` keeps.
   */
  statusLikeSubresources?: Readonly<Record<string, (result: Obj, next: Obj, old: Obj) => void>>;

  /**
   * Subresources written as the object itself but taking only part of the request (a pod's
   * `resize`): what of `next` is kept, given the stored `old`. Default: all of it.
   */
  filterSubresourceWrite?: Readonly<Record<string, (next: Obj, old: Obj) => Obj>>;

  /**
   * Work a write of the kind does beside storing the object (a Service's cluster IP and node port
   * allocations, kube's BeginCreate/BeginUpdate and AfterDelete). Default: none.
   */
  storeHooks?: KindStoreHooks;
}

/** The bookkeeping around a kind's writes (see KindStrategy.storeHooks). */
export interface KindStoreHooks {
  /**
   * Runs `write` (the store's write of `obj`, created when `old` is undefined) inside the kind's own
   * bookkeeping: reserved before, given back when the write throws or stores nothing (undefined).
   */
  aroundWrite<T>(target: AllocationTarget, obj: Obj, old: Obj | undefined, dryRun: boolean, write: () => Promise<T>): Promise<T>;
  /** After the object was removed from storage; never throws. */
  afterDelete(target: AllocationTarget, removed: Obj): Promise<void>;
}
