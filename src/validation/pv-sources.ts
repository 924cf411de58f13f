/**
 * kube 1.36's checks of a PersistentVolume's in-tree (cloud and legacy) volume sources: the required
 * fields of each, partition and LUN ranges, iSCSI qualified names, Fibre Channel targets, Azure disk
 * caching modes, kinds and URIs, and flex volume options outside the kubernetes.io and k8s.io
 * namespaces. Values kube defaults before validating (an Azure disk's kind Shared and caching mode
 * ReadWrite) also read as their defaults when absent.
 * Not checked yet: quobyte, photonPersistentDisk, portworxVolume, scaleIO, storageos and flocker fields.
 */
import type { StatusCause } from '../api/errors.js';
import { goJson, invalidField, notSupportedField, requiredField } from './field-errors.js';
import { isDNS1123Label } from './string-formats.js';
import { asArray, asNumber, asObject, asString, type Obj, objectOrUndefined } from '../api/values.js';
import { inclusiveRangeError } from './value-formats.js';

const IQN_RE = /iqn\.\d{4}-\d{2}\.([A-Za-z0-9\-.]+)(:[^,;*&$|\s]+)$/;
const EUI_RE = /^eui.[A-Za-z0-9]{16}$/;
const NAA_RE = /^naa.[A-Za-z0-9]{32}$/;
const CACHING_MODES = ['None', 'ReadOnly', 'ReadWrite'];
const DISK_KINDS = ['Dedicated', 'Managed', 'Shared'];

/** Whether an iSCSI qualified name has a known prefix and that prefix's shape. */
function iscsiNameProblem(name: string): string | undefined {
  if (!name.startsWith('iqn') && !name.startsWith('eui') && !name.startsWith('naa')) return 'must be valid format';
  if (name.startsWith('iqn') && !IQN_RE.test(name)) return 'must be valid format';
  if (name.startsWith('eui') && !EUI_RE.test(name)) return 'must be valid format';
  if (name.startsWith('naa') && !NAA_RE.test(name)) return 'must be valid format';
  return undefined;
}

function partitionCauses(source: Obj, at: string): StatusCause[] {
  const p = asNumber(source.partition);
  return p < 0 || p > 255 ? [invalidField(`${at}.partition`, p, inclusiveRangeError(1, 255))] : [];
}

function iscsiCauses(s: Obj, pvName: string, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const portal = asString(s.targetPortal);
  if (portal === '') causes.push(requiredField(`${at}.targetPortal`));
  if (typeof s.initiatorName === 'string' && Buffer.byteLength(`${pvName}:${portal}`) > 64) {
    causes.push(
      invalidField(
        `${at}.targetportal`,
        portal,
        'Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.',
      ),
    );
  }
  const iqn = asString(s.iqn);
  if (iqn === '') causes.push(requiredField(`${at}.iqn`));
  else {
    const problem = iscsiNameProblem(iqn);
    if (problem !== undefined) causes.push(invalidField(`${at}.iqn`, iqn, problem));
  }
  const lun = asNumber(s.lun);
  if (lun < 0 || lun > 255) causes.push(invalidField(`${at}.lun`, lun, inclusiveRangeError(0, 255)));
  const secretRef = objectOrUndefined(s.secretRef);
  if ((s.chapAuthDiscovery === true || s.chapAuthSession === true) && secretRef === undefined) causes.push(requiredField(`${at}.secretRef`));
  if (secretRef !== undefined && asString(secretRef.name) === '') causes.push(requiredField(`${at}.secretRef.name`));
  if (typeof s.initiatorName === 'string') {
    const initiator = s.initiatorName;
    const problem = iscsiNameProblem(initiator);
    if (problem !== undefined) causes.push(invalidField(`${at}.initiatorname`, initiator, problem));
  }
  return causes;
}

function fcCauses(s: Obj, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const wwns = asArray(s.targetWWNs);
  const wwids = asArray(s.wwids);
  if (wwns.length < 1 && wwids.length < 1) causes.push(requiredField(`${at}.targetWWNs`, 'must specify either targetWWNs or wwids, but not both'));
  if (wwns.length !== 0 && wwids.length !== 0)
    causes.push(invalidField(`${at}.targetWWNs`, goJson(wwns), 'targetWWNs and wwids can not be specified simultaneously'));
  if (wwns.length !== 0) {
    if (typeof s.lun !== 'number') causes.push(requiredField(`${at}.lun`, 'lun is required if targetWWNs is specified'));
    else if (s.lun < 0 || s.lun > 255) causes.push(invalidField(`${at}.lun`, s.lun, inclusiveRangeError(0, 255)));
  }
  return causes;
}

