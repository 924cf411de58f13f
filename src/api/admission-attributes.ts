import type { Obj } from './object-util.js';
import type { ResourceInfo } from './resource-info.js';
import type { User } from './user.js';

/**
 * What an admission plugin knows of the request behind a write, beyond the object: who sent it, the
 * operation's options, and where warnings and audit annotations go. Writes made by the server itself
 * (controllers) have the loopback identity and drop warnings.
 */
export interface AdmissionRequest {
  user: User;
  /** The operation's options as kube hands them to webhooks (CreateOptions, UpdateOptions, DeleteOptions), or undefined. */
  options: Obj | undefined;
  /** Adds a `Warning` to the response (each text once). */
  warn(message: string): void;
  /** Records an audit annotation of the request (the first value of a key wins, as in kube). */
  annotate(key: string, value: string): void;
}

/**
 * kube's admission reinvocation state of one request's mutating pass: a plugin may ask for a second
 * pass (`shouldReinvoke`), which runs with `isReinvoke` set; plugins keep their own state under their name.
 */
export interface Reinvocation {
  shouldReinvoke: boolean;
  isReinvoke: boolean;
  value<T>(plugin: string, create: () => T): T;
}

/** What an admission plugin sees of a write. */
export interface AdmissionAttributes {
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  info: ResourceInfo;
  namespace: string;
  name: string;
  subresource: string;
  object: Obj | undefined;
  oldObject: Obj | undefined;
  dryRun: boolean;
  /** The request behind the write (undefined for writes the server makes itself). */
  request?: AdmissionRequest;
  /** Set by the admission chain for the mutating pass. */
  reinvocation?: Reinvocation;
}

/**
 * Admission as the store verbs receive it, from the handler (or controller) that calls them: the
 * store runs `admit` (mutating) before its own validation and `validate` after it, as kube's
 * registry runs the admission functions its handler passes in; `run` does both phases where there
 * is no object to validate in between (deletes, connects, action subresources). Each throws an
 * ApiError to refuse the write.
 */
export interface AdmissionHooks {
  admit(attrs: AdmissionAttributes): Promise<void>;
  validate(attrs: AdmissionAttributes): Promise<void>;
  run(attrs: AdmissionAttributes): Promise<void>;
}
