import { forbidden } from '../api/errors.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';

/** kube's AlwaysDeny plugin (off by default, for tests): every write is refused with 403. */
export class AlwaysDeny implements AdmissionPlugin {
  readonly name = 'AlwaysDeny';

  async admit(a: AdmissionAttributes): Promise<void> {
    throw forbidden({ group: a.info.group, resource: a.info.resource }, a.name, 'admission control is denying all modifications');
  }
}
