import type { ResourceInfo } from '../api/resource-info.js';
/**
 * kube's certificate admission plugins (plugin/pkg/admission/certificates): who may approve a
 * CertificateSigningRequest (CertificateApproval), who may write its certificate or conditions
 * through /status (CertificateSigning), and that no kube-apiserver-client CSR asks for
 * system:masters (CertificateSubjectRestriction). Permission on a signer is the verb on
 * `signers.certificates.k8s.io` named the signer, or its domain's wildcard `DOMAIN/*`. Refusals are
 * 403 with kube's messages.
 */
import { type ApiError, forbidden } from '../api/errors.js';
import { isObject, jsonEqual, metadataOf, stringField, type Obj } from '../api/object-util.js';
import type { Authorizer } from '../auth/authorizer.js';
import type { User } from '../api/user.js';
import { KUBE_APISERVER_CLIENT } from '../certificates/signer-names.js';
import { parseRequest } from '../certificates/signing-authority.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';

const GROUP = 'certificates.k8s.io';

function isCsr(a: AdmissionAttributes): boolean {
  return a.info.group === GROUP && a.info.resource === 'certificatesigningrequests';
}

function signerNameOf(csr: Obj | undefined): string {
  return csr !== undefined && isObject(csr.spec) ? stringField(csr.spec, 'signerName') : '';
}

/** kube's admission.NewForbidden: the request's name, else the object's name or generateName, else "Unknown". */
function refuse(a: AdmissionAttributes, detail: string): ApiError {
  let name = a.name;
  if (name === '') {
    const meta = a.object === undefined ? undefined : metadataOf(a.object);
    name = meta === undefined ? 'Unknown' : stringField(meta, 'name') || stringField(meta, 'generateName') || 'Unknown';
  }
  return forbidden({ group: a.info.group, resource: a.info.resource }, name, detail);
}

/** kube's certauthorization.IsAuthorizedForSignerName: `verb` on the signer, or on `DOMAIN/*`. */
export async function isAuthorizedForSigner(authorizer: Authorizer | undefined, user: User, verb: string, signerName: string): Promise<boolean> {
  if (authorizer === undefined) return true;
  const ask = async (name: string): Promise<boolean> =>
    (
      await authorizer.authorize({
        user,
        verb,
        resourceRequest: true,
        apiGroup: GROUP,
        apiVersion: '*',
        namespace: '',
        resource: 'signers',
        subresource: '',
        name,
        path: '',
      })
    ).allowed;
  return (await ask(signerName)) || (await ask(`${signerName.split('/')[0]}/*`));
}

/** CertificateApproval: an update of /approval needs `approve` on the CSR's signer. */
export class CertificateApproval implements AdmissionPlugin {
  readonly name = 'CertificateApproval';
  constructor(private readonly authorizer: Authorizer | undefined) {}

  /** Updates of a CSR's approval only. */
  handles(operation: AdmissionAttributes['operation'], info: ResourceInfo, subresource: string): boolean {
    return operation === 'UPDATE' && subresource === 'approval' && info.group === GROUP && info.resource === 'certificatesigningrequests';
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'UPDATE' || a.subresource !== 'approval' || !isCsr(a) || a.request === undefined) return;
    const signerName = signerNameOf(a.oldObject);
    if (!(await isAuthorizedForSigner(this.authorizer, a.request.user, 'approve', signerName)))
      throw refuse(a, `user not permitted to approve requests with signerName ${JSON.stringify(signerName)}`);
  }
}

/** CertificateSigning: an update of /status changing the certificate or conditions needs `sign` on the CSR's signer. */
export class CertificateSigning implements AdmissionPlugin {
  readonly name = 'CertificateSigning';
  constructor(private readonly authorizer: Authorizer | undefined) {}

  /** Updates of a CSR's status only. */
  handles(operation: AdmissionAttributes['operation'], info: ResourceInfo, subresource: string): boolean {
    return operation === 'UPDATE' && subresource === 'status' && info.group === GROUP && info.resource === 'certificatesigningrequests';
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'UPDATE' || a.subresource !== 'status' || !isCsr(a) || a.request === undefined) return;
    const oldStatus = isObject(a.oldObject?.status) ? a.oldObject.status : {};
    const newStatus = isObject(a.object?.status) ? a.object.status : {};
    const certificate = (s: Obj): unknown => (s.certificate === '' ? undefined : s.certificate);
    const conditions = (s: Obj): unknown => (Array.isArray(s.conditions) && s.conditions.length > 0 ? s.conditions : undefined);
    if (jsonEqual(certificate(oldStatus), certificate(newStatus)) && jsonEqual(conditions(oldStatus), conditions(newStatus))) return;
    const signerName = signerNameOf(a.oldObject);
    if (!(await isAuthorizedForSigner(this.authorizer, a.request.user, 'sign', signerName)))
      throw refuse(a, `user not permitted to sign requests with signerName ${JSON.stringify(signerName)}`);
  }
}

/** CertificateSubjectRestriction: a kubernetes.io/kube-apiserver-client CSR must not ask for group system:masters. */
export class CertificateSubjectRestriction implements AdmissionPlugin {
  readonly name = 'CertificateSubjectRestriction';

  /** CSR creates only. */
  handles(operation: AdmissionAttributes['operation'], info: ResourceInfo, subresource: string): boolean {
    return operation === 'CREATE' && subresource === '' && info.group === GROUP && info.resource === 'certificatesigningrequests';
  }

  validate(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' || a.subresource !== '' || !isCsr(a)) return Promise.resolve();
    if (signerNameOf(a.object) !== KUBE_APISERVER_CLIENT) return Promise.resolve();
    const spec = isObject(a.object?.spec) ? a.object.spec : {};
    let groups: string[];
    try {
      groups = parseRequest(stringField(spec, 'request')).subjectName.getField('O');
    } catch (err) {
      return Promise.reject(refuse(a, `failed to parse CSR: ${err instanceof Error ? err.message : String(err)}`));
    }
    if (groups.includes('system:masters')) return Promise.reject(refuse(a, `use of ${KUBE_APISERVER_CLIENT} signer with system:masters group is not allowed`));
    return Promise.resolve();
  }
}
