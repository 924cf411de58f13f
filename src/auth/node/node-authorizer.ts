import type { AuthorizationAttributes, Authorizer, Decision, SubjectRules } from '../authorizer.js';
import { bootstrapPolicy } from '../rbac/bootstrap-policy.js';
import { ruleAllows, rulesOf, type PolicyRule } from '../rbac/policy-rule.js';
import { metadataOf, stringField } from '../../api/object-util.js';
import type { User } from '../../api/user.js';
import type { NodeGraph, NodeReachable } from './node-graph.js';
import { nodeNameOf } from './node-identity.js';

const ALLOW: Decision = { allowed: true, reason: '' };

function noOpinion(reason = ''): Decision {
  return { allowed: false, reason };
}

/** The namespace of node heartbeat Leases. */
const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** The rules kube's node authorizer grants every node outside its graph checks: the bootstrap `system:node` ClusterRole's. */
function nodeRules(): PolicyRule[] {
  const role = bootstrapPolicy().clusterRoles.find((r) => stringField(metadataOf(r), 'name') === 'system:node');
  return rulesOf(role);
}

/** Whether a list/watch asks only for objects whose `field` equals `value` (kube's AuthorizeNodeWithSelectors). */
function selectsField(a: AuthorizationAttributes, field: string, value: string): boolean {
  return (a.fieldSelector ?? []).some((r) => r.field === field && r.operator === '=' && r.value === value);
}

/**
 * kube's Node authorizer (`--authorization-mode=Node`), for users that are nodes (`system:node:NAME`
 * in `system:nodes`; see nodeNameOf): reads of secrets, config maps, claims, volumes, service
 * accounts' tokens and the like only where the node graph links the object to one of the node's
 * pods; its own Node, Lease and CSINode; pods by `spec.nodeName` selector; then the `system:node`
 * rules. Anything else is no opinion (with kube's reason), so later modes decide. Other users: no
 * opinion, no reason.
 */
export class NodeAuthorizer implements Authorizer {
  private readonly rules = nodeRules();

  constructor(private readonly graph: NodeGraph) {}

  async authorize(a: AuthorizationAttributes): Promise<Decision> {
    const node = nodeNameOf(a.user);
    if (node === undefined) return noOpinion();
    if (node === '') return noOpinion(`unknown node for user ${JSON.stringify(a.user.name)}`);
    if (a.resourceRequest) {
      const decision = await this.resourceDecision(node, a);
      if (decision !== undefined) return decision;
    }
    return this.rules.some((r) => ruleAllows(a, r)) ? ALLOW : noOpinion();
  }

  /** kube's node authorizer has no rules to list for a node (and says the list is incomplete). */
  async rulesFor(user: User): Promise<SubjectRules> {
    const isNode = nodeNameOf(user) !== undefined;
    return {
      resourceRules: [],
      nonResourceRules: [],
      incomplete: isNode,
      evaluationError: isNode ? 'node authorizer does not support user rule resolution' : '',
    };
  }

  /** The decision of a resource kube's node authorizer handles itself; undefined for the rest (the static rules decide). */
  private async resourceDecision(node: string, a: AuthorizationAttributes): Promise<Decision | undefined> {
    switch (`${a.apiGroup}/${a.resource}`) {
      case '/secrets':
        return this.readNamespaced(node, 'secret', a);
      case '/configmaps':
        return this.readNamespaced(node, 'configmap', a);
      case '/persistentvolumeclaims':
        return a.subresource === 'status' ? this.statusUpdate(node, 'pvc', a) : this.get(node, 'pvc', a);
      case '/persistentvolumes':
        return this.get(node, 'pv', a);
      case 'resource.k8s.io/resourceclaims':
        return this.get(node, 'resourceclaim', a);
      case 'storage.k8s.io/volumeattachments':
        return this.get(node, 'volumeattachment', a);
      case '/serviceaccounts':
        return this.serviceAccount(node, a);
      case 'coordination.k8s.io/leases':
        return lease(node, a);
      case 'storage.k8s.io/csinodes':
        return csiNode(node, a);
      case 'resource.k8s.io/resourceslices':
        return this.resourceSlice(node, a);
      case '/nodes':
        return nodeObject(node, a);
      case '/pods':
        return this.pod(node, a);
      case 'certificates.k8s.io/podcertificaterequests':
        return noOpinion();
      default:
        return undefined;
    }
  }

  private async statusUpdate(node: string, kind: NodeReachable, a: AuthorizationAttributes): Promise<Decision> {
    if (a.verb !== 'update' && a.verb !== 'patch') return noOpinion('can only get/update/patch this type');
    return this.related(node, kind, a);
  }

