import type { AdmissionAttributes, AdmissionHooks, Reinvocation } from '../api/admission-attributes.js';

export type { AdmissionAttributes, AdmissionRequest } from '../api/admission-attributes.js';

/** One request's reinvocation state (see `Reinvocation`): plugins keep their own state under their name. */
export class ReinvocationContext implements Reinvocation {
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
export class Admission implements AdmissionHooks {
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
