import type { AdmissionAttributes, AdmissionHooks, Reinvocation } from '../api/admission-attributes.js';
import type { ResourceInfo } from '../api/resource-info.js';

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
  /**
   * Whether the plugin can act on writes of this operation, resource and subresource, whatever the
   * object and the user (kube's `Handles`, by resource as well). The chain asks once per resource,
   * operation and subresource and does not call a plugin that cannot act. Absent: every write.
   */
  handles?(operation: AdmissionAttributes['operation'], info: ResourceInfo, subresource: string): boolean;
  admit?(attrs: AdmissionAttributes): Promise<void>;
  validate?(attrs: AdmissionAttributes): Promise<void>;
  /**
   * True while the plugin has nothing configured that could act on any write (no webhook
   * configurations, no bound policies) and a call would return at once: the chain then skips it.
   */
  idle?(): boolean;
}

/**
 * The admission chain. Writes call it as kube-apiserver does: every mutating plugin in order (`admit`),
 * then the object's own validation, then every validating plugin in order (`validate`); `run` does both
 * phases where there is no object to validate in between (deletes). As kube's reinvoker, when a plugin
 * asks for reinvocation (a webhook with `reinvocationPolicy: IfNeeded` saw a later change), the whole
 * mutating pass runs once more.
 */
export class Admission implements AdmissionHooks {
  /** Per resource, then operation and subresource: the plugins that handle such writes, in order. */
  private readonly byResource = new WeakMap<ResourceInfo, Map<string, PluginsForWrite>>();

  constructor(private readonly plugins: AdmissionPlugin[]) {}

  async admit(attrs: AdmissionAttributes): Promise<void> {
    const reinvocation = new ReinvocationContext();
    attrs.reinvocation = reinvocation;
    const { mutating } = this.pluginsFor(attrs);
    for (const p of mutating) if (p.idle?.() !== true) await p.admit!(attrs);
    if (!reinvocation.shouldReinvoke) return;
    reinvocation.isReinvoke = true;
    for (const p of mutating) if (p.idle?.() !== true) await p.admit!(attrs);
  }

  async validate(attrs: AdmissionAttributes): Promise<void> {
    for (const p of this.pluginsFor(attrs).validating) if (p.idle?.() !== true) await p.validate!(attrs);
  }

  async run(attrs: AdmissionAttributes): Promise<void> {
    await this.admit(attrs);
    await this.validate(attrs);
  }

  private pluginsFor(attrs: AdmissionAttributes): PluginsForWrite {
    let byWrite = this.byResource.get(attrs.info);
    if (byWrite === undefined) {
      byWrite = new Map();
      this.byResource.set(attrs.info, byWrite);
    }
    const key = attrs.subresource === '' ? attrs.operation : `${attrs.operation}/${attrs.subresource}`;
    let plugins = byWrite.get(key);
    if (plugins === undefined) {
      const handling = this.plugins.filter((p) => p.handles?.(attrs.operation, attrs.info, attrs.subresource) ?? true);
      plugins = { mutating: handling.filter((p) => p.admit !== undefined), validating: handling.filter((p) => p.validate !== undefined) };
      byWrite.set(key, plugins);
    }
    return plugins;
  }
}

/** The plugins of one kind of write, by phase. */
interface PluginsForWrite {
  readonly mutating: readonly AdmissionPlugin[];
  readonly validating: readonly AdmissionPlugin[];
}
