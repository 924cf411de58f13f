import type { ResourceInfo } from '../api/resource-info.js';
import { forbidden } from '../api/errors.js';
import type { Obj } from '../api/object-util.js';
import type { Storage } from '../storage/storage.js';
import { asString } from '../api/values.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admittedPod, podSpecOf } from './pod-admission-target.js';

const PRIORITY_CLASSES = 'priorityclasses.scheduling.k8s.io';

interface Priority {
  className: string;
  value: number;
  preemptionPolicy: string | undefined;
}

/**
 * kube's Priority plugin. A Pod created without a priority class gets the global default class (the
 * lowest-valued one if several claim it) or priority 0 with preemptionPolicy PreemptLowerPriority; a
 * named class must exist (403 otherwise) and gives its value and policy. A pod that states a priority
 * or policy different from its class's is refused; updates keep the stored values. PriorityClasses
 * themselves may not make a second global default.
 */
export class PriorityAdmission implements AdmissionPlugin {
  readonly name = 'Priority';

  constructor(private readonly storage: Storage) {}

  /** Classes parsed so far, by stored text: every pod created without a class reads them all. */
  private parsed = new Map<string, Obj>();

  private async classes(): Promise<Obj[]> {
    const list = await this.storage.list(PRIORITY_CLASSES);
    let unchanged = list.items.length === this.parsed.size;
    const classes = list.items.map((item) => {
      const known = this.parsed.get(item.json);
      if (known !== undefined) return known;
      unchanged = false;
      return JSON.parse(item.json) as Obj;
    });
    // Only the classes of this list are kept: a changed or deleted class's text goes.
    if (!unchanged) this.parsed = new Map(list.items.map((item, i) => [item.json, classes[i]]));
    return classes;
  }

  private async globalDefault(): Promise<Obj | undefined> {
    let found: Obj | undefined;
    for (const pc of await this.classes()) {
      if (pc.globalDefault === true && (found === undefined || Number(found.value) > Number(pc.value))) found = pc;
    }
    return found;
  }

  private async establish(a: AdmissionAttributes, className: string): Promise<Priority> {
    if (className === '') {
      const pc = await this.globalDefault();
      if (pc === undefined) return { className: '', value: 0, preemptionPolicy: 'PreemptLowerPriority' };
      return {
        className: asString((pc.metadata as Obj | undefined)?.name),
        value: Number(pc.value),
        preemptionPolicy: typeof pc.preemptionPolicy === 'string' ? pc.preemptionPolicy : undefined,
      };
    }
    const stored = await this.storage.get(PRIORITY_CLASSES, className);
    if (stored === undefined) throw forbidden({ group: '', resource: 'pods' }, a.name, `no PriorityClass with name ${className} was found`);
    const pc = JSON.parse(stored.json) as Obj;
    return { className, value: Number(pc.value), preemptionPolicy: typeof pc.preemptionPolicy === 'string' ? pc.preemptionPolicy : undefined };
  }

  /** Pods and priority classes only. */
  handles(_operation: AdmissionAttributes['operation'], info: ResourceInfo, subresource: string): boolean {
    return (
      subresource === '' && ((info.group === '' && info.resource === 'pods') || (info.group === 'scheduling.k8s.io' && info.resource === 'priorityclasses'))
    );
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    const pod = admittedPod(a);
    if (pod === undefined) return;
    const spec = podSpecOf(pod);
    if (a.operation === 'UPDATE') {
      const oldSpec = (a.oldObject?.spec ?? {}) as Obj;
      if (spec.priority === undefined && oldSpec.priority !== undefined) spec.priority = oldSpec.priority;
      if (spec.preemptionPolicy === undefined && oldSpec.preemptionPolicy !== undefined) spec.preemptionPolicy = oldSpec.preemptionPolicy;
      return;
    }
    if (a.operation !== 'CREATE') return;
    const p = await this.establish(a, asString(spec.priorityClassName));
    if (p.className === '') delete spec.priorityClassName;
    else spec.priorityClassName = p.className;
    if (typeof spec.priority === 'number' && spec.priority !== p.value) {
      throw forbidden(
        { group: '', resource: 'pods' },
        a.name,
        `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${p.value} from the given PriorityClass name`,
      );
    }
    spec.priority = p.value;
    if (p.preemptionPolicy !== undefined) {
      if (typeof spec.preemptionPolicy === 'string' && spec.preemptionPolicy !== p.preemptionPolicy) {
        throw forbidden(
          { group: '', resource: 'pods' },
          a.name,
          `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${p.preemptionPolicy} from the given PriorityClass name`,
        );
      }
      spec.preemptionPolicy = p.preemptionPolicy;
    }
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.info.group !== 'scheduling.k8s.io' || a.info.resource !== 'priorityclasses' || a.subresource !== '') return;
    if ((a.operation !== 'CREATE' && a.operation !== 'UPDATE') || a.object?.globalDefault !== true) return;
    const current = await this.globalDefault();
    const currentName = asString((current?.metadata as Obj | undefined)?.name);
    if (current !== undefined && (a.operation === 'CREATE' || currentName !== a.name)) {
      throw forbidden(
        { group: 'scheduling.k8s.io', resource: 'priorityclasses' },
        a.name,
        `PriorityClass ${currentName} is already marked as default. Only one default can exist`,
      );
    }
  }
}
