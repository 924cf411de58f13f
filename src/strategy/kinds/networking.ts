import { validateIngress } from '../../validation/ingress.js';
import { validateIngressClass } from '../../validation/ingress-class.js';
import { validateNetworkPolicy } from '../../validation/network-policy.js';
import { defaultIngressClass, defaultNetworkPolicy } from '../defaults.js';
import type { KindStrategy } from '../kind-strategy.js';

/** networking.k8s.io kinds. */

export const networkPolicies: KindStrategy = { defaults: defaultNetworkPolicy, validate: validateNetworkPolicy, tracksGeneration: true };
export const ingresses: KindStrategy = { validate: validateIngress };
export const ingressClasses: KindStrategy = { defaults: defaultIngressClass, validate: validateIngressClass };
