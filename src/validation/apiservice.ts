import type { StatusCause } from '../api/errors.js';
import { isObject, type Obj } from '../api/object-util.js';
import { invalidField, notSupportedField, requiredField } from './field-errors.js';
import { isDNS1035Label, isDNS1123Subdomain } from './string-formats.js';
import { asNumber, asString } from '../api/values.js';

/**
 * kube-aggregator's ValidateAPIService beyond metadata (the name rule, `VERSION.GROUP`, is checked with
 * the metadata): the group a DNS subdomain (empty only for the legacy `v1`), the version a DNS-1035
 * label, both priorities in range, a service reference with namespace, name and a valid port, and
 * the trust settings consistent (a local APIService has neither caBundle nor insecureSkipTLSVerify;
 * insecureSkipTLSVerify excludes a caBundle). Messages are kube's.
 */
export function validateApiServiceSpec(apiService: Obj): StatusCause[] {
  const spec = isObject(apiService.spec) ? apiService.spec : {};
  const causes: StatusCause[] = [];
  const group = asString(spec.group);
  const version = asString(spec.version);
  if (group === '' && version !== 'v1') causes.push(requiredField('spec.group', 'only v1 may have an empty group and it better be legacy kube'));
  if (group !== '') for (const msg of isDNS1123Subdomain(group)) causes.push(invalidField('spec.group', group, msg));
  for (const msg of isDNS1035Label(version)) causes.push(invalidField('spec.version', version, msg));
  const groupPriority = asNumber(spec.groupPriorityMinimum);
  if (groupPriority <= 0 || groupPriority > 20000)
    causes.push(invalidField('spec.groupPriorityMinimum', groupPriority, 'must be positive and less than 20000'));
  const versionPriority = asNumber(spec.versionPriority);
  if (versionPriority <= 0 || versionPriority > 1000) causes.push(invalidField('spec.versionPriority', versionPriority, 'must be positive and less than 1000'));
  const caBundleBytes = Buffer.from(asString(spec.caBundle), 'base64').length;
  const insecure = spec.insecureSkipTLSVerify === true;
  const service = isObject(spec.service) ? spec.service : undefined;
  if (service === undefined) {
    if (caBundleBytes > 0) causes.push(invalidField('spec.caBundle', `${caBundleBytes} bytes`, 'local APIServices may not have a caBundle'));
    if (insecure) causes.push(invalidField('spec.insecureSkipTLSVerify', true, 'local APIServices may not have insecureSkipTLSVerify'));
    return causes;
  }
  if (asString(service.namespace) === '') causes.push(requiredField('spec.service.namespace'));
  if (asString(service.name) === '') causes.push(requiredField('spec.service.name'));
  const port = asNumber(service.port);
  if (port < 1 || port > 65535) causes.push(invalidField('spec.service.port', port, 'port is not valid: must be between 1 and 65535, inclusive'));
  if (insecure && caBundleBytes > 0) causes.push(invalidField('spec.insecureSkipTLSVerify', true, 'may not be true if caBundle is present'));
  return causes;
}

/** kube's ValidateAPIServiceStatus: every condition's status is True, False or Unknown. */
export function validateApiServiceStatus(apiService: Obj): StatusCause[] {
  const status = isObject(apiService.status) ? apiService.status : {};
  const conditions = Array.isArray(status.conditions) ? status.conditions : [];
  const causes: StatusCause[] = [];
  conditions.forEach((c, i) => {
    const value = isObject(c) ? asString(c.status) : '';
    if (value !== 'True' && value !== 'False' && value !== 'Unknown')
      causes.push(notSupportedField(`status.conditions[${i}].status`, value, ['True', 'False', 'Unknown']));
  });
  return causes;
}
