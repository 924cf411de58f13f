import { isObject, type Obj } from '../../api/object-util.js';
import { validateConfigMap, validateSecret } from '../../validation/config-data.js';
import { defaultSecret } from '../defaults.js';
import type { KindStrategy } from '../kind-strategy.js';
import { configMapPrinter, secretPrinter } from '../printers/core.js';
import { secretFieldSelectors } from '../field-selectors.js';

/** ConfigMaps and Secrets: keys validated, `immutable` enforced, Secret types and their required keys (validation/config-data.ts). */

/**
 * What kube's v1 Secret conversion does to every written Secret: `stringData` entries overwrite `data`
 * (base64-encoded) and are never stored.
 */
function convertSecret(secret: Obj): void {
  const stringData = secret.stringData;
  if (isObject(stringData)) {
    const data = isObject(secret.data) ? secret.data : {};
    for (const [k, v] of Object.entries(stringData)) {
      if (typeof v === 'string') data[k] = Buffer.from(v, 'utf8').toString('base64');
    }
    if (Object.keys(data).length > 0) secret.data = data;
  }
  delete secret.stringData;
}

export const configMaps: KindStrategy = { printer: configMapPrinter, validate: validateConfigMap };

export const secrets: KindStrategy = {
  printer: secretPrinter,
  fieldSelectors: secretFieldSelectors,
  defaults: defaultSecret,
  validate: validateSecret,
  prepareForCreate: convertSecret,
  prepareForUpdate: (next) => convertSecret(next),
};

/** This file's kinds by `group/resource` (the core group is empty). */
export const CONFIG_KINDS: Readonly<Record<string, KindStrategy>> = {
  '/configmaps': configMaps,
  '/secrets': secrets,
};
