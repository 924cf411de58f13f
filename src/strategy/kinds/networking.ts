import { validateIngress } from '../../validation/ingress.js';
import { validateNetworkPolicy } from '../../validation/network-policy.js';
import { defaultNetworkPolicy } from '../defaults.js';
import type { KindStrategy } from '../kind-strategy.js';
import { ingressPrinter, ipAddressPrinter, networkPolicyPrinter, serviceCIDRPrinter } from '../printers/networking.js';

/** networking.k8s.io kinds. */

export const networkPolicies: KindStrategy = {
  printer: networkPolicyPrinter,
  defaults: defaultNetworkPolicy,
  validate: validateNetworkPolicy,
  tracksGeneration: true,
};
// kube's status strategy resets only the spec: a status write may change the metadata too.
export const ingresses: KindStrategy = { printer: ingressPrinter, validate: validateIngress, statusUpdatesMetadata: 'all' };
export const ipAddresses: KindStrategy = { printer: ipAddressPrinter };
export const serviceCIDRs: KindStrategy = { printer: serviceCIDRPrinter };

/** This file's kinds by `group/resource` (the core group is empty). */
export const NETWORKING_KINDS: Readonly<Record<string, KindStrategy>> = {
  'networking.k8s.io/networkpolicies': networkPolicies,
  'networking.k8s.io/ingresses': ingresses,
  'networking.k8s.io/ipaddresses': ipAddresses,
  'networking.k8s.io/servicecidrs': serviceCIDRs,
};