  private async get(node: string, kind: NodeReachable, a: AuthorizationAttributes): Promise<Decision> {
    if (a.verb !== 'get') return noOpinion('can only get individual resources of this type');
    if (a.subresource !== '') return noOpinion('cannot get subresource');
    return this.related(node, kind, a);
  }

  private async readNamespaced(node: string, kind: NodeReachable, a: AuthorizationAttributes): Promise<Decision> {
    if (a.verb !== 'get' && a.verb !== 'list' && a.verb !== 'watch') return noOpinion('can only read resources of this type');
    if (a.subresource !== '') return noOpinion('cannot read subresource');
    if (a.namespace === '') return noOpinion('can only read namespaced object of this type');
    return this.related(node, kind, a);
  }

  /** Allowed when the graph links the named object to the node. */
  private async related(node: string, kind: NodeReachable, a: AuthorizationAttributes): Promise<Decision> {
    if (a.name === '') return noOpinion('No Object name found');
    if (await this.graph.reaches(node, kind, a.namespace, a.name)) return ALLOW;
    return noOpinion(`no relationship found between node '${node}' and this object`);
  }

  private async serviceAccount(node: string, a: AuthorizationAttributes): Promise<Decision> {
    // kube 1.36 enables KubeletServiceAccountTokenForCredentialProviders by default: nodes may get
    // the service accounts of their pods.
    if (a.verb === 'get' && a.subresource === '') return this.readNamespaced(node, 'serviceaccount', a);
    if (a.verb !== 'create' || a.name === '') return noOpinion('can only create tokens for individual service accounts');
    if (a.subresource !== 'token') return noOpinion('can only create token subresource of serviceaccount');
    if (await this.graph.reaches(node, 'serviceaccount', a.namespace, a.name)) return ALLOW;
    return noOpinion(`no relationship found between node '${node}' and this object`);
  }

  private async resourceSlice(node: string, a: AuthorizationAttributes): Promise<Decision> {
    if (a.subresource !== '') return noOpinion('cannot authorize ResourceSlice subresources');
    switch (a.verb) {
      case 'create':
        return ALLOW;
      case 'get':
      case 'update':
      case 'patch':
      case 'delete':
        return this.related(node, 'resourceslice', a);
      case 'watch':
      case 'list':
      case 'deletecollection':
        if (selectsField(a, 'spec.nodeName', node)) return ALLOW;
        return noOpinion('can only list/watch/deletecollection resourceslices with nodeName field selector');
      default:
        return noOpinion('only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection');
    }
  }

  private async pod(node: string, a: AuthorizationAttributes): Promise<Decision> {
    if (a.subresource === '') {
      if (a.verb === 'get') return this.get(node, 'pod', a);
      if (a.verb === 'list' || a.verb === 'watch') {
        if (selectsField(a, 'spec.nodeName', node)) return ALLOW;
        if (a.name !== '') return this.related(node, 'pod', a);
        return noOpinion('can only list/watch pods with spec.nodeName field selector');
      }
      if (a.verb === 'create' || a.verb === 'delete') return ALLOW;
    } else if (a.subresource === 'status') {
      if (a.verb === 'update' || a.verb === 'patch') return ALLOW;
    } else if (a.subresource === 'eviction') {
      if (a.verb === 'create') return ALLOW;
    }
    return noOpinion();
  }
}

function lease(node: string, a: AuthorizationAttributes): Decision {
  if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) return noOpinion('can only get, create, update, patch, or delete a node lease');
  if (a.namespace !== NODE_LEASE_NAMESPACE) return noOpinion(`can only access leases in the ${JSON.stringify(NODE_LEASE_NAMESPACE)} system namespace`);
  if (a.verb !== 'create' && a.name !== node) return noOpinion('can only access node lease with the same name as the requesting node');
  return ALLOW;
}

function csiNode(node: string, a: AuthorizationAttributes): Decision {
  if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) return noOpinion('can only get, create, update, patch, or delete a CSINode');
  if (a.subresource !== '') return noOpinion('cannot authorize CSINode subresources');
  if (a.verb !== 'create' && a.name !== node) return noOpinion('can only access CSINode with the same name as the requesting node');
  return ALLOW;
}

function nodeObject(node: string, a: AuthorizationAttributes): Decision {
  if (a.subresource === '') {
    if (a.verb === 'create' || a.verb === 'update' || a.verb === 'patch') return ALLOW;
    if (a.verb === 'get' || a.verb === 'list' || a.verb === 'watch') {
      if (a.name === node) return ALLOW;
      if (a.name === '') return noOpinion(`node '${node}' cannot read all nodes, only its own Node object`);
      return noOpinion(`node '${node}' cannot read '${a.name}', only its own Node object`);
    }
  } else if (a.subresource === 'status' && (a.verb === 'update' || a.verb === 'patch')) return ALLOW;
  return noOpinion();
}