function azureDiskCauses(s: Obj, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (asString(s.diskName) === '') causes.push(requiredField(`${at}.diskName`));
  const uri = asString(s.diskURI);
  if (uri === '') causes.push(requiredField(`${at}.diskURI`));
  const caching = typeof s.cachingMode === 'string' ? s.cachingMode : 'ReadWrite';
  if (!CACHING_MODES.includes(caching)) causes.push(notSupportedField(`${at}.cachingMode`, caching, CACHING_MODES));
  const kind = typeof s.kind === 'string' ? s.kind : 'Shared';
  if (!DISK_KINDS.includes(kind)) causes.push(notSupportedField(`${at}.kind`, kind, DISK_KINDS));
  if (kind === 'Managed' && !uri.startsWith('/subscriptions/')) {
    causes.push(notSupportedField(`${at}.diskURI`, uri, ['/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}']));
  }
  if (kind !== 'Managed' && !uri.startsWith('https://')) {
    causes.push(notSupportedField(`${at}.diskURI`, uri, ['https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd']));
  }
  return causes;
}

function flexCauses(s: Obj, at: string): StatusCause[] {
  const causes: StatusCause[] = asString(s.driver) === '' ? [requiredField(`${at}.driver`)] : [];
  for (const key of Object.keys(asObject(s.options)).sort()) {
    const slash = key.indexOf('/');
    const namespace = `.${(slash >= 0 ? key.slice(0, slash) : key).toLowerCase()}`;
    if (namespace.endsWith('.kubernetes.io') || namespace.endsWith('.k8s.io')) {
      causes.push(invalidField(`${at}.options[${key}]`, key, 'kubernetes.io and k8s.io namespaces are reserved'));
    }
  }
  return causes;
}

const required = (s: Obj, at: string, ...keys: string[]): StatusCause[] =>
  keys.filter((k) => (Array.isArray(s[k]) ? (s[k] as unknown[]).length === 0 : asString(s[k]) === '')).map((k) => requiredField(`${at}.${k}`));

/** The checks of one in-tree PV source's own fields at `at` (the path kube reports them under). */
export function legacySourceCauses(key: string, s: Obj, pvName: string, at: string): StatusCause[] {
  switch (key) {
    case 'gcePersistentDisk':
      return [...required(s, at, 'pdName'), ...partitionCauses(s, at)];
    case 'awsElasticBlockStore':
      return [...required(s, at, 'volumeID'), ...partitionCauses(s, at)];
    case 'glusterfs': {
      const causes = required(s, at, 'endpoints', 'path');
      if (typeof s.endpointsNamespace === 'string') {
        const ns = s.endpointsNamespace;
        if (ns === '') causes.push(invalidField(`${at}.endpointsNamespace`, ns, 'if the endpointnamespace is set, it must be a valid namespace name'));
        else causes.push(...isDNS1123Label(ns).map((m) => invalidField(`${at}.endpointsNamespace`, ns, m)));
      }
      return causes;
    }
    case 'rbd':
      return required(s, at, 'monitors', 'image');
    case 'cephfs':
      return required(s, at, 'monitors');
    case 'iscsi':
      return iscsiCauses(s, pvName, at);
    case 'cinder': {
      const causes = required(s, at, 'volumeID');
      const ref = objectOrUndefined(s.secretRef);
      if (ref !== undefined) causes.push(...required(ref, `${at}.secretRef`, 'name', 'namespace'));
      return causes;
    }
    case 'fc':
      return fcCauses(s, at);
    case 'flexVolume':
      return flexCauses(s, at);
    case 'azureFile': {
      const causes = required(s, at, 'secretName', 'shareName');
      if (s.secretNamespace === '') causes.push(requiredField(`${at}.secretNamespace`));
      return causes;
    }
    case 'vsphereVolume':
      return required(s, at, 'volumePath');
    case 'azureDisk':
      return azureDiskCauses(s, at);
    default:
      return [];
  }
}
