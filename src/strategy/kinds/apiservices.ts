import { isObject, nowTimestamp, type Obj } from '../../api/object-util.js';
import { validateApiServiceSpec, validateApiServiceStatus } from '../../validation/apiservice.js';
import type { KindStrategy } from '../kind-strategy.js';
import { apiServicePrinter } from '../printers/control-plane.js';

/** kube's SetDefaults_ServiceReference: a service reference without port is port 443. */
function defaultApiService(obj: Obj): void {
  const spec = isObject(obj.spec) ? obj.spec : undefined;
  const service = spec !== undefined && isObject(spec.service) ? spec.service : undefined;
  if (service !== undefined && service.port === undefined) service.port = 443;
}

/**
 * APIServices (kube-aggregator's registry strategy): defaults, validation of the spec (on create and
 * update) or of the conditions (status writes), no generation; a created APIService starts with an
 * empty status, or with `Available` (reason `Local`) when it names no service, as kube marks local
 * APIServices available at once.
 */
export const apiServices: KindStrategy = {
  tracksGeneration: false,
  printer: apiServicePrinter,
  defaults: defaultApiService,
  validate: (obj, _old, subresource) => (subresource === 'status' ? validateApiServiceStatus(obj) : validateApiServiceSpec(obj)),
  createStatus: (obj) => {
    const spec = isObject(obj.spec) ? obj.spec : {};
    if (isObject(spec.service)) return {};
    return {
      conditions: [
        { type: 'Available', status: 'True', lastTransitionTime: nowTimestamp(), reason: 'Local', message: 'Local APIServices are always available' },
      ],
    };
  },
};
