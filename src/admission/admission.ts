import type { Obj } from '../api/object-util.js';
import type { ResourceInfo } from '../registry/resource-types.js';

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
  /** Adds a warning to the response (a `Warning` header), as kube's `warning.AddWarning`. */
  warn?: (message: string) => void;
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
 * phases where there is no object to validate in between (deletes).
 */
export class Admission {
  constructor(private readonly plugins: AdmissionPlugin[]) {}

  async admit(attrs: AdmissionAttributes): Promise<void> {
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
