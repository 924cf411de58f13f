import type { Obj } from '../api/object-util.js';
import type { User } from '../api/user.js';
import type { ResourceInfo } from '../catalog/resource-types.js';

/**
 * What an admission plugin knows of the request behind a write, beyond the object: who sent it, the
 * operation's options, and where warnings and audit annotations go. Writes made by the server itself
 * (controllers) have the loopback identity and drop warnings.
 */
export interface AdmissionRequest {
  user: User;
  /** The operation's options as kube hands them to webhooks (CreateOptions, UpdateOptions, DeleteOptions), or undefined. */
  options: Obj | undefined;
  /** Adds a `Warning` header to the response (each text once). */
  warn(message: string): void;
  /** Records an audit annotation of the request (the first value of a key wins, as in kube). */
  annotate(key: string, value: string): void;
}

/**
 * kube's admission reinvocation context: one request's mutating pass may ask for a second pass
 * (`shouldReinvoke`), run with `isReinvoke` set; plugins keep their own state under their name.
 */
export class ReinvocationContext {
  shouldReinvoke = false;
  isReinvoke = false;
  private readonly values = new Map<string, unknown>();

  value<T>(plugin: string, create: () => T): T {
    let v = this.values.get(plugin) as T | undefined;
    if (v === undefined) {
      v = create();
      this.values.set(plugin, v);
    }
    return v;
  }
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
  /** Set by `Admission.admit` for the mutating pass. */
  reinvocation?: ReinvocationContext;
}

/** An admission plugin: mutates `attrs.object` in place (mutating phase) or throws an ApiError. */
export interface AdmissionPlugin {
  readonly name: string;
  admit?(attrs: AdmissionAttributes): Promise<void>;
  validate?(attrs: AdmissionAttributes): Promise<void>;
}

/**
 * The admission chain. Writes call it as kube-apiserver does: every mutating plugin in order (`admit`),
 * then the object's own validation, then every validating plugin in order (`validate`); `run` does both
 * phases where there is no object to validate in between (deletes). As kube's reinvoker, when a plugin
 * asks for reinvocation (a webhook with `reinvocationPolicy: IfNeeded` saw a later change), the whole
 * mutating pass runs once more.
 */
export class Admission {
  constructor(private readonly plugins: AdmissionPlugin[]) {}

  async admit(attrs: AdmissionAttributes): Promise<void> {
    const reinvocation = new ReinvocationContext();
    attrs.reinvocation = reinvocation;
    for (const p of this.plugins) if (p.admit) await p.admit(attrs);
    if (!reinvocation.shouldReinvoke) return;
    reinvocation.isReinvoke = true;
    for (const p of this.plugins) if (p.admit) await p.admit(attrs);
  }

  async validate(attrs: AdmissionAttributes): Promise<void> {
    for (const p of this.plugins) if (p.validate) await p.validate(attrs);
  }

  async run(attrs: AdmissionAttributes): Promise<void> {
    await this.admit(attrs);
    await this.validate(attrs);
  }
}
