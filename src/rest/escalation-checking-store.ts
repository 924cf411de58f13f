import type { Obj } from '../api/object-util.js';
import { GenericStore } from './generic-store.js';
import type { ResourceTarget } from './server-context.js';
import type { WriteRequestOptions } from './rest-verbs.js';
import type { ComputedUpdate, UpdateOutcome } from './update.js';
import { confirmNoEscalation, type RbacWrite } from '../auth/rbac/escalation-check.js';
import type { RuleResolver } from '../auth/rbac/rbac-policy.js';

/** Resources of the RBAC API whose writes are checked for escalation. */
export const RBAC_RESOURCES: readonly string[] = ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'];

/**
 * The store of Roles, ClusterRoles and their bindings (kube's policy-based storage): a generic store
 * whose creates and updates are first checked for privilege escalation (see confirmNoEscalation),
 * before validation and admission, as kube checks them. Dry-run writes are checked the same way.
 */
export class EscalationCheckingStore extends GenericStore {
  constructor(
    private readonly rbacTarget: ResourceTarget,
    private readonly resolver: RuleResolver,
  ) {
    super(rbacTarget);
  }

  private write(name: string): RbacWrite {
    const { ri, info, server, scope } = this.rbacTarget;
    return { user: scope.user, authorizer: server.authorizer, resolver: this.resolver, resource: info.resource, namespace: ri.namespace, name };
  }

  override async create(input: Obj, options: WriteRequestOptions): Promise<string> {
    const meta = input.metadata;
    const name = meta !== null && typeof meta === 'object' && 'name' in meta && typeof meta.name === 'string' ? meta.name : '';
    await confirmNoEscalation(this.write(name), input);
    return super.create(input, options);
  }

  override update(
    compute: (current: Obj, object: Obj) => Promise<ComputedUpdate> | ComputedUpdate,
    onMissing: () => Promise<UpdateOutcome>,
    options: WriteRequestOptions,
  ): Promise<UpdateOutcome> {
    return super.update(
      async (current, object) => {
        // compute may change its copy (a patch is applied in place): the check needs the object before.
        const before = structuredClone(current);
        const computed = await compute(current, object);
        await confirmNoEscalation(this.write(this.rbacTarget.ri.name), computed.next, before);
        return computed;
      },
      onMissing,
      options,
    );
  }
}
