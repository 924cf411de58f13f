import { isObject, jsonEqual, type Obj } from '../../api/object-util.js';
import { validateEndpointSlice } from '../../validation/endpoint-slice.js';
import { validateEndpoints } from '../../validation/endpoints.js';
import { validateService } from '../../validation/service.js';
import { defaultEndpointSlice, defaultEndpoints, defaultService } from '../defaults.js';
import type { KindStrategy } from '../kind-strategy.js';
import { endpointsPrinter, servicePrinter } from '../printers/core.js';
import { endpointSlicePrinter } from '../printers/networking.js';
import { serviceFieldSelectors } from '../field-selectors.js';
import { withServiceAllocation, releaseServiceAllocation } from '../../services/service-allocation.js';

/**
 * Services and their endpoints. Cluster IPs and node ports are allocated around the write by
 * src/services/service-allocation.ts (reserved atomically, released on delete and type change).
 */

/** A Service's cluster IPs and node ports are allocated as it is written and released when it goes. */
export const services: KindStrategy = {
  storeHooks: { aroundWrite: withServiceAllocation, afterDelete: releaseServiceAllocation },
  printer: servicePrinter,
  fieldSelectors: serviceFieldSelectors,
  defaults: defaultService,
  validate: validateService,
  // status is a load balancer's; a new Service has none yet. kube leaves generation unset.
  createStatus: () => ({ loadBalancer: {} }),
  tracksGeneration: false,
  returnsDeletedObject: true,
  // kube's status strategy resets only the spec: a status write may change the metadata too.
  statusUpdatesMetadata: 'all',
};

export const endpoints: KindStrategy = { printer: endpointsPrinter, defaults: defaultEndpoints, validate: validateEndpoints, createOnUpdate: true };

/**
 * kube drops an EndpointSlice's per-endpoint deprecatedTopology on discovery.k8s.io/v1 writes (the
 * only version served); a node name kept there by an older version is moved to nodeName only when
 * the stored slice had it, which no v1-written slice has.
 */
function dropDeprecatedTopology(slice: Obj): void {
  for (const endpoint of Array.isArray(slice.endpoints) ? slice.endpoints : []) {
    if (isObject(endpoint)) delete endpoint.deprecatedTopology;
  }
}

export const endpointSlices: KindStrategy = {
  printer: endpointSlicePrinter,
  defaults: defaultEndpointSlice,
  validate: validateEndpointSlice,
  tracksGeneration: true,
  // kube bumps a slice's generation when its labels change too.
  labelsCountAsSpec: true,
  prepareForCreate: dropDeprecatedTopology,
  // Writes drop deprecatedTopology, unless they leave the endpoints as they were.
  prepareForUpdate: (next, old) => {
    if (!jsonEqual(next.endpoints, old.endpoints)) dropDeprecatedTopology(next);
  },
};

/** This file's kinds by `group/resource` (the core group is empty). */
export const SERVICES_KINDS: Readonly<Record<string, KindStrategy>> = {
  '/services': services,
  '/endpoints': endpoints,
  'discovery.k8s.io/endpointslices': endpointSlices,
};
