import type { Obj } from '../api/object-util.js';
import { servedJsonForAsync } from '../conversion/converting-io.js';
import { toScale } from '../strategy/scale.js';
import type { GenericStore } from './generic-store.js';
import type { Getter, Updater, WriteRequestOptions } from './rest-verbs.js';
import type { ResourceTarget } from './server-context.js';
import type { ComputedUpdate, UpdateOutcome } from './update.js';

/**
 * The store of a scalable type's `scale` subresource (kube's ScaleREST): reads and writes the
 * autoscaling/v1 Scale view of objects through the type's own store. A custom resource's scale paths
 * are its request version's, so its objects are viewed in that version. Answers are Scale JSON.
 */
export class ScaleStore implements Getter, Updater {
  constructor(
    private readonly target: ResourceTarget,
    private readonly objects: GenericStore,
  ) {}

  async get(name: string, query: URLSearchParams): Promise<string> {
    return this.scaleJson(await this.objects.get(name, query));
  }

  /** `compute` gets the current Scale and, for managedFields, the object it views (in the request's version). */
  async update(
    compute: (current: Obj, object: Obj) => Promise<ComputedUpdate> | ComputedUpdate,
    onMissing: () => Promise<UpdateOutcome>,
    options: WriteRequestOptions,
  ): Promise<UpdateOutcome> {
    const outcome = await this.objects.update((object) => compute(toScale(this.target.info, object), object), onMissing, options);
    return { ...outcome, json: await this.scaleJson(outcome.json) };
  }

  private async scaleJson(json: string): Promise<string> {
    const { info, apiVersion } = this.target;
    const inVersion = info.custom === true ? await servedJsonForAsync(this.target.server.catalog.customResources, json, apiVersion, 'object') : json;
    return JSON.stringify(toScale(info, JSON.parse(inVersion) as Obj));
  }
}
