import type { Obj } from '../api/object-util.js';
import type { User } from '../auth/user.js';
import type { ResourceInfo } from '../registry/resource-types.js';

/** Who sent a write and where its warnings go (absent for the server's own writes). */
export interface AdmissionRequestContext {
  user: User;
  /** Adds a `Warning` header to the response, as kube's warning recorder does. */
  warn(text: string): void;
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
  /** The client's identity and warning sink, when the write comes from a request. */
  request?: AdmissionRequestContext;
  /** Set by a reinvocable plugin that changed the object: the chain reinvokes such plugins once. */
  shouldReinvoke?: boolean;
  /** Audit annotations plugins add (`policy/key` → value), as kube's admission records them. */
  auditAnnotations?: Record<string, string>;
}

/** An admission plugin: mutates `attrs.object` in place (mutating phase) or throws an ApiError. */
export interface AdmissionPlugin {
  readonly name: string;
  admit?(attrs: AdmissionAttributes): Promise<void>;
  validate?(attrs: AdmissionAttributes): Promise<void>;
  /**
   * Called once more after the mutating phase when a plugin that offers reinvocation changed the
   * object and set `shouldReinvoke` (kube's reinvocation of MutatingAdmissionPolicy and
   * MutatingAdmissionWebhook).
   */
  reinvoke?(attrs: AdmissionAttributes): Promise<void>;
}

/**
 * The admission chain. Writes call it as kube-apiserver does: every mutating plugin in order (`admit`),
 * then the object's own validation, then every validating plugin in order (`validate`); `run` does both
 * phases where there is no object to validate in between (deletes).
 */
export class Admission {
  constructor(private readonly plugins: AdmissionPlugin[]) {}

  async admit(attrs: AdmissionAttributes): Promise<void> {
    for (const p of this.plugins) if (p.admit) await p.admit(attrs);
    if (attrs.shouldReinvoke === true) for (const p of this.plugins) if (p.reinvoke) await p.reinvoke(attrs);
  }

  async validate(attrs: AdmissionAttributes): Promise<void> {
    for (const p of this.plugins) if (p.validate) await p.validate(attrs);
  }

  async run(attrs: AdmissionAttributes): Promise<void> {
    await this.admit(attrs);
    await this.validate(attrs);
  }
}
